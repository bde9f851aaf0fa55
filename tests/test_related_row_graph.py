"""The graph's rows of one document's ranking kept in the cache
(``studykb.related.row_graph``): read back byte for byte, taken after an edit of the text
without being made again, made again when the graph or the paths change, and never
taken from an entry that is not one."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from studykb.related import rank, row_graph
from studykb.related.features import FEATURES
from studykb.related.rank import Ranker, RelatedOptions
from studykb.related.row_graph import ROW_GRAPH, KeptGraph, from_data, paths_digest, to_data
from studykb.related.row_scores import RowEngine, RowGraph, _Groups, _Rows
from studykb.related.vectorcache import VECTORS
from studykb.vault.cache import pack, unpack
from studykb.vault.derived import Change

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    sys.path.insert(0, str(BENCH))
    try:
        from gen_vault import generate
    finally:
        sys.path.remove(str(BENCH))
    folder = tmp_path_factory.mktemp("graph") / "vault"
    generate(str(folder), 300, seed=7)
    yield folder


def _flat(graph: RowGraph) -> dict[str, tuple[str, bytes]]:
    """Every array of ``graph`` by where it is: (dtype, bytes)."""
    out: dict[str, tuple[str, bytes]] = {}

    def put(name: str, value: Any) -> None:
        if isinstance(value, _Rows):
            for part in ("indptr", "indices", "data"):
                put(f"{name}.{part}", getattr(value, part))
        elif isinstance(value, _Groups):
            for part in ("rows", "members", "weight"):
                put(f"{name}.{part}", getattr(value, part))
        else:
            assert isinstance(value, np.ndarray), name
            out[name] = (value.dtype.str, value.tobytes())

    for name in RowGraph.PARTS:
        put(name, getattr(graph, name))
    assert set(vars(graph)) == set(RowGraph.PARTS)
    return out


def _made(vault: Any) -> RowGraph:
    ix = vault.derived(FEATURES)
    return RowGraph(ix, len(ix.keys))


def _lists(vault: Any, graph: RowGraph | None) -> dict[str, list[Any]]:
    ix, tv = vault.derived(FEATURES), vault.derived(VECTORS).tv
    ranker = Ranker(RowEngine(ix, tv, graph))
    return ranker.related_many(list(ix.keys), RelatedOptions(limit=12))


def _copy(generated: Path, tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(generated, root)
    return root


def test_a_kept_graph_reads_back_byte_for_byte(
    generated: Path, tmp_path: Path, open_vault: Callable
) -> None:
    vault = open_vault(_copy(generated, tmp_path))
    made = _made(vault)
    ix = vault.derived(FEATURES)
    kept = from_data(unpack(pack(to_data(KeptGraph(made, paths_digest(ix))))))
    assert kept.paths == paths_digest(ix)
    assert _flat(kept.graph) == _flat(made)
    assert len(_flat(made)) > 40


def test_related_after_an_edit_of_the_text_takes_the_kept_graph(
    generated: Path, tmp_path: Path, open_vault: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy(generated, tmp_path)
    first = open_vault(root)
    kept = _flat(first.derived(ROW_GRAPH).graph)  # made and written
    note = next((root / "notes").rglob("n00003.md"))
    with note.open("a", encoding="utf-8") as fh:
        fh.write("\nMore words on paged attention kernels and 显存管理.\n")
    vault = open_vault(root)
    expected = _lists(vault, _made(vault))

    def not_made(*_args: object) -> None:
        raise AssertionError("the graph's rows were made again after an edit of the text")

    monkeypatch.setattr(RowGraph, "__init__", not_made)
    doc = vault.document(next(iter(vault.derived(FEATURES).keys)))
    assert rank.related(vault, doc, RelatedOptions(limit=12)) == expected[doc.key]
    taken = vault.derived(ROW_GRAPH).graph
    assert _flat(taken) == kept
    assert _lists(vault, taken) == expected


def test_an_edit_of_the_links_makes_the_graph_again(
    generated: Path, tmp_path: Path, open_vault: Callable
) -> None:
    root = _copy(generated, tmp_path)
    before = _flat(open_vault(root).derived(ROW_GRAPH).graph)
    note = next((root / "notes").rglob("n00003.md"))
    with note.open("a", encoding="utf-8") as fh:
        fh.write("\nSee [[n00007]] and [[entry-00002]].\n")
    vault = open_vault(root)
    now = vault.derived(ROW_GRAPH).graph
    assert _flat(now) == _flat(_made(vault)) != before
    assert _lists(vault, now) == _lists(vault, None)


def test_a_graph_of_other_paths_is_not_kept(
    generated: Path, tmp_path: Path, open_vault: Callable
) -> None:
    vault = open_vault(_copy(generated, tmp_path))
    kept = vault.derived(ROW_GRAPH)
    same = Change(frozenset({"notes/x.md"}), frozenset())
    assert ROW_GRAPH.update(kept, same, vault) is kept
    assert ROW_GRAPH.update(kept, Change(frozenset(), frozenset({FEATURES.name})), vault) is None
    other = KeptGraph(kept.graph, "another digest")
    assert ROW_GRAPH.update(other, same, vault) is None


def test_an_entry_that_is_not_a_kept_graph_is_refused(
    generated: Path, tmp_path: Path, open_vault: Callable
) -> None:
    vault = open_vault(_copy(generated, tmp_path))
    good = to_data(vault.derived(ROW_GRAPH))
    from_data(good)
    kind, (dtype, raw) = good["graph"]["course"]
    for bad in (
        {**good, "graph": {**good["graph"], "course": [kind, ["|O", raw]]}},  # objects
        {**good, "graph": {**good["graph"], "course": [kind, [dtype, "text"]]}},
        {**good, "graph": {k: v for k, v in good["graph"].items() if k != "L"}},
        {**good, "graph": {**good["graph"], "L": ["rows", good["graph"]["LT"][1][:1] * 3]}},
    ):
        with pytest.raises((ValueError, TypeError)):
            from_data(bad)
    assert {"<i8", "<f8"} == row_graph.DTYPES


def test_a_build_keeps_the_graph_for_the_first_related(
    generated: Path, tmp_path: Path, run: Callable, open_vault: Callable
) -> None:
    root = _copy(generated, tmp_path)
    assert run("build", vault=root).exit_code == 0
    vault = open_vault(root, refresh=False)
    assert vault.structures.kept(ROW_GRAPH)
