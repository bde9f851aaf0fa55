"""The index under concurrent use: another process writing, a build killed mid-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Real processes over a 1,600-note vault, some killed mid-build: seconds each. They run on
#: one xdist worker, which generates the vault once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("big-vault")]

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def studykb(vault: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic vault large enough for the two-process full build (benchmarks/gen_vault.py)."""
    sys.path.insert(0, str(BENCH))
    try:
        from gen_vault import generate
    finally:
        sys.path.remove(str(BENCH))
    folder = tmp_path_factory.mktemp("big") / "vault"
    generate(str(folder), 1600, seed=7)
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


@pytest.mark.parametrize("after", [0.8, 2.5, 5.0])
def test_a_killed_build_leaves_a_usable_index(big: Path, after: float) -> None:
    assert studykb(big, "build").returncode == 0
    for path in (big / "notes").rglob("*.md"):  # every file changes: a full rebuild
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\nedited {after}\n")
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "studykb", "--vault", str(big), "build"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGKILL)  # the build, its fork server and workers, at once
    proc.wait()
    got = studykb(big, "search", "gradient", "--json")
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    hits = json.loads(got.stdout)["hits"]
    assert hits
    built = json.loads(studykb(big, "build", "--json").stdout)
    assert built["index"]["documents"] == built["documents"]
    assert json.loads(studykb(big, "search", "gradient", "--json").stdout)["hits"] == hits


def test_concurrent_searches_during_a_full_build(big: Path) -> None:
    import shutil

    shutil.rmtree(big / ".studykb" / "index", ignore_errors=True)
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTEST_CURRENT_TEST", None)
    builder = subprocess.Popen(
        [sys.executable, "-m", "studykb", "--vault", str(big), "build"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)
        got = studykb(big, "search", "gradient", "--json")
        assert got.returncode == 0, got.stderr  # waited for the first build, then answered
        assert json.loads(got.stdout)["hits"]
        assert "Traceback" not in got.stderr
    finally:
        _out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0, err
