"""The state in ``.studykb/`` survives a process killed at any moment: what is left is the
old state or the new one, never a mixture, and the next run works by itself. A damaged
state file is rebuilt with a one-line message.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_json

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

#: Runs one refresh in a child process and SIGKILLs itself at the N-th database call.
#: With N = 0 it prints the SQL verb of every call instead (to choose the kill points).
KILLER = r"""
import json, os, signal, sys
from studykb.vault import Vault

root, kill_at = sys.argv[1], int(sys.argv[2])
vault = Vault.open(root)
real = vault.store.db
verbs = []

class Proxy:
    def __getattr__(self, name):
        attr = getattr(real, name)
        if name not in ("execute", "executemany", "executescript"):
            return attr
        def call(sql, *args, **kwargs):
            verbs.append(sql.split(None, 1)[0].upper() if sql.strip() else "")
            if len(verbs) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return attr(sql, *args, **kwargs)
        return call

vault.store.db = Proxy()
vault.refresh()
print(json.dumps(verbs))
"""


def files(n: int, version: int) -> dict[str, str]:
    """A vault of n notes; ``version`` changes some of them, adds and removes others."""
    out = {}
    for i in range(n):
        if version and i % 7 == 3:
            continue  # removed in the new version
        body = f"# Note {i}\n\nLinks: [[n{(i + 1) % n}]] [[n{(i * 3) % n}]] [[gone{i % 5}]]\n"
        if version and i % 5 == 0:
            body += f"Edited in version {version}: [[n{(i + 2) % n}]]\n"
        fm = f"---\nid: n{i}\nrequires: [n{(i + 1) % n}]\n---\n" if i % 4 == 0 else ""
        out[f"notes/{i % 3}/n{i}.md"] = fm + body
    if version:
        out["notes/new.md"] = "---\naliases: [gone1]\n---\n# New\n[[n1]]\n"
    return out


def snapshot(root: Path) -> dict:
    """What the stored state says, read without refreshing it."""
    from studykb.vault import Vault

    vault = Vault.open(root)
    try:
        docs = sorted((k, d.id, d.title) for k, d in vault.documents().items())
        links = sorted(
            (lk.ref.source, lk.ref.line, lk.ref.text, lk.target or "", lk.state)
            for lk in vault.links()
        )
        problems = sorted((p.path, p.line, p.code) for p in vault.problems())
        stored = sorted(vault.store.files.stamps())
    finally:
        vault.close()
    return {"docs": docs, "links": links, "problems": problems, "files": stored}


def refreshed(root: Path) -> dict:
    from studykb.vault import Vault

    vault = Vault.open(root)
    try:
        vault.refresh()
    finally:
        vault.close()
    return snapshot(root)


def write_tree(root: Path, tree: dict[str, str]) -> None:
    for path in root.rglob("*.md"):
        path.unlink()
    for rel, text in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def copy_vault(source: Path, dest: Path) -> None:
    """A copy of a vault with its state, which the user vouches for (see statedir.adopt)."""
    from studykb.vault.statedir import adopt

    shutil.copytree(source, dest)
    if (dest / ".studykb").is_dir():
        adopt(dest / ".studykb")


def child(root: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "-c", KILLER, str(root), str(kill_at)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def kill_points(verbs: list[str]) -> list[int]:
    """1-based call numbers worth dying at: before, inside and just around the commit."""
    begin = verbs.index("BEGIN") + 1
    commit = len(verbs) - verbs[::-1].index("COMMIT")
    inside = range(begin + 1, commit)
    picks = {1, begin, begin + 1, commit, commit + 1}
    picks.update(inside[len(inside) * k // 3] for k in range(1, 3) if inside)
    return sorted(p for p in picks if 1 <= p <= len(verbs))


@pytest.mark.parametrize("first_build", [True, False], ids=["first-build", "incremental"])
def test_sigkill_at_any_point_leaves_old_or_new(tmp_path: Path, first_build: bool) -> None:
    n = 40  # fewer than the parallel threshold: the kill points stay deterministic
    template = tmp_path / "template"
    template.mkdir()
    (template / "studykb.toml").write_text("workers = 1\n", encoding="utf-8")
    write_tree(template, files(n, 0))
    if first_build:
        old = None
    else:
        refreshed(template)
        old = snapshot(template)
        write_tree(template, files(n, 1))
    expected = tmp_path / "expected"
    shutil.copytree(template, expected, ignore=shutil.ignore_patterns(".studykb"))
    new = refreshed(expected)

    dry = tmp_path / "dry"
    copy_vault(template, dry)
    result = child(dry, 0)
    assert result.returncode == 0, result.stderr
    verbs = json.loads(result.stdout)
    assert "COMMIT" in verbs
    assert snapshot(dry) == new

    for point in kill_points(verbs):
        trial = tmp_path / f"kill-{point}"
        copy_vault(template, trial)
        result = child(trial, point)
        assert result.returncode == -signal.SIGKILL, (point, result.stderr)
        left = snapshot(trial)
        if old is None:
            assert left["files"] == [] or left == new, f"killed at call {point}"
        else:
            assert left in (old, new), f"killed at call {point} ({verbs[point - 1]})"
        assert refreshed(trial) == new, f"no recovery after a kill at call {point}"


def vault_and_expected(tmp_path: Path, config: str, count: int) -> tuple[Path, dict]:
    """A vault of ``count`` notes, and the state a clean refresh of a copy of it gives."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "studykb.toml").write_text(config, encoding="utf-8")
    write_tree(root, files(count, 0))
    expected = tmp_path / "expected"
    shutil.copytree(root, expected)
    return root, refreshed(expected)


@pytest.mark.slow
def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    """Wall-clock kills of a bigger build (parallel parse), then the next run recovers."""
    root, new = vault_and_expected(tmp_path, "", 300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    for delay in (0.3, 0.6, 1.0, 1.5):
        shutil.rmtree(root / ".studykb", ignore_errors=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "studykb", "--vault", str(root), "build"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the process and its parse workers
        proc.wait(timeout=60)
        left = snapshot(root)
        assert left["files"] == [] or left == new, delay
        assert refreshed(root) == new, delay


def test_exception_inside_the_transaction_rolls_back(make_vault, open_vault, monkeypatch) -> None:
    root = make_vault({"a.md": "[[b]]\n", "b.md": "# B\n"})
    vault = open_vault(root)
    old = snapshot(root)
    (root / "c.md").write_text("[[a]] [[b]]\n", encoding="utf-8")
    (root / "b.md").unlink()
    import studykb.vault.checks as checks

    def boom(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(checks, "vault_problems", boom)
    with pytest.raises(RuntimeError):
        vault.refresh()
    vault.close()
    assert snapshot(root) == old
    monkeypatch.undo()
    again = open_vault(root, refresh=False)
    stats = again.refresh()
    assert stats.added == ["c.md"] and stats.removed == ["b.md"]
    assert [(p.path, p.code) for p in again.problems()] == [
        ("a.md", "dangling-ref"),
        ("c.md", "dangling-ref"),
    ]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-schema", "empty", "wal"])
def test_damaged_state_is_rebuilt_with_one_line(make_vault, run, damage: str) -> None:
    root = make_vault({"a.md": "[[b]]\n", "b.md": "# B\n"})
    code, before = run_json(run, "check", vault=root)
    db = root / ".studykb" / "state.sqlite"
    if damage == "garbage":
        db.write_bytes(os.urandom(4096))
    elif damage == "truncated":
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 3])
    elif damage == "wrong-schema":
        import sqlite3

        con = sqlite3.connect(db)
        con.execute("UPDATE meta SET value='0' WHERE key='schema'")
        con.commit()
        con.close()
    elif damage == "empty":
        db.write_bytes(b"")
    else:
        (root / ".studykb" / "state.sqlite-wal").write_bytes(os.urandom(8192))
    result = run("check", "--json", vault=root)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == before
    notes = [line for line in result.stderr.splitlines() if line.strip()]
    if damage in ("garbage", "truncated", "wrong-schema"):
        assert len(notes) == 1 and "rebuilding" in notes[0], result.stderr
    else:
        assert len(notes) <= 1
    # and the run after that is quiet
    result = run("check", vault=root)
    assert (result.exit_code, result.stderr) == (0, "")


def test_two_builds_at_once(tmp_path: Path) -> None:
    root, new = vault_and_expected(tmp_path, "workers = 1\n", 40)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    cmd = [sys.executable, "-m", "studykb", "--vault", str(root), "build", "--json"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(3)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out)["documents"] == 40
    assert snapshot(root) == new


@pytest.mark.parametrize("finish", ["never", "background"])
def test_large_first_build_finishes_in_a_thread(
    make_vault, open_vault, monkeypatch, finish: str
) -> None:
    """A large first build commits into the WAL without the indexes of its references;
    a thread builds them and copies the WAL into the database. A process that ends before the
    thread ran leaves a state the next one reads in full, and indexes it."""
    import sqlite3

    from studykb.vault import bulk
    from studykb.vault.state import Store
    from studykb.vault.state.schema import secondary_indexes

    monkeypatch.setattr(bulk, "BACKGROUND_FINISH", 1)
    started = []
    if finish == "never":  # the process ended before the thread ran
        monkeypatch.setattr(Store, "finish_later", lambda self, idx: started.append(idx))
    files = {f"n{i}.md": f"# Note {i}\n\n[[n{(i + 1) % 5}]]\n" for i in range(5)}
    root = make_vault(files)
    v = open_vault(root)
    state = root / ".studykb" / "state.sqlite"
    wanted = {name for name, _sql in secondary_indexes()}

    def indexes() -> set[str]:
        db = sqlite3.connect(state)
        try:
            return {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        finally:
            db.close()

    if finish == "never":
        assert started and (root / ".studykb" / "state.sqlite-wal").stat().st_size > 0
        later = {name for name, _sql in started[0]}
        # the references' indexes were left to the thread; the others are committed
        assert later and all(name.startswith("refs_") for name in later)
        assert indexes() & wanted == wanted - later
    else:
        v.store._later.join(10)
        db = sqlite3.connect(state)
        busy, logged, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        db.close()
        assert busy == 0 and logged == copied  # nothing left to copy
        assert wanted <= indexes()
    other = open_vault(root)  # another process, with its own connection
    assert wanted <= indexes()
    assert len(other.documents()) == 5
    assert other.refresh().changed is False
    assert {link.ref.source for link in other.backlinks("n0.md")} == {"n4.md"}
