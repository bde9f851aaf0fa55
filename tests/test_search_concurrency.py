"""The index under concurrent use: another process writing, a build killed mid-way.

Real processes over a generated vault of 500 notes. A full build of at least
``PARALLEL_MIN`` files (1,500) writes its segments in worker interpreters; the processes
here lower that bar to 300 (``STUDYKB`` below, the real command line otherwise), so the
same two-process build runs over a third of the files. A build is killed, or a search
started, at a moment of the build seen from outside (its children in ``/proc``: forked
readers, then the ``python -I`` segment writers), not after a number of seconds, so the
moment is the same on a fast machine and on a loaded one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
NOTES = 500
#: ``python -m studykb`` with ``PARALLEL_MIN`` lowered: a full build of this vault writes
#: its segments in worker interpreters, as one of 1,500 files and more does.
STUDYKB = [
    sys.executable,
    "-c",
    "from studykb.search import sync; sync.PARALLEL_MIN = 300\n"
    "from studykb.cli import main; main()",
]


def _env() -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def studykb(vault: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*STUDYKB, "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
    )


def start_build(vault: Path, **kwargs: object) -> subprocess.Popen:
    """``studykb build`` in its own process group (its readers and writers in it)."""
    return subprocess.Popen(
        [*STUDYKB, "--vault", str(vault), "build"],
        env=_env(),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        **kwargs,  # type: ignore[call-overload]
    )


def _children(pid: int) -> list[list[str]]:
    """The command lines of the children of ``pid`` (of all its threads)."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                kids = fh.read().split()
        except OSError:
            continue
        for kid in kids:
            try:
                with open(f"/proc/{kid}/cmdline", "rb") as fh:
                    out.append(fh.read().decode(errors="replace").split("\0"))
            except OSError:
                continue
    return out


def _readers(kids: list[list[str]]) -> bool:
    """The pool of forked workers reading the files: two forks at once (a fork has the
    build's own command line; a lone one is a helper, or a writer not yet started)."""
    return sum(cmd[:2] == STUDYKB[:2] for cmd in kids) >= 2 and not _writers(kids)


def _writers(kids: list[list[str]]) -> bool:
    """Fresh interpreters writing index segments (``python -I -c``)."""
    return any(cmd[1:2] == ["-I"] for cmd in kids)


def wait_for(proc: subprocess.Popen, seen: Callable[[list[list[str]]], bool], what: str) -> None:
    """Until the build's children show ``seen``; the build must still be running."""
    end = time.monotonic() + 120
    while not seen(_children(proc.pid)):
        if proc.poll() is not None:
            pytest.fail(f"the build ended before {what}")
        assert time.monotonic() < end, f"no {what} in two minutes"
        time.sleep(0.002)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic vault (benchmarks/gen_vault.py), the same on every worker."""
    sys.path.insert(0, str(BENCH))
    try:
        from gen_vault import generate
    finally:
        sys.path.remove(str(BENCH))
    folder = tmp_path_factory.mktemp("big") / "vault"
    generate(str(folder), NOTES, seed=7)
    return folder


def test_search_while_another_process_holds_the_index(big: Path) -> None:
    assert studykb(big, "build").returncode == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from whoosh import index\n"
            "w = index.open_dir(sys.argv[1]).writer()\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(big / ".studykb" / "index"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        note = big / "notes" / "zz-new.md"
        note.write_text("# Zeppelin\n\nzeppelin airship\n", encoding="utf-8")
        # the search waits a second at most for the lock (counted in test_search.py, timed
        # in benchmarks/bench_bounds.py); the timeout only stops a hang
        got = studykb(big, "search", "gradient", "--json", timeout=120)
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout)["hits"]
        assert "Traceback" not in got.stderr and "LockError" not in got.stderr
        assert "being updated by another studykb process" in got.stderr
    finally:
        holder.kill()
        holder.wait()
        (big / "notes" / "zz-new.md").unlink(missing_ok=True)
    got = studykb(big, "search", "gradient", "--json")  # the lock died with its holder
    assert got.returncode == 0 and "another studykb process" not in got.stderr


def _writers_done() -> Callable[[list[list[str]]], bool]:
    """True once segment writers were seen and are gone (the build commits them)."""
    state = {"seen": False}

    def seen(kids: list[list[str]]) -> bool:
        if _writers(kids):
            state["seen"] = True
            return False
        return state["seen"]

    return seen


#: When the build is killed (it is still running then): while forked workers read the
#: files (the state store is being written), while the worker interpreters write
#: segments (the index lock is held), and as soon as they are done (the segments are
#: being committed: between them and the end of the build, about a third of its time).
MOMENTS: dict[str, Callable[[], Callable[[list[list[str]]], bool]]] = {
    "reading": lambda: _readers,
    "segments": lambda: _writers,
    "commit": _writers_done,
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_killed_build_leaves_a_usable_index(big: Path, moment: str) -> None:
    assert studykb(big, "build").returncode == 0
    for path in (big / "notes").rglob("*.md"):  # every file changes: a full rebuild
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\nedited {moment}\n")
    proc = start_build(big, stderr=subprocess.DEVNULL)
    try:
        wait_for(proc, MOMENTS[moment](), f"the moment {moment!r}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the build and its workers, at once
        proc.wait()
    got = studykb(big, "search", "gradient", "--json")
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    hits = json.loads(got.stdout)["hits"]
    assert hits
    built = json.loads(studykb(big, "build", "--json").stdout)
    assert built["index"]["documents"] == built["documents"]
    assert json.loads(studykb(big, "search", "gradient", "--json").stdout)["hits"] == hits


def _waiting(pid: int) -> bool:
    """Whether ``pid`` sleeps and used no processor time for a fifth of a second (a
    search waiting for the index lock; starting up, it reads and computes)."""

    def sample() -> tuple[str, int]:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[11]) + int(fields[12])  # state, utime + stime

    try:
        state, ticks = sample()
        time.sleep(0.2)
        state2, ticks2 = sample()
    except OSError:
        return False
    return state == state2 == "S" and ticks == ticks2


def test_concurrent_searches_during_a_full_build(big: Path) -> None:
    """A search started while the first build holds the index waits for it, then answers.

    The build is stopped (SIGSTOP) while its workers write segments, so the search
    certainly finds the index locked and incomplete; it is let go on once the search
    waits.
    """
    shutil.rmtree(big / ".studykb" / "index", ignore_errors=True)
    builder = start_build(big, stderr=subprocess.PIPE, text=True)
    search = None
    try:
        wait_for(builder, _writers, "segments were written")
        os.killpg(builder.pid, signal.SIGSTOP)
        search = subprocess.Popen(
            [*STUDYKB, "--vault", str(big), "search", "gradient", "--json"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        end = time.monotonic() + 120
        while not _waiting(search.pid):
            assert search.poll() is None, "the search answered while the build was stopped"
            assert time.monotonic() < end, "the search never waited"
        assert search.poll() is None
        os.killpg(builder.pid, signal.SIGCONT)
        out, err = search.communicate(timeout=120)
        assert search.returncode == 0, err  # waited for the first build, then answered
        assert json.loads(out)["hits"]
        assert "Traceback" not in err
    finally:
        os.killpg(builder.pid, signal.SIGCONT)
        if search is not None and search.poll() is None:
            search.kill()
            search.wait()
        _out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0, err
