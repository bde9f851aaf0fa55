"""The walkthrough of adding a derived structure (``docs/design/architecture.md``) is code
that runs: its module, taken from the page as written, is built, kept in the cache,
updated from an edit and equal to a fresh build."""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES

PAGE = Path(__file__).resolve().parent.parent / "docs" / "design" / "architecture.md"


def _example() -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("### Adding a derived structure") :]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "the walkthrough has no Python block"
    return found.group(1)


@pytest.fixture
def lengths(tmp_path: Path) -> Iterator[Any]:
    """The walkthrough's module, written where its ``made_by`` says (a folder added to
    its package's path, so its code version is read from the file like any module's)."""
    source = _example()
    name = re.search(r'made_by = \("([\w.]+)",\)', source)
    assert name, "the example declares the module it is made by"
    package, _, leaf = name.group(1).rpartition(".")
    folder = tmp_path / "walkthrough"
    folder.mkdir()
    (folder / f"{leaf}.py").write_text(source, encoding="utf-8")
    parent = importlib.import_module(package)
    parent.__path__.append(str(folder))
    try:
        yield importlib.import_module(name.group(1)).LENGTHS
    finally:
        parent.__path__.remove(str(folder))
        sys.modules.pop(name.group(1), None)


def test_the_walkthrough_structure_builds_and_updates(tmp_path: Path, lengths: Any) -> None:
    from studykb.vault import Vault

    root = tmp_path / "vault"
    shutil.copytree(FIXTURES / "search_vault", root)
    v = Vault.open(root)
    try:
        v.refresh()
        first = dict(v.derived(lengths))
        assert first and all(isinstance(n, int) for n in first.values())
        note = sorted(first)[0]
        (root / note).write_text(
            (root / note).read_text(encoding="utf-8") + "\nfour more words here\n",
            encoding="utf-8",
        )
        v.refresh()
        updated = dict(v.derived(lengths))
    finally:
        v.close()
    assert updated[note] == first[note] + 4
    again = Vault.open(root)  # a new process's view: from the cache, then a fresh build
    try:
        again.refresh()
        assert dict(again.derived(lengths)) == updated
        assert lengths.build(again) == updated
    finally:
        again.close()
