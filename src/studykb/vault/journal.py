"""Changing several of the user's files all or nothing: the journal of a move.

``studykb mv`` rewrites many files (the moved note, every note that names it). Each file
is replaced atomically (:mod:`studykb.vault.files`), but a process killed between two
of them, or an editor saving one of them meanwhile, would leave the vault half moved:
both copies, some links rewritten and some not. So before the first file is touched,
:func:`run` writes a journal, ``.studykb/move.json`` (written whole, then renamed into
place), of every planned step: each file's content before (and its SHA-256) and its
content after, ``None`` for a file that does not exist on that side. Then the steps are
made in order (the new file first, the old one removed last, so the note always exists
somewhere), each only if the file still holds what was planned, and the journal is
removed. A step that finds the file changed (an editor saved) undoes the steps made, so
nothing is changed and the editor's save is kept.

When the process dies on the way, the journal stays. The next command that opens the
vault (:func:`recover`) finishes the move when every file is as the journal left it
(before or after its step), else undoes it when that is safe (the changed files are
left as their writer left them); otherwise the journal is kept and ``check`` reports
each file in the way (``half-done-move``). A lock (``.studykb/move.lock``, held for
the whole run) keeps a command from "recovering" a move another process is making.
The journal lives in the state folder, which is read only when studykb made it for
this user (:mod:`studykb.vault.statedir`): a journal planted in a cloned vault is never
replayed, and every path in it must lie inside the vault (as every write checks).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from studykb.errors import StudyError
from studykb.model import ERROR, Problem
from studykb.vault import files

JOURNAL = "move.json"
LOCK = "move.lock"
CODE = "half-done-move"


@dataclass(frozen=True)
class Step:
    """One file's change: ``before`` -> ``after`` (None: the file does not exist)."""

    path: str
    before: bytes | None
    after: bytes | None


class Interrupted(StudyError):
    """A journal of an earlier move is in the way (or one is under way). Exit 1."""


def run(root: Path, state_dir: Path, what: str, steps: list[Step]) -> None:
    """Make ``steps`` (in order) all or nothing; ``what`` names the change in messages.

    Raises :class:`files.FileChanged` (nothing changed) when a file is not as planned,
    before or while the steps are made, and :class:`Interrupted` when another move is
    under way or an earlier one is left unfinished.
    """
    with _locked(state_dir) as held:
        if not held:
            raise Interrupted(
                "another studykb mv is changing this vault; nothing was changed.",
                hint="Run it again when that one is done.",
            )
        if (state_dir / JOURNAL).exists():
            raise Interrupted(_stuck_message(state_dir), hint=STUCK_HINT)
        reads = {step.path: _check(root, step) for step in steps}
        _write_journal(state_dir, what, steps)
        try:
            for done, step in enumerate(steps):
                _between(done)
                _make(root, step, reads[step.path])
            _between(len(steps))
            _all_made(root, steps)
        except StudyError as exc:
            if _undo(root, steps):
                _remove_journal(state_dir)
                raise files.FileChanged(
                    f"{exc.message.split(';')[0]}; the move was undone, nothing was changed.",
                    hint="Run it again.",
                ) from None
            raise Interrupted(
                f"{exc.message} The move could not be undone either; {_stuck_message(state_dir)}",
                hint=STUCK_HINT,
            ) from None
        _remove_journal(state_dir)


def _all_made(root: Path, steps: list[Step]) -> None:
    """FileChanged unless every file is as the move leaves it: an editor that saved a
    file after its step (its buffer still the old text) would otherwise undo that step
    alone and leave its links pointing at a file that is gone."""
    for step in steps:
        if _state(root, step) != "after":
            raise files.FileChanged(
                f"{step.path} changed while studykb was editing it (an editor saving?)"
            )


def _between(done: int) -> None:
    """Called before each step (``done`` steps made so far): the seam where the tests
    stop a move halfway, as a kill would."""


def recover(root: Path, state_dir: Path) -> str | None:
    """Finish or undo a move a killed process left half done; one line saying what was
    done (None when there was nothing to do, or a move is under way)."""
    if not (state_dir / JOURNAL).exists():
        return None
    with _locked(state_dir) as held:
        if not held:
            return None  # a move under way in another process: not ours to touch
        loaded = _load(state_dir)
        if loaded is None:
            return None
        what, steps = loaded
        states = [_state(root, step) for step in steps]
        if all(s in ("before", "after") for s in states):
            try:
                for step, state in zip(steps, states, strict=True):
                    if state == "before":
                        _make(root, step, _reread(root, step))
            except StudyError as exc:
                return f"an interrupted {what} could not be finished ({exc.message}); {_LEFT}"
            _remove_journal(state_dir)
            return f"finished the interrupted {what}"
        changed = [s.path for s, state in zip(steps, states, strict=True) if state == "other"]
        if _undo(root, steps):
            _remove_journal(state_dir)
            return (
                f"undid the interrupted {what}: {', '.join(changed)} changed since "
                "(left as it is); run it again"
            )
        return f"an interrupted {what} could not be finished or undone; {_LEFT}"


_LEFT = "`studykb check` lists the files in the way"
STUCK_HINT = (
    "Put those files right by hand (the journal .studykb/move.json holds their planned "
    "contents), then delete the journal."
)


def problems(root: Path, state_dir: Path) -> list[Problem]:
    """``half-done-move``: each file of an unfinished move that is in the way (neither as
    it was before nor as the move makes it); none while a move is under way."""
    if not (state_dir / JOURNAL).exists():
        return []
    with _locked(state_dir) as held:
        loaded = _load(state_dir) if held else None
    if loaded is None:
        return []
    what, steps = loaded
    out = []
    for step in steps:
        state = _state(root, step)
        if state != "after":
            if state == "other":
                how = "changed by someone else"
            else:
                verb = (
                    "created"
                    if step.before is None
                    else "removed"
                    if step.after is None
                    else "rewritten"
                )
                how = f"not yet {verb}"
            message = (
                f"an interrupted {what} left this file {how}; the move could not be "
                "finished or undone (.studykb/move.json holds the plan)"
            )
            out.append(Problem(step.path, 1, ERROR, CODE, message))
    return out


def refuse_unfinished(state_dir: Path) -> None:
    """:class:`Interrupted` when an earlier move is left unfinished (and no process is
    making it): a new move would stumble on its files ("exists already")."""
    if (state_dir / JOURNAL).exists():
        with _locked(state_dir) as held:
            if held and (state_dir / JOURNAL).exists():
                raise Interrupted(_stuck_message(state_dir), hint=STUCK_HINT)


def _stuck_message(state_dir: Path) -> str:
    loaded = _load(state_dir)
    what = loaded[0] if loaded else "move"
    return f"an interrupted {what} is not finished; nothing was changed."


# -- the steps -----------------------------------------------------------------------------


def _check(root: Path, step: Step) -> files.Read | None:
    """The file of ``step`` read as it is now; FileChanged unless it is as planned."""
    if step.before is None:
        if os.path.lexists(root / step.path):
            raise StudyError(f"{step.path} exists already; nothing was changed.")
        return None
    read = files.read_for_edit(root, step.path)
    if read.data != step.before:
        raise files.FileChanged(
            f"{step.path} changed since the move was planned; nothing was changed.",
            hint="Run it again.",
        )
    return read


def _reread(root: Path, step: Step) -> files.Read | None:
    return None if step.before is None else files.read_for_edit(root, step.path)


def _make(root: Path, step: Step, read: files.Read | None) -> None:
    """One step: create, replace or remove the file (each in one atomic operation)."""
    if read is None:
        assert step.after is not None
        files.create(root, root / step.path, step.after)
    elif step.after is None:
        files.remove(read)
    else:
        files.replace(read, step.after)


def _undo(root: Path, steps: list[Step]) -> bool:
    """Put back what the steps made, last first, each only where the file is as the step
    left it. A file someone else rewrote meanwhile is left as they left it; False (and
    nothing more undone) when a file the move created or removed is not as the move
    left it: undoing more could then lose the moved note's only copy."""
    states = [_state(root, step) for step in steps]
    if any(
        state == "other" and (step.before is None or step.after is None)
        for step, state in zip(steps, states, strict=True)
    ):
        return False
    for step, state in reversed(list(zip(steps, states, strict=True))):
        if state != "after":
            continue
        back = Step(step.path, step.after, step.before)
        try:
            _make(root, back, _reread(root, back))
        except StudyError:
            return False
    return True


def _state(root: Path, step: Step) -> str:
    """``before`` or ``after`` (the file is as the step finds or leaves it), or ``other``."""
    try:
        data: bytes | None = files.read_note(root / step.path)[0]
    except FileNotFoundError:
        data = None
    except OSError:
        return "other"
    if data == step.after:
        return "after"
    if data == step.before:
        return "before"
    return "other"


# -- the journal file ----------------------------------------------------------------------


def _encode(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return None
    return {"sha256": hashlib.sha256(data).hexdigest(), "base64": base64.b64encode(data).decode()}


def _decode(value: object) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("not a content")
    data = base64.b64decode(str(value["base64"]), validate=True)
    if hashlib.sha256(data).hexdigest() != value["sha256"]:
        raise ValueError("content does not match its hash")
    return data


def _write_journal(state_dir: Path, what: str, steps: list[Step]) -> None:
    """The journal, whole or not at all: written beside, synced, renamed into place."""
    body = {
        "version": 1,
        "what": what,
        "pid": os.getpid(),
        "steps": [
            {"path": s.path, "before": _encode(s.before), "after": _encode(s.after)} for s in steps
        ],
    }
    tmp = state_dir / f"{JOURNAL}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(body, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, state_dir / JOURNAL)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StudyError(
            f"cannot write the move's journal in {state_dir}: {exc.strerror}; nothing was changed."
        ) from None
    files.sync_folder(state_dir)


def _load(state_dir: Path) -> tuple[str, list[Step]] | None:
    """(what, steps) of the journal; None when there is none. A journal that is not one
    (it is written whole, so only a hand or a bug makes one) is set aside, never run."""
    path = state_dir / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        steps = [
            Step(_vault_path(s["path"]), _decode(s["before"]), _decode(s["after"]))
            for s in data["steps"]
        ]
        return str(data["what"]), steps
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(JOURNAL + ".bad"))
        return None


def _vault_path(path: object) -> str:
    text = str(path)
    parts = text.split("/")
    if text.startswith("/") or "\\" in text or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{text!r} is not a vault path")
    return text


def _remove_journal(state_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state_dir / JOURNAL)
    files.sync_folder(state_dir)


@contextlib.contextmanager
def _locked(state_dir: Path) -> Iterator[bool]:
    """Hold the move lock (True), or learn that another process holds it (False). The
    system releases it when the holder dies, however it dies."""
    try:
        import fcntl  # deferred: Unix only, missing elsewhere
    except ImportError:  # no advisory locks here: moves are not guarded against each other
        yield True
        return
    try:
        fd = os.open(state_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StudyError(f"cannot lock {state_dir / LOCK}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
