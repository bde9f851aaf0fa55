"""The plan tables kept after an edit that leaves what they read alone, and made again
after one that does not (:mod:`studykb.study.plan_inputs`): either way they are the
tables made afresh from the state, and their stamp (what a static site's every page
shares) names their content and every card."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from studykb.session import Session
from studykb.study import needs, plans

EDITED = "notes/cs336-summary.md"
TOPIC = "notes/topics/kv-cache.md"


def _canonical(data: dict[str, Any]) -> dict[str, Any]:
    """The tables whatever the order of the documents (which an edit changes)."""
    return {
        "info": sorted(data["info"].items()),
        "edges": sorted(map(tuple, data["edges"])),
        "known": sorted(data["known"]),
        "covers": sorted((k, sorted(v)) for k, v in data["covers"].items()),
        "tagged": sorted((k, sorted(v)) for k, v in data["tagged"].items()),
        "taught": sorted((k, sorted(v)) for k, v in data["taught"].items()),
        "list_pos": sorted(data["list_pos"].items()),
        "files": data["files"],
        "stamp": data["stamp"],
    }


def _tables(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], int, str]:
    """The tables a fresh process gets (from the cache, brought up to date), whether they
    were made (1) or kept (0), and their stamp; checked against tables made afresh."""
    made: list[int] = []
    real = needs.compute

    def counted(vault: Any) -> dict[str, Any]:
        made.append(1)
        return real(vault)

    monkeypatch.setattr(plans, "compute", counted)
    kb = Session.open(root)
    kb.refresh()
    stamp = kb.plan_stamp()
    value = kb.vault.derived(plans.TABLES).data
    assert _canonical(value) == _canonical(real(kb.vault))
    kb.close()
    return value, len(made), stamp


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")


def test_tables_kept_after_a_body_edit_made_after_a_plan_edit(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    first, made, stamp = _tables(root, monkeypatch)
    assert made == 1 and first["files"][EDITED]
    note, topic = root / EDITED, root / TOPIC

    _append(note, "\nA new line on [[kv-cache-serving-digest]] and plain words.\n")
    _value, made, again = _tables(root, monkeypatch)
    assert (made, again) == (0, stamp)  # words and a link to a note: kept, same stamp

    _append(note, "\nIt builds on [[continuous-batching]].\n")  # a link to a topic
    _value, made, linked = _tables(root, monkeypatch)
    assert made == 1  # made again (the stamp stays when no need changed)

    text = topic.read_text(encoding="utf-8")
    topic.write_text(text.replace("level: 3", "level: 4", 1), encoding="utf-8")
    _value, made, changed = _tables(root, monkeypatch)
    assert made == 1 and changed != linked  # a card: made again, another stamp

    topic.write_text(text, encoding="utf-8")  # back as it was
    _value, made, back = _tables(root, monkeypatch)
    assert made == 1 and back == linked  # the same cards and tables: the same name

    (root / "notes/new-one.md").write_text("---\nrequires: [kv-cache]\n---\n# New\n")
    _value, made, new = _tables(root, monkeypatch)
    assert made == 1 and new != back  # a new document
