"""``studykb mv`` is all or nothing: a move stopped at any point (killed, or a file saved
by an editor meanwhile) leaves, after the next command, the vault exactly as it was or
exactly as the move makes it; the editor's save is never lost; ``check`` reports what
could be neither finished nor undone.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_json, tree_hashes

FILES = {
    "notes/topics/zero.md": "---\nid: zero\n---\n# ZeRO\n\nSee [DDP](ddp.md).\n",
    "notes/topics/ddp.md": "# DDP\n\n[[zero]] again.\n",
    "notes/a.md": "---\nrequires: [zero]\n---\n# A\n\n[[zero]]\n",
    "notes/c.md": "# C\n\n[z](topics/zero.md)\n",
}
MOVE = ("mv", "zero", "zero-redundancy")
#: create the new file, rewrite three notes, remove the old file (and a last check)
STEPS = 5


class Crash(BaseException):
    """Stands for a kill: nothing of the move's own clean-up runs."""


def journal_file(vault: Path) -> Path:
    return vault / ".studykb" / "move.json"


def states(make_vault, run) -> tuple[dict[str, str], dict[str, str]]:  # type: ignore[no-untyped-def]
    """Hashes of the vault before and after a whole move (made on a copy)."""
    other = make_vault(FILES)
    before = tree_hashes(other)
    assert run(*MOVE, vault=other).exit_code == 0
    return before, tree_hashes(other)


def crash_at(monkeypatch: pytest.MonkeyPatch, point: int) -> None:
    """The move stops (as if killed) before its step ``point``."""
    from studykb.vault import journal

    def between(done: int) -> None:
        if done == point:
            raise Crash

    monkeypatch.setattr(journal, "_between", between)


@pytest.mark.parametrize("point", range(STEPS + 1))
def test_a_move_stopped_before_any_step_is_finished_by_the_next_command(
    run, make_vault, monkeypatch, point
) -> None:  # type: ignore[no-untyped-def]
    before, after = states(make_vault, run)
    vault = make_vault(FILES)
    run("check", vault=vault)
    crash_at(monkeypatch, point)
    with pytest.raises(Crash):
        run(*MOVE, vault=vault)
    monkeypatch.undo()
    assert journal_file(vault).exists()
    halfway = tree_hashes(vault)
    assert halfway == before if point == 0 else halfway == after if point == STEPS else True
    assert point in (0, STEPS) or halfway not in (before, after)
    result = run("check", vault=vault)  # the next command finishes it
    assert "finished the interrupted move notes/topics/zero.md" in result.stderr
    assert result.exit_code == 0, result.output
    assert tree_hashes(vault) == after
    assert not journal_file(vault).exists()


def test_the_move_has_the_steps_the_tests_stop_it_at(run, make_vault, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from studykb.vault import journal

    seen: list[int] = []
    monkeypatch.setattr(journal, "_between", seen.append)
    assert run(*MOVE, vault=make_vault(FILES)).exit_code == 0
    assert seen == list(range(STEPS + 1))


#: Runs ``studykb mv`` in a child process that SIGKILLs itself before its N-th write of a
#: user's file (``files.create``, ``replace`` or ``remove``), or halfway through writing
#: the journal ("journal").
KILLER = r"""
import json, os, signal, sys
from studykb.vault import files

point = sys.argv[1]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if point == "journal":
    def dump(obj, fh, **kw):
        fh.write('{"version": 1, "what": "move')  # half the journal, then the kill
        fh.flush()
        die()
    json.dump = dump
else:
    calls = []
    def counted(real):
        def call(*args, **kwargs):
            calls.append(real.__name__)
            if len(calls) == int(point):
                die()
            return real(*args, **kwargs)
        return call
    for name in ("create", "replace", "remove"):
        setattr(files, name, counted(getattr(files, name)))
sys.argv = ["studykb", "--vault", sys.argv[2], *sys.argv[3:]]
from studykb.cli import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("point", ["journal", "1", "2", "3", "4", "5"])
def test_a_killed_mv_leaves_all_before_or_all_after(run, make_vault, point) -> None:  # type: ignore[no-untyped-def]
    before, after = states(make_vault, run)
    vault = make_vault(FILES)
    run("check", vault=vault)
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, point, str(vault), *MOVE],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    result = run("check", vault=vault)  # the next command
    assert result.exit_code == 0, result.output
    assert tree_hashes(vault) == (before if point == "journal" else after)
    assert not journal_file(vault).exists()
    if tree_hashes(vault) == before:  # nothing was done: the move runs as if for the first time
        assert run(*MOVE, vault=vault).exit_code == 0
        assert tree_hashes(vault) == after


def test_an_editor_save_between_planning_and_writing_is_kept(make_vault, open_vault, run) -> None:  # type: ignore[no-untyped-def]
    from studykb.session import Session
    from studykb.vault.files import FileChanged

    vault = make_vault(FILES)
    before = tree_hashes(vault)
    kb = Session(open_vault(vault))
    move = kb.plan_move(kb.find("zero"), "zero-redundancy")
    saved = FILES["notes/c.md"] + "\nTyped in the editor meanwhile.\n"
    (vault / "notes/c.md").write_text(saved)
    with pytest.raises(FileChanged, match="notes/c.md changed since the move was planned"):
        kb.move(move)
    assert tree_hashes(vault) == {**before, "notes/c.md": tree_hashes(vault)["notes/c.md"]}
    assert (vault / "notes/c.md").read_text() == saved
    assert not journal_file(vault).exists()
    again = run(*MOVE, vault=vault)  # run again: the move completes, the save is kept
    assert again.exit_code == 0, again.output
    assert (vault / "notes/c.md").read_text() == saved.replace("zero.md", "zero-redundancy.md")


@pytest.mark.parametrize(
    "path",
    [
        "notes/topics/ddp.md",  # not yet rewritten when the editor saves it
        "notes/c.md",  # rewritten already: the editor's save (of its old text) undoes that
    ],
)
def test_an_editor_save_while_the_move_is_written_undoes_it(
    run, make_vault, monkeypatch, path
) -> None:  # type: ignore[no-untyped-def]
    from studykb.vault import journal

    vault = make_vault(FILES)
    run("check", vault=vault)
    before = tree_hashes(vault)
    saved = FILES[path] + "\nSaved while mv ran.\n"

    def between(done: int) -> None:
        if done == 3:  # the new file, notes/a.md and notes/c.md are written
            (vault / path).write_text(saved)

    monkeypatch.setattr(journal, "_between", between)
    code, data = run_json(run, *MOVE, vault=vault)
    assert code == 1
    assert f"{path} changed" in data["error"] and "the move was undone" in data["error"]
    assert (vault / path).read_text() == saved
    assert tree_hashes(vault) == {**before, path: tree_hashes(vault)[path]}
    assert not journal_file(vault).exists()


def test_a_stopped_move_whose_file_was_then_saved_is_undone(run, make_vault, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    run("check", vault=vault)
    before = tree_hashes(vault)
    crash_at(monkeypatch, 2)  # new file and notes/a.md written, the rest not
    with pytest.raises(Crash):
        run(*MOVE, vault=vault)
    monkeypatch.undo()
    saved = FILES["notes/c.md"] + "\nSaved after the kill.\n"
    (vault / "notes/c.md").write_text(saved)
    result = run("check", vault=vault)
    assert "undid the interrupted move" in result.stderr and "notes/c.md" in result.stderr
    assert (vault / "notes/c.md").read_text() == saved
    assert tree_hashes(vault) == {**before, "notes/c.md": tree_hashes(vault)["notes/c.md"]}
    assert not journal_file(vault).exists()
    assert result.exit_code == 0, result.output


def test_a_move_that_can_be_neither_finished_nor_undone_is_reported(
    run, make_vault, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    run("check", vault=vault)
    crash_at(monkeypatch, 2)
    with pytest.raises(Crash):
        run(*MOVE, vault=vault)
    monkeypatch.undo()
    (vault / "notes/c.md").write_text("# C\n\nrewritten by hand\n")  # not finishable
    new = vault / "notes/topics/zero-redundancy.md"
    new.write_text(new.read_text() + "\nedited at its new place\n")  # not undoable
    code, data = run_json(run, "check", vault=vault)
    assert code == 1
    stuck = {(p["path"], p["code"]) for p in data["problems"] if p["code"] == "half-done-move"}
    assert stuck == {
        ("notes/c.md", "half-done-move"),
        ("notes/topics/zero-redundancy.md", "half-done-move"),
        ("notes/topics/ddp.md", "half-done-move"),  # not rewritten yet
        ("notes/topics/zero.md", "half-done-move"),  # not removed yet
    }
    assert "edited at its new place" in new.read_text()  # nothing of the user's is lost
    again = run_json(run, *MOVE, vault=vault)  # never a bare "exists already"
    assert again[0] == 1
    assert "an interrupted move notes/topics/zero.md -> " in again[1]["error"]
    assert "not finished" in again[1]["error"]


def test_a_move_under_way_in_another_process_is_left_to_it(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    vault = make_vault(FILES)
    run("check", vault=vault)
    journal = {
        "version": 1,
        "what": "move notes/a.md -> notes/b.md",
        "pid": 1,
        "steps": [{"path": "notes/b.md", "before": None, "after": None}],
    }
    journal_file(vault).write_text(json.dumps(journal))
    fd = os.open(vault / ".studykb" / "move.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as the other process holds it
        result = run("check", vault=vault)
        assert "interrupted" not in result.stderr
        assert result.exit_code == 0, result.output
        code, data = run_json(run, *MOVE, vault=vault)
        assert code == 1 and "another studykb mv is changing this vault" in data["error"]
    finally:
        os.close(fd)
    assert journal_file(vault).exists()


def test_a_journal_in_a_state_folder_studykb_did_not_make_is_never_run(run, make_vault) -> None:  # type: ignore[no-untyped-def]
    import base64
    import hashlib

    vault = make_vault(FILES)
    planted = b"# planted\n"
    state = vault / ".studykb"
    state.mkdir(mode=0o700)  # as a clone brings it: no stamp of this user's key
    step = {
        "path": "notes/planted.md",
        "before": None,
        "after": {
            "sha256": hashlib.sha256(planted).hexdigest(),
            "base64": base64.b64encode(planted).decode(),
        },
    }
    (state / "move.json").write_text(json.dumps({"what": "move x -> y", "steps": [step]}))
    run("check", vault=vault)
    assert not (vault / "notes/planted.md").exists()
