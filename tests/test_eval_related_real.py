"""benchmarks/eval_related_real.py hides a sampled note's links as their words, in the
order the vault writes a wikilink's label: ``[[target|label]]`` (Obsidian) or
``[[label|target]]`` (Dendron), so the figures of a Dendron vault do not leave each
hidden note's id in its text."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def ev() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import eval_related_real
    finally:
        sys.path.remove(str(BENCH))
    yield eval_related_real


def test_plain_keeps_the_label_in_either_order(ev: ModuleType) -> None:
    text = "see [[b.topic|Bee]] and [[c.topic]] and [Dee](d.md) and ![x](e.png)"
    assert ev.plain(text) == "see Bee and c.topic and Dee and ![x](e.png)"
    dendron = "see [[Bee|b.topic]], [[Sea|dendron://site/c.topic#part]] and [[d.topic]]"
    assert ev.plain(dendron, label_first=True) == "see Bee, Sea and d.topic"


def test_a_dendron_vault_hides_label_first_links_as_their_labels(
    ev: ModuleType, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "vault").mkdir(parents=True)
    (site / "dendron.yml").write_text(
        "version: 5\nworkspace:\n  vaults:\n    - fsPath: vault\n      name: v\n",
        encoding="utf-8",
    )
    (site / "vault" / "a.md").write_text(
        "---\ntitle: Aye\n---\nRead [[the bee page|b]] first.\n", encoding="utf-8"
    )
    (site / "vault" / "b.md").write_text("---\ntitle: Bee\n---\nBees.\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    c = ev.prepare(site, work, 40)
    try:
        assert c.sample == ["vault/a.md"]
        assert c.truth == {"vault/a.md": {"vault/b.md"}}
        hidden = (c.copy / "vault" / "a.md").read_text(encoding="utf-8")
        assert "Read the bee page first." in hidden and "[[" not in hidden
    finally:
        c.kb.close()
