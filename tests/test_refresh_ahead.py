"""A refresh started ahead, beside the process (Session.refresh_ahead): it does
what a refresh here does, gives way to one here when it should, and the command line
starts it before click loads without changing what any command says."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import studykb.vault as vault_module
import studykb.vault.refresh as refresh_module
from studykb.runtime import pools
from studykb.session import Session

pytestmark = pytest.mark.skipif(not pools.can_fork(), reason="needs fork")

NOTES = {
    "notes/attention.md": "---\ntitle: Attention\nrequires: [softmax]\n---\n\nSee [[softmax]].\n",
    "notes/softmax.md": "---\ntitle: Softmax\n---\n\nThe online softmax.\n",
    "notes/gemm.md": "---\ntitle: GEMM\n---\n\nTiles and [[missing-note]].\n",
}


@pytest.fixture(autouse=True)
def _forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork here whatever threads other tests left running, on any number of cores."""
    monkeypatch.setattr(pools, "beside_helps", lambda: True)


@pytest.fixture
def built(make_vault: Callable[..., Path]) -> Iterator[Path]:
    root = make_vault(NOTES)
    with Session.open(root) as kb:
        kb.refresh()
    yield root


def _edit(root: Path) -> None:
    with open(root / "notes/gemm.md", "a", encoding="utf-8") as fh:
        fh.write("\nNow also [[softmax]].\n")
    (root / "notes/new.md").write_text("---\ntitle: New\n---\n\nA new note.\n", encoding="utf-8")
    (root / "notes/attention.md").unlink()


def _comparable(stats: object) -> dict[str, object]:
    out = dataclasses.asdict(stats)  # type: ignore[call-overload]
    out.pop("seconds")
    return out


def _state(root: Path) -> dict[str, list[tuple[object, ...]]]:
    import sqlite3

    db = sqlite3.connect(root / ".studykb" / "state.sqlite")
    try:
        return {
            "files": sorted(db.execute("SELECT path, size, hash FROM files")),
            "docs": sorted(db.execute("SELECT key, path, title, data FROM docs")),
            "refs": sorted(db.execute("SELECT source, line, text, target_key, state FROM refs")),
            "problems": sorted(db.execute("SELECT path, line, code, message FROM problems")),
        }
    finally:
        db.close()


def test_a_refresh_ahead_does_what_a_refresh_here_does(built: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"  # its own state: a copied one would not be trusted
    shutil.copytree(built, twin, ignore=shutil.ignore_patterns(".studykb"))
    with Session.open(twin) as kb:
        kb.refresh()
    _edit(built)
    _edit(twin)
    with Session.open(built) as kb:
        ahead = kb.refresh_ahead()
        assert ahead is not None
        beside = kb.refresh(ahead=ahead)
        again = kb.refresh()  # nothing left to do: the state is current
        title = kb.find("new").title
    with Session.open(twin) as kb:
        here = kb.refresh()
    assert _comparable(beside) == _comparable(here)
    assert beside.added == ["notes/new.md"] and beside.removed == ["notes/attention.md"]
    assert beside.modified == ["notes/gemm.md"]
    assert not again.changed
    assert title == "New"
    assert _state(built) == _state(twin)


def test_many_changed_files_are_left_to_the_refresh_here(make_vault: Callable[..., Path]) -> None:
    notes = {f"notes/n{i}.md": f"# Note {i}\n" for i in range(vault_module.PARALLEL_THRESHOLD + 5)}
    root = make_vault(notes)
    with Session.open(root) as kb:
        kb.refresh()
    for rel in notes:
        with open(root / rel, "a", encoding="utf-8") as fh:
            fh.write("\nmore\n")
    before = _state(root)
    with Session.open(root) as kb:
        ahead = kb.refresh_ahead()
        assert ahead is not None
        assert ahead.result() is None  # it gave up without writing anything
        assert _state(root) == before
        stats = kb.refresh(ahead=ahead)  # taken already: the refresh runs here
    assert len(stats.modified) == len(notes)


def test_a_first_build_is_never_started_ahead(make_vault: Callable[..., Path]) -> None:
    with Session.open(make_vault(NOTES)) as kb:
        assert kb.refresh_ahead() is None
        assert kb.refresh().added  # the first build runs here, with its progress


def _broken(_vault: object) -> None:
    raise RuntimeError("broken on purpose")


def test_a_failed_refresh_ahead_is_run_again_here(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _edit(built)
    monkeypatch.setattr(refresh_module, "_refresh_small", _broken)  # the child inherits it
    with Session.open(built) as kb:
        stats = kb.refresh(ahead=kb.refresh_ahead())
    assert stats.modified == ["notes/gemm.md"]


def _studykb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STUDYKB_LOCAL="1")  # no running watch answers for this one
    return subprocess.run(
        [sys.executable, "-m", "studykb", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_command_line_takes_the_refresh_it_started(built: Path) -> None:
    """``studykb search`` after an edit, through the entry point (the refresh starts
    before click loads): the edit is found, and said exactly as without it."""
    with open(built / "notes/softmax.md", "a", encoding="utf-8") as fh:
        fh.write("\nzanzibar tiling\n")
    done = _studykb("search", "zanzibar", "--json", cwd=built)
    assert done.returncode == 0, done.stderr
    assert [h["path"] for h in json.loads(done.stdout)["hits"]] == ["notes/softmax.md"]
    shown = _studykb("show", "gemm", "--json", cwd=built)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["title"] == "GEMM"
    with open(built / "notes/gemm.md", "a", encoding="utf-8") as fh:
        fh.write("\nedited again\n")
    done = _studykb("build", "--json", cwd=built)  # says what the refresh beside it did
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["modified"], report["added"], report["removed"]) == (["notes/gemm.md"], [], [])


def test_help_and_bad_usage_leave_the_state_as_it_was(
    make_vault: Callable[..., Path], built: Path
) -> None:
    bare = make_vault(NOTES, name="bare")
    assert _studykb("search", "--help", cwd=bare).returncode == 0
    assert not (bare / ".studykb").exists()  # help opens no vault
    with open(built / "notes/softmax.md", "a", encoding="utf-8") as fh:
        fh.write("\nedited\n")
    bad = _studykb("show", cwd=built)  # a missing argument
    assert bad.returncode == 2
    assert "Missing argument" in bad.stderr
    done = _studykb("build", "--json", cwd=built)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["problems"] == 1  # the dangling [[missing-note]]


def test_a_job_beside_is_ready_once_it_answered() -> None:
    read, write = os.pipe()
    job = pools.beside(lambda fd: os.read(fd, 1).decode(), read)
    try:
        assert not job.ready()  # it waits for the byte below
    finally:
        os.write(write, b"x")
    assert job.result() == "x"
    assert job.ready()
    os.close(read)
    os.close(write)


def test_steps_meanwhile_are_taken_only_while_the_refresh_runs(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from studykb.cli.app import Context

    (built / "notes/gemm.md").write_text("---\ntitle: GEMM\n---\n\nTiles.\n", encoding="utf-8")
    polls: list[bool] = []
    real = refresh_module.Ahead.ready

    def ready(self: refresh_module.Ahead) -> bool:
        polls.append(real(self))
        return len(polls) > 1  # running at the first look, done at the second

    monkeypatch.setattr(refresh_module.Ahead, "ready", ready)
    taken: list[int] = []

    def steps(kb: Session) -> Iterator[None]:
        for n in range(5):
            taken.append(n)
            yield

    ctx = Context(str(built))
    try:
        kb = ctx.kb(meanwhile=steps)
        assert kb.find("gemm").title == "GEMM"
    finally:
        ctx.close()
    assert taken == [0, 1] and len(polls) == 2  # no step after the refresh was done
