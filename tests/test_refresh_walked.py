"""The refresh ahead with the folder walked by the command's process (vault/walked.py):
the walk crosses the pipe whole, the refresh beside does with it what a refresh here
does (an edit, a new note, a deleted one), it walks the folder itself when the walk
does not come, and a fresh command sees every change at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from studykb.launch import COMMANDS
from studykb.model import Problem
from studykb.runtime import pools
from studykb.session import Session
from studykb.vault import walked
from studykb.vault.scan import Scan
from test_refresh_ahead import NOTES, _comparable, _edit, _state, _studykb

pytestmark = pytest.mark.skipif(not pools.can_fork(), reason="needs fork")


@pytest.fixture(autouse=True)
def _forks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pools, "beside_helps", lambda: True)


def _built(make_vault: Callable[..., Path], name: str) -> Path:
    root = make_vault(NOTES, name=name)
    with Session.open(root) as kb:
        kb.refresh()
    return root


def test_a_walk_crosses_whole_and_anything_else_is_none() -> None:
    found = Scan(
        files={"notes/a.md": (1_796_419_010_472_976_115, 12), "notes/é x.md": (5, 0)},
        attachments={"img/a.png": "img/A.png"},
        attachment_names={"a.png": "img/A.png"},
        problems=[Problem("x.md", 0, "warning", "not-a-file", "a folder named like a note")],
        stale=["/v/.a.md.1.tmp"],
    )
    data = walked.encode(found, 42)
    assert walked.decode(data) == (found, 42)
    assert walked.decode(walked.encode(Scan(), 7)) == (Scan(), 7)
    for broken in (b"", data[:-1], data + b"x", b"\0" * 24, json.dumps({"a": 1}).encode()):
        assert walked.decode(broken) is None


def test_the_refresh_beside_does_with_the_walk_what_a_refresh_here_does(
    make_vault: Callable[..., Path],
) -> None:
    beside_root, here_root = _built(make_vault, "beside"), _built(make_vault, "here")
    _edit(beside_root)
    _edit(here_root)
    with Session.open(beside_root) as kb:
        ahead = kb.refresh_ahead(walk_here=True)
        assert ahead is not None
        beside = kb.refresh(ahead=ahead)
        again = kb.refresh()
    with Session.open(here_root) as kb:
        here = kb.refresh()
    assert _comparable(beside) == _comparable(here)
    assert beside.added == ["notes/new.md"] and beside.removed == ["notes/attention.md"]
    assert beside.modified == ["notes/gemm.md"]
    assert not again.changed
    assert _state(beside_root) == _state(here_root)


def test_the_walk_is_the_one_the_refresh_beside_reads(
    make_vault: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _built(make_vault, "v")
    _edit(root)
    real = walked.encode

    def without_new(found: Scan, scanned_ns: int) -> bytes:
        found.files.pop("notes/new.md")  # a walk that missed the new note
        return real(found, scanned_ns)

    monkeypatch.setattr(walked, "encode", without_new)
    with Session.open(root) as kb:
        stats = kb.refresh(ahead=kb.refresh_ahead(walk_here=True))
    assert stats.added == [] and stats.modified == ["notes/gemm.md"]


def test_without_the_walk_the_refresh_beside_walks_the_folder(
    make_vault: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _built(make_vault, "v")
    _edit(root)

    def failing(*_args: object) -> Scan:
        raise OSError("the walk here failed")

    monkeypatch.setattr(walked, "scan", failing)  # here only: the refresh has its own
    with Session.open(root) as kb:
        ahead = kb.refresh_ahead(walk_here=True)
        assert ahead is not None
        stats = kb.refresh(ahead=ahead)
    assert stats.added == ["notes/new.md"] and stats.removed == ["notes/attention.md"]
    assert stats.modified == ["notes/gemm.md"]


def test_a_fresh_command_sees_an_edit_a_new_note_and_a_deleted_one(
    make_vault: Callable[..., Path],
) -> None:
    root = _built(make_vault, "v")
    assert not COMMANDS["show"].busy and not COMMANDS["backlinks"].busy  # walked here
    assert COMMANDS["related"].busy and COMMANDS["search"].busy  # they have work meanwhile
    _edit(root)
    shown = _studykb("show", "new", "--json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["title"] == "New"
    gone = _studykb("show", "attention", "--json", cwd=root)
    assert gone.returncode != 0
    links = _studykb("backlinks", "softmax", "--json", cwd=root)
    assert links.returncode == 0, links.stderr
    assert [b["path"] for b in json.loads(links.stdout)["backlinks"]] == ["notes/gemm.md"]
