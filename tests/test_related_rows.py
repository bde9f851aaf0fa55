"""One document ranked from the rows of the engine's inputs (``studykb.related.row_scores``)
gives exactly what the engine gives: every component of every row bit for bit, and the
same lists with the same reasons, before and after edits of the text, the links and the
front matter."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES
from studykb.related.engine import for_vault
from studykb.related.features import FEATURES
from studykb.related.rank import Ranker, RelatedOptions
from studykb.related.row_scores import RowEngine
from studykb.related.vectorcache import VECTORS

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"

OPTIONS = [
    RelatedOptions(),
    RelatedOptions(limit=3, types=("note",)),
    RelatedOptions(limit=40, types=("note", "entry", "topic", "unit", "course")),
    RelatedOptions(limit=5, diversity=0.3),
    RelatedOptions(limit=8, text="none"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A synthetic vault (benchmarks/gen_vault.py): links, prerequisites, topics, courses,
    mentions and Chinese text in every proportion the benchmarks have."""
    sys.path.insert(0, str(BENCH))
    try:
        from gen_vault import generate
    finally:
        sys.path.remove(str(BENCH))
    folder = tmp_path_factory.mktemp("rows") / "vault"
    generate(str(folder), 400, seed=5)
    yield folder


def _both(vault: object) -> tuple[Ranker, Ranker]:
    """(over the engine, over the rows of its inputs), for the vault as it is now."""
    engine = for_vault(vault)  # type: ignore[arg-type]
    rows = RowEngine(vault.derived(FEATURES), vault.derived(VECTORS).tv)  # type: ignore[attr-defined]
    return Ranker(engine), Ranker(rows)


def _same_components(whole: Ranker, one: Ranker) -> int:
    """Rows compared; fails at the first component that differs in any bit."""
    n = len(whole.ix.keys)
    rows = np.arange(n, dtype=np.int64)
    compared = 0
    for start in range(0, n, 97):
        block = rows[start : start + 97]
        mine, theirs = one.engine.entries(block), whole.engine.entries(block)
        assert set(mine) == set(theirs)
        for name, (r, c, v) in theirs.items():
            r2, c2, v2 = mine[name]
            a, b = np.lexsort((c, r)), np.lexsort((c2, r2))
            assert np.array_equal(r[a], r2[b]) and np.array_equal(c[a], c2[b]), name
            assert v[a].tobytes() == v2[b].tobytes(), name  # bit for bit
        compared += len(block)
    return compared


def _same_lists(whole: Ranker, one: Ranker, keys: list[str]) -> int:
    compared = 0
    for options in OPTIONS:
        theirs = whole.related_many(keys, options)
        for key in keys:
            assert one.related(key, options) == theirs[key], (key, options)
            compared += 1
    return compared


def _check(vault: object) -> None:
    whole, one = _both(vault)
    keys = list(whole.ix.keys)
    assert _same_components(whole, one) == len(keys)
    assert _same_lists(whole, one, keys) == len(keys) * len(OPTIONS)
    assert any(r.reasons for found in whole.related_many(keys, OPTIONS[0]).values() for r in found)


@pytest.mark.parametrize("name", ["related_vault", "bundled"])
def test_every_row_and_list_is_the_engines(
    name: str, tmp_path: Path, open_vault: Callable, request: pytest.FixtureRequest
) -> None:
    if name == "bundled":
        root = request.getfixturevalue("bundled")
    else:
        root = tmp_path / name
        shutil.copytree(FIXTURES / name, root)
    _check(open_vault(root))


def test_the_engines_numbers_before_and_after_edits(
    generated: Path, tmp_path: Path, open_vault: Callable
) -> None:
    root = tmp_path / "vault"
    shutil.copytree(generated, root)
    _check(open_vault(root))
    notes = sorted((root / "notes").rglob("n0*.md"))
    assert len(notes) >= 3
    with notes[0].open("a", encoding="utf-8") as fh:  # a link and words
        fh.write("\nEdited with [[entry-00001]] and paged attention kernels.\n")
    with notes[1].open("a", encoding="utf-8") as fh:  # Chinese words
        fh.write("\n显存管理与投机解码的调度。\n")
    text = notes[2].read_text(encoding="utf-8")
    notes[2].write_text(text.replace("tags: [", "tags: [edited-tag, ", 1), encoding="utf-8")
    _check(open_vault(root))


def test_related_and_the_sidebar_give_the_same_list_after_an_edit(
    generated: Path, tmp_path: Path, run: Callable
) -> None:
    """``related ID`` (the rows) and ``sidebar ID`` (the engine), in fresh sessions."""
    root = tmp_path / "vault"
    shutil.copytree(generated, root)
    keys = ["n00001", "n00002", "entry-00001", "c0000"]

    def lists() -> list[list[dict[str, object]]]:
        out = []
        for key in keys:
            one = run("related", key, "--json", "--limit", "12", vault=root)
            side = run("sidebar", key, "--format", "json", "--limit", "12", vault=root)
            assert one.exit_code in (0, 1) and side.exit_code == 0, (one.output, side.output)
            mine = json.loads(one.stdout)["related"]
            theirs = [
                {k: v for k, v in r.items() if k != "href"}
                for r in json.loads(side.stdout)["related"]
            ]
            assert mine == theirs, key
            out.append(mine)
        return out

    before = [r["id"] for r in lists()[0]]
    assert before
    target = next(f"entry-{k:05d}" for k in range(2, 99) if f"entry-{k:05d}" not in before)
    note = next((root / "notes").rglob("n00001.md"))
    text = note.read_text(encoding="utf-8")
    assert "related:\n" in text
    text = text.replace("related:\n", f'related:\n  - "{target}"\n', 1)
    note.write_text(text + f"\nA line with [[{target}]] in it.\n", encoding="utf-8")
    assert [r["id"] for r in lists()[0]][0] == target  # hand-picked now, in both
