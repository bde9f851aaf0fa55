"""The related engine brought up to date after an edit is the engine made afresh.

After a small edit the engine's matrices are made again from the kept mention rows, with
only the edited documents' mentions read again (``Engine.updated``), and the name table
is kept with the text vectors, read again for the edited files only. Both must give
exactly what a full build from the same inputs gives: every matrix equal entry for
entry, in the same order.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from studykb.related import engine as engine_mod
from studykb.related.features import FEATURES
from studykb.related.mentions import Names
from studykb.related.vectorcache import VECTORS, name_table

WORDS = ["tensor", "kernel", "cache", "pipeline", "shard", "gradient", "batch", "fusion"]


def files(n: int = 240) -> dict[str, str]:
    """Notes that link, name each other's titles in plain text and share words."""
    out = {}
    for i in range(n):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(5))
        named = f"Topic {(i * 7) % n:03d}"
        out[f"notes/n{i:03d}.md"] = (
            f"---\ntags: [t{i % 9}]\n---\n# Topic {i:03d}\n\n"
            f"About {words}; see [[n{(i + 1) % n:03d}]] and {named}.\n"
        )
    return out


def same_engine(a: engine_mod.Engine, b: engine_mod.Engine) -> None:
    for name in engine_mod.MATRICES:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        for part in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(x, part), getattr(y, part)), (name, part)
    for name in ("posting", "tv_number"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def fresh(vault: object) -> engine_mod.Engine:
    return engine_mod.Engine(vault.derived(FEATURES), vault.derived(VECTORS).tv)  # type: ignore[attr-defined]


def test_an_updated_engine_is_the_one_made_afresh(
    make_vault: Callable, open_vault: Callable, monkeypatch
) -> None:
    root: Path = make_vault(files())
    vault = open_vault(root)
    engine_mod.for_vault(vault)
    made = vault.derived(VECTORS).tv.made
    full: list[int] = []
    real = engine_mod.Engine._build

    def counted(self: engine_mod.Engine) -> None:
        full.append(self.n)
        real(self)

    monkeypatch.setattr(engine_mod.Engine, "_build", counted)
    edits = {
        "notes/n003.md": "# Topic 003\n\nNow names Topic 100 and Topic 101, links [[n200]].\n",
        "notes/n050.md": "# Topic 050\n\nOnly shard words: shard shard kernel.\n",
        # the same links, tags and names, other words: the graph's matrices are kept
        "notes/n060.md": (
            "---\ntags: [t6]\n---\n# Topic 060\n\nFusion, see [[n061]] and Topic 182.\n"
        ),
    }
    for path, text in edits.items():
        (root / path).write_text(text, encoding="utf-8")
        vault.refresh()
        updated = engine_mod.for_vault(vault)
        assert vault.derived(VECTORS).tv.made == made  # the vectors were updated, not rebuilt
        assert full == []  # the engine too
        same_engine(updated, fresh(vault))
        full.clear()
        ix = vault.derived(FEATURES)
        i, j = ix.number["notes/n003.md"], ix.number["notes/n100.md"]
        assert updated.Mraw[i, j] > 0  # the new mention is in


def test_the_kept_name_table_is_the_one_read_afresh(
    make_vault: Callable, open_vault: Callable
) -> None:
    root: Path = make_vault(files())
    vault = open_vault(root)
    vectors = vault.derived(VECTORS)
    (root / "notes/n010.md").write_text("# Topic 010\n\nPlain words.\n", encoding="utf-8")
    (root / "notes/n011.md").unlink()
    vault.refresh()
    vectors = vault.derived(VECTORS)
    table = name_table(vault)
    assert vectors.names.of == table.of
    assert (vectors.names.names, vectors.names.owners) == (table.names, table.owners)
    assert vectors.names.digest == table.digest
    # a title changed: the table says so, the vectors are read again with the new names
    (root / "notes/n012.md").write_text("# Brand new name\n\nText.\n", encoding="utf-8")
    vault.refresh()
    vectors = vault.derived(VECTORS)
    assert vectors.names.digest == name_table(vault).digest == vectors.tv.names
    assert "brand new name" in vectors.names.names


def test_a_second_process_updates_the_kept_engine_as_the_first(
    make_vault: Callable, open_vault: Callable, monkeypatch
) -> None:
    root: Path = make_vault(files())
    first = open_vault(root)
    engine_mod.for_vault(first)
    first.close()
    real = engine_mod.Engine._build
    full: list[int] = []

    def counted(self: engine_mod.Engine) -> None:
        full.append(self.n)
        real(self)

    monkeypatch.setattr(engine_mod.Engine, "_build", counted)
    for n in range(3):
        (root / "notes/n020.md").write_text(
            f"# Topic 020\n\nEdit {n} names Topic 0{30 + n} and [[n04{n}]].\n", encoding="utf-8"
        )
        later = open_vault(root)
        updated = engine_mod.for_vault(later)
        assert full == []  # the kept engine, brought up to date
        same_engine(updated, fresh(later))
        full.clear()
        later.close()


def test_a_few_texts_find_the_names_the_automaton_finds() -> None:
    rng = random.Random(5)
    pieces = [
        "KV cache",
        "kv",
        "cache",
        "Paged attention",
        "attention",
        "page",
        "张量并行",
        "张量",
        "并行计算",
        "流水线",
        "Obsidian",
        "obsidian vault",
        "vault",
        "ß-Straße",
    ]
    rows = [(f"k{n}", f"id-{n}", title, []) for n, title in enumerate(pieces)]
    rows += [(f"alias{n}", f"x{n}", f"Other {n}", [pieces[n], pieces[-1 - n]]) for n in range(4)]
    many, few = Names(rows).for_many(), Names(rows)
    filler = [" ", "，", "在", "the ", "a", "中", "-", "\n", "KV", "Cache", "并行"]
    for _ in range(400):
        text = "".join(rng.choice(pieces + filler) for _ in range(rng.randint(0, 30)))
        for case in (text, text.upper(), text.title()):
            assert few.mentioned("k0", case) == many.mentioned("k0", case), case
    assert few.mentioned("k9", "See KV cache, then 张量并行。")
