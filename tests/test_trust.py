"""Trust: never lose a note, never run code from a vault, never read what lies outside it.

Each test is an attack or a race a reviewer ran against studykb; each failed on the code
before this suite was written.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pickle
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studykb.errors import StudyError

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _nobody_can_run_python() -> bool:
    """As root, permission tests run as ``nobody``; that needs an interpreter it can run."""
    if not IS_ROOT:
        return True
    try:
        done = subprocess.run(
            [sys.executable, "-c", "pass"],
            user=65534,
            group=65534,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return False
    return done.returncode == 0


AS_NOBODY = _nobody_can_run_python()
needs_permissions = pytest.mark.skipif(
    not AS_NOBODY,
    reason="root ignores file permissions, and user nobody cannot run this "
    "Python (it lives in a private folder)",
)
NOTE = "---\ntitle: Race\nstatus: todo\n---\n# Race\n\nsave 0\n"


def studykb(
    *args: str | bytes,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``studykb ARGS`` in a fresh process (arguments may be bytes)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "studykb", *args],
        capture_output=True,
        text=True,
        errors="replace",
        cwd=cwd,
        env=full,
        timeout=timeout,
    )


# -- mark races an editor -----------------------------------------------------------------------

EDITOR = r"""
import os, re, sys, time
path, style, stop = sys.argv[1], sys.argv[2], sys.argv[3]
lost = []
for k in range(1, 10**6):  # until the test says stop
    if os.path.exists(stop):
        break
    text = f"---\ntitle: Race\n---\n# Race\n\nsave {k}\n"
    if style == "rename":  # vim's and VS Code's way: a new file renamed over the old
        tmp = os.path.join(os.path.dirname(path), f".race.md.{k}.swp")
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    else:  # in place: truncate, then write (nano, some IDEs)
        with open(path, "r+") as fh:
            fh.truncate(0)
            fh.write(text)
    time.sleep(0.002)  # typing cadence, compressed
    with open(path) as fh:
        body = fh.read()
    found = re.search(r"save (\d+)", body)
    if not found or int(found.group(1)) < k:
        # mark may be between its exchange and the put-back at this instant (its file is
        # shown for some microseconds); a save is lost only if it does not come back
        for _wait in range(10):
            time.sleep(0.01)
            with open(path) as fh:
                body = fh.read()
            found = re.search(r"save (\d+)", body)
            if found and int(found.group(1)) >= k:
                break
        else:
            lost.append((k, body))
print(len(lost))
for k, body in lost[:3]:
    print(k, repr(body))
"""


@pytest.mark.slow  # an editor saving hundreds of times against real processes
@pytest.mark.parametrize("style", ["rename", "in-place"])
def test_mark_never_overwrites_an_editor_save(make_vault, open_vault, style: str) -> None:
    from studykb.study.mark import mark

    root = make_vault({"race.md": NOTE})
    vault = open_vault(root)
    doc = vault.document("race.md")
    stop = root.parent / f"stop-{style}"
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(root / "race.md"), style, str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    written = refused = 0
    try:
        # the editor saves until told to stop, so every mark below races it; enough of
        # them get through however busy the machine is (the bound only stops a hang)
        for n in range(20_000):
            try:
                if mark(vault, doc, "done" if n % 2 else "reading"):
                    written += 1
            except StudyError:
                refused += 1  # changed or half-written at that instant: said so, exit 1
            assert editor.poll() is None, "the editor stopped by itself"
            if written >= 5 and n >= 300:
                break
    finally:
        stop.touch()
        out, _ = editor.communicate(timeout=120)
    lost = int(out.split()[0])
    assert lost == 0, out
    assert written >= 5  # the race was really run
    leftovers = [p.name for p in root.iterdir() if ".studykb-" in p.name]
    assert leftovers == []


def test_a_save_over_the_put_back_is_kept(tmp_path: Path, monkeypatch) -> None:
    """The editor saves (by rename) right after studykb's exchange, and again right
    before studykb puts the first save back: the second, newest save stays."""
    from studykb.vault import files

    root = tmp_path / "vault"
    root.mkdir()
    note = root / "race.md"
    note.write_text(NOTE, encoding="utf-8")
    read = files.read_for_edit(root, "race.md")
    real = files._exchange
    calls: list[int] = []

    def save(text: str) -> None:
        tmp = root / f".race.md.{len(calls)}.swp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, note)

    def exchange(a: Path, b: Path) -> bool:
        calls.append(1)
        if len(calls) == 1:
            save("first save\n")  # between studykb's last comparison and its exchange
        elif len(calls) == 2:
            save("second save\n")  # over studykb's file, before the put-back
        return real(a, b)

    monkeypatch.setattr(files, "_exchange", exchange)
    with pytest.raises(StudyError, match="changed while studykb was editing"):
        files.replace(read, b"studykb's version\n")
    assert note.read_text(encoding="utf-8") == "second save\n"
    assert sorted(p.name for p in root.iterdir()) == ["race.md"]


def test_mark_refuses_an_empty_or_half_written_file(make_vault, run) -> None:
    root = make_vault({"race.md": NOTE})
    assert run("check", vault=root).exit_code == 0
    (root / "race.md").write_text("", encoding="utf-8")  # an editor between truncate and write
    from studykb.study.mark import mark
    from studykb.vault import Vault

    vault = Vault.open(root)
    try:
        doc = vault.document("race.md")
        with pytest.raises(StudyError, match="empty"):
            mark(vault, doc, "done")
        assert (root / "race.md").read_bytes() == b""
        (root / "race.md").write_text("---\ntitle: Race\nstat", encoding="utf-8")
        with pytest.raises(StudyError, match="never closed"):
            mark(vault, doc, "done")
    finally:
        vault.close()


# -- code shipped inside a vault ------------------------------------------------------------------


class _Payload:
    """Unpickling this creates the marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "w"))


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Payload(marker))


COMMANDS = [
    ("before", "b"),
    ("related", "a"),
    ("search", "alpha"),
    ("sidebar", "a"),
    ("check",),
    ("status",),
    ("topics",),
    ("build",),
]


def _vault_with_state(make_vault, run) -> Path:
    root = make_vault(
        {
            "a.md": "---\ntags: [t]\nrequires: [b]\n---\n# A\n\nalpha [[b]]\n",
            "b.md": "---\ntags: [t]\n---\n# B\n\nbeta alpha\n",
            "topics/t.md": "# T\n\ntopic\n",
        }
    )
    for command in COMMANDS:
        run(*command, vault=root)
    return root


def test_payloads_planted_in_state_files_never_run(make_vault, run, tmp_path: Path) -> None:
    root = _vault_with_state(make_vault, run)
    marker = tmp_path / "PWNED"
    state = root / ".studykb"
    payload = _payload(marker)
    # every file an earlier studykb read with pickle or marshal, and every table now
    for name in (
        "plans.pickle",
        "related.pickle",
        "related-text.pickle",
        "related-terms.pickle",
        "index/studykb-held.marshal",
        "index/studykb-topics.marshal",
        "index/studykb-segments.marshal",
        "index/studykb-sync.json",
    ):
        (state / name).write_bytes(payload)
    with sqlite3.connect(state / "cache.sqlite") as db:
        db.execute("UPDATE entries SET value=?", (payload,))
    with sqlite3.connect(state / "state.sqlite") as db:
        db.execute("UPDATE docs SET data=? WHERE key='b.md'", (payload,))
    for command in COMMANDS:
        result = studykb("--vault", str(root), *command)
        assert result.returncode in (0, 1, 2), result.stderr
        assert "Traceback" not in result.stderr
    assert not marker.exists()


def _plant_index_payload(root: Path, marker: Path) -> None:
    for toc in (root / ".studykb" / "index").glob("_MAIN_*.toc"):
        toc.write_bytes(_payload(marker))


def test_a_state_folder_shipped_with_a_repository_is_not_read(
    make_vault, run, tmp_path: Path
) -> None:
    made = _vault_with_state(make_vault, run)
    marker = tmp_path / "PWNED"
    _plant_index_payload(made, marker)
    clone = tmp_path / "clone"
    shutil.copytree(made, clone)  # what `git clone` of a repository holding .studykb gives
    (clone / ".studykb").chmod(0o700)  # even with the mode studykb itself uses
    result = studykb("--vault", str(clone), "search", "alpha")
    assert result.returncode == 0, result.stderr
    assert "not made by studykb" in result.stderr
    assert not marker.exists()
    assert "a.md" in result.stdout


def test_a_state_folder_others_can_write_is_refused(make_vault, run, tmp_path: Path) -> None:
    root = _vault_with_state(make_vault, run)
    marker = tmp_path / "PWNED"
    (root / ".studykb").chmod(0o777)  # e.g. made under umask 000 by another tool
    _plant_index_payload(root, marker)
    result = studykb("--vault", str(root), "search", "alpha")
    assert result.returncode == 2
    assert "can be written by other users" in result.stderr
    assert not marker.exists()


@pytest.mark.skipif(not IS_ROOT, reason="giving a folder to another user needs root")
def test_a_state_folder_of_another_user_is_refused(make_vault, run, tmp_path: Path) -> None:
    root = _vault_with_state(make_vault, run)
    marker = tmp_path / "PWNED"
    _plant_index_payload(root, marker)
    os.chown(root / ".studykb", 65534, 65534)
    result = studykb("--vault", str(root), "search", "alpha")
    assert result.returncode == 2
    assert "belongs to another user" in result.stderr
    assert not marker.exists()


def test_the_state_folder_is_private_whatever_the_umask(make_vault, run) -> None:
    root = make_vault({"secret.md": "# Secret\n\nmy bank pin\n"})
    (root / "secret.md").chmod(0o600)
    old = os.umask(0)
    try:
        assert run("search", "bank", vault=root).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / ".studykb").stat().st_mode) == 0o700


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_new_follows_the_umask(make_vault, run, umask: int, mode: int) -> None:
    root = make_vault({})
    old = os.umask(umask)
    try:
        result = run("new", "note", "Umask", vault=root)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((root / "notes" / "umask.md").stat().st_mode) == mode


# -- outside the vault --------------------------------------------------------------------------


def test_links_out_of_the_vault_are_not_followed(make_vault, run, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.md").write_text("# Secret\n\nzebracorn password\n", encoding="utf-8")
    (outside / "folder" / "inner.md").write_text("# Inner\n\nzebracorn too\n", encoding="utf-8")
    root = make_vault({"a.md": "# A\n\nalpha\n", "inside/b.md": "# B\n\nbeta\n"})
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "passwd.md").symlink_to("/etc/passwd")
    (root / "shared").symlink_to(outside / "folder")
    (root / "alias.md").symlink_to(root / "inside" / "b.md")  # inside: fine
    assert run("search", "zebracorn", vault=root).exit_code == 1
    assert run("search", "root", vault=root).exit_code == 1
    result = run("check", "--json", vault=root)
    problems = {(p["path"], p["code"]) for p in json.loads(result.stdout)["problems"]}
    assert {
        ("leak.md", "outside-vault"),
        ("passwd.md", "outside-vault"),
        ("shared", "outside-vault"),
    } <= problems
    docs = {n["path"] for n in json.loads(run("graph", "--json", vault=root).stdout)["nodes"]}
    assert docs == {"a.md", "inside/b.md", "alias.md"}


def test_links_out_may_be_allowed(make_vault, run, tmp_path: Path) -> None:
    shared = tmp_path / "shared-notes"
    shared.mkdir()
    (shared / "c.md").write_text("# C\n\nzebracorn\n", encoding="utf-8")
    root = make_vault({"a.md": "# A\n"}, config=f'allow_outside = ["{shared}"]\n')
    (root / "shared").symlink_to(shared)
    assert run("search", "zebracorn", vault=root).exit_code == 0


def test_new_does_not_write_through_a_link_out_of_the_vault(
    make_vault, run, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    root = make_vault({"a.md": "# A\n"})
    (root / "notes").symlink_to(outside)
    result = run("new", "note", "Escape", vault=root)
    assert result.exit_code == 1
    assert "outside" in result.stderr or "out of the vault" in result.stderr
    assert list(outside.iterdir()) == []


# -- which folder is a vault ----------------------------------------------------------------------


def test_no_vault_in_a_folder_without_notes(tmp_path: Path) -> None:
    empty = tmp_path / "code"
    (empty / "src").mkdir(parents=True)
    (empty / "src" / "main.py").write_text("print(1)\n", encoding="utf-8")
    result = studykb("check", cwd=empty)
    assert result.returncode == 2
    assert "no vault here" in result.stderr and "studykb init" in result.stderr
    assert not (empty / ".studykb").exists()


def test_no_vault_in_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "todo.md").write_text("# Todo\n", encoding="utf-8")
    result = studykb("search", "todo", cwd=home, env={"HOME": str(home)})
    assert result.returncode == 2 and "home" in result.stderr
    assert not (home / ".studykb").exists()


def test_a_folder_of_notes_is_read_with_a_notice(tmp_path: Path) -> None:
    notes = tmp_path / "notes-here"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    first = studykb("search", "alpha", cwd=notes)
    assert first.returncode == 0 and "studykb init" in first.stderr
    again = studykb("search", "alpha", cwd=notes)
    assert again.returncode == 0 and again.stderr == ""


def test_init_says_what_it_will_read(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "content" / "posts" / "a.md").write_text("# A\n", encoding="utf-8")
    (root / "README.md").write_text("# R\n", encoding="utf-8")
    (root / "node_modules" / "pkg" / "README.md").write_text("# P\n", encoding="utf-8")
    dry = studykb("init", str(root), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["files"] == 2 and not (root / "studykb.toml").exists()
    made = studykb("init", str(root))
    assert made.returncode == 0 and "2 Markdown files" in made.stdout
    assert "node_modules" in (root / "studykb.toml").read_text(encoding="utf-8")
    assert studykb("check", cwd=root / "content").returncode == 0  # found from below
    assert studykb("init", str(root)).returncode == 1  # never over an existing one
    again = studykb("init", str(root), "--dry-run")
    assert "exists already" in again.stdout and "Would write" not in again.stdout


def test_new_inside_a_subfolder_writes_into_the_vault(make_vault, run) -> None:
    root = make_vault({"notes/a.md": "# A\n"})
    result = studykb("new", "note", "Deep", cwd=root / "notes")
    assert result.returncode == 0, result.stderr
    assert (root / "notes" / "deep.md").is_file()
    assert not (root / "notes" / "notes").exists()


# -- a bad query, a full disk ------------------------------------------------------------------


@pytest.mark.parametrize("query", ["|vS*", "a*b?", "x:y:z", "\\", "*", "∑∫*", "title:"])
def test_a_bad_query_never_touches_the_index(make_vault, run, query: str) -> None:
    root = make_vault({"a.md": "# A\n\nalpha vS\n"})
    assert run("search", "alpha", vault=root).exit_code == 0
    index = root / ".studykb" / "index"
    before = {p.name: p.stat().st_mtime_ns for p in index.iterdir()}
    result = studykb("--vault", str(root), "search", query)
    assert result.returncode in (0, 1, 2), result.stderr
    assert "rebuilding" not in result.stderr and "internal error" not in result.stderr
    assert {p.name: p.stat().st_mtime_ns for p in index.iterdir()} == before


def test_arguments_that_are_not_utf8_are_bad_usage(make_vault) -> None:
    root = make_vault({"a.md": "# A\n"})
    for args in ([b"show", b"\xb3"], [b"search", b"\xb3|vS*"]):
        result = subprocess.run(
            [sys.executable, "-m", "studykb", "--vault", str(root), *args],
            capture_output=True,
            timeout=60,
            env={
                k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))
            },
        )
        assert result.returncode == 2
        assert b"not valid UTF-8" in result.stderr


def test_a_full_database_keeps_the_state(make_vault, run, monkeypatch) -> None:
    """SQLite's own "database or disk is full" (max_page_count), in the middle of a write."""
    from studykb.vault.state import store

    root = make_vault({f"n{i}.md": f"# N{i}\n\n[[n{i + 1}]]\n" for i in range(20)})
    before = json.loads(run("check", "--json", vault=root).stdout)
    connect = store.Store._connect

    def full(self: store.Store) -> sqlite3.Connection:
        db = connect(self)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count={pages}")
        return db

    monkeypatch.setattr(store.Store, "_connect", full)
    for i in range(20):
        (root / f"n{i}.md").write_text(
            f"# N{i}\n\n{'long text ' * 400}[[m{i}]]\n", encoding="utf-8"
        )
    result = run("check", vault=root)
    assert result.exit_code == 1 and "disk full" in result.stderr
    monkeypatch.undo()
    db = sqlite3.connect(root / ".studykb" / "state.sqlite")
    assert db.execute("SELECT count(*) FROM docs").fetchone()[0] == 20
    db.close()
    after = json.loads(run("check", "--json", vault=root).stdout)
    assert after != before and {p["code"] for p in after["problems"]} == {"dangling-ref"}


@pytest.fixture
def tiny_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 3 MB tmpfs (root only, where mounting is allowed)."""
    where = tmp_path / "disk"
    where.mkdir()
    done = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)],
            capture_output=True,
            check=False,
        )
        if IS_ROOT
        else None
    )
    if done is None or done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_keeps_the_state(tiny_disk: Path) -> None:
    root = tiny_disk / "vault"
    root.mkdir()
    (root / "studykb.toml").write_text("", encoding="utf-8")
    for i in range(30):
        (root / f"n{i}.md").write_text(f"# N{i}\n\n[[n{i + 1}]] text\n", encoding="utf-8")
    assert studykb("--vault", str(root), "build").returncode == 0
    state = root / ".studykb" / "state.sqlite"
    filler = tiny_disk / "filler"
    with open(filler, "wb") as fh:  # fill the disk to the last byte
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    for i in range(30):
        (root / f"n{i}.md").write_text(f"# N{i}\n\n[[m{i}]]\n", encoding="utf-8")
    for command in (("check",), ("search", "text"), ("build",)):
        result = studykb("--vault", str(root), *command)
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        assert state.stat().st_size > 0
    filler.unlink()
    result = studykb("--vault", str(root), "check", "--json")
    assert {p["code"] for p in json.loads(result.stdout)["problems"]} == {"dangling-ref"}


# -- messages where there were tracebacks (exit 70) ---------------------------------------------


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ('max_file_mb = "abc"\n', "max_file_mb"),
        ('workers = "x"\n', "workers"),
        ("exclude = 3\n", "exclude"),
        ('[severity]\ndangling-ref = "loud"\n', "dangling-ref"),
    ],
)
def test_bad_config_values_are_named(make_vault, run, config: str, says: str) -> None:
    root = make_vault({"a.md": "# A\n"}, config=config)
    result = run("check", vault=root)
    assert result.exit_code == 2
    assert says in result.stderr and "studykb.toml:" in result.stderr


def test_unknown_config_keys_get_a_did_you_mean(make_vault, run) -> None:
    root = make_vault(
        {"a.md": "# A\n"}, config='exlude = ["x"]\n[severity]\ndangling-rfe = "ignore"\n'
    )
    result = run("check", vault=root)
    assert result.exit_code == 0
    assert "studykb.toml:1: unknown key 'exlude' (did you mean 'exclude'?)" in result.stderr
    assert "did you mean 'dangling-ref'?" in result.stderr


def test_workers_are_capped_at_the_core_count(make_vault) -> None:
    from studykb.config import load_config

    root = make_vault({}, config="workers = 999\n")
    assert load_config(root).worker_count == (os.cpu_count() or 1)


def test_a_long_id_is_refused(make_vault, run) -> None:
    root = make_vault({})
    result = run("new", "note", "Long", "--id", "x" * 300, vault=root)
    assert result.exit_code == 2 and "bytes" in result.stderr


def test_mark_refuses_a_read_only_note(make_vault, run) -> None:
    root = make_vault({"ro.md": NOTE})
    (root / "ro.md").chmod(0o444)
    result = run("mark", "ro", "done", vault=root)
    assert result.exit_code == 1 and "read-only" in result.stderr
    assert (root / "ro.md").read_text(encoding="utf-8") == NOTE


@needs_permissions
def test_mark_in_a_read_only_folder(tmp_path: Path) -> None:
    root = tmp_path / "ro-vault"
    (root / "notes").mkdir(parents=True)
    (root / "studykb.toml").write_text("", encoding="utf-8")
    (root / "notes" / "a.md").write_text(NOTE, encoding="utf-8")
    assert studykb("--vault", str(root), "build").returncode == 0
    if IS_ROOT:  # root writes anywhere: run as nobody in a world-readable copy
        shutil.rmtree(root / ".studykb")
        for folder in (tmp_path, root, root / "notes"):
            folder.chmod(0o755)
        (root / "notes" / "a.md").chmod(0o666)
        os.chown(root, 65534, 65534)
    (root / "notes").chmod(0o555)
    cmd = [sys.executable, "-m", "studykb", "--vault", str(root), "mark", "a", "done"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))}
    env["XDG_STATE_HOME"] = str(root / ".state-key")
    kwargs: dict[str, object] = {}
    if IS_ROOT:
        kwargs["user"], kwargs["group"] = 65534, 65534
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, **kwargs)  # type: ignore[call-overload]
    assert result.returncode in (1, 2), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert (root / "notes" / "a.md").read_text(encoding="utf-8") == NOTE


@needs_permissions
def test_an_unreadable_note_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "studykb.toml").write_text("", encoding="utf-8")
    (root / "a.md").write_text("# A\n\n[[b]]\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n", encoding="utf-8")
    (root / "b.md").chmod(0)
    kwargs: dict[str, object] = {}
    if IS_ROOT:  # root reads anything: run as nobody
        for folder in (tmp_path, root):
            folder.chmod(0o777)
        kwargs["user"], kwargs["group"] = 65534, 65534
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))}
    env["XDG_STATE_HOME"] = str(root / ".state-key")
    result = subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(root), "check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **kwargs,
    )  # type: ignore[call-overload]
    assert "Traceback" not in result.stderr
    codes = {(p["path"], p["code"]) for p in json.loads(result.stdout)["problems"]}
    assert ("b.md", "unreadable") in codes


def test_a_note_swapped_for_a_folder(make_vault, run) -> None:
    root = make_vault({"a.md": NOTE, "b.md": "# B\n\n[[a]]\n"})
    assert run("check", vault=root).exit_code == 0
    (root / "a.md").unlink()
    (root / "a.md").mkdir()
    for args in (("mark", "a", "done"), ("show", "a"), ("check",), ("backlinks", "b")):
        result = run(*args, vault=root)
        assert result.exit_code in (0, 1), (args, result.output)


# -- what reaches a terminal or a pasted plan ---------------------------------------------------

EVIL = "Evil\x1b[2J\x1b]0;pwned\x07\u202eTitle"


def test_control_characters_never_reach_the_terminal(make_vault, run) -> None:
    root = make_vault(
        {
            "evil.md": f'---\ntitle: "{EVIL.encode("unicode_escape").decode()}"\n'
            f"---\nbody with \x1b[31mred\x1b[0m words and "
            "[[gone\x1b[1m]]\n",
            "b.md": "# B\n\nsee [[evil]]\n",
        }
    )
    outputs = [
        run("search", "words", vault=root),
        run("show", "evil", vault=root),
        run("check", vault=root),
        run("backlinks", "evil", vault=root),
        run("related", "b", vault=root),
        run("before", "evil", vault=root),
    ]
    for result in outputs:
        for stream in (result.stdout, result.stderr):
            assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream


def test_a_plan_pasted_as_markdown_is_escaped(make_vault, run) -> None:
    title = '<script>alert(1)</script> {% include x %} {{< shortcode >}} "q" [[x]] | y'
    root = make_vault(
        {
            "t.md": f"---\ntitle: '{title}'\n---\n# T\n",
            "goal.md": "---\nrequires: [t]\n---\n# Goal\n",
        }
    )
    out = run("before", "goal", "--format", "md", vault=root).stdout
    for raw in ("<script>", "{%", "{{<", '"q"', "[[x]]", "| y"):
        assert raw not in out
    assert "[[t|" in out


# -- pathological Markdown --------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["[a](", "*a _b ", "[[a"])
def test_pathological_markdown_is_bounded(make_vault, unit: str) -> None:
    """End to end: the file is read and named (the timeout only stops a hang; the time
    it takes is in benchmarks/bench_bounds.py)."""
    root = make_vault({"bomb.md": unit * (3_200_000 // len(unit)), "ok.md": "# OK\n\n[[bomb]]\n"})
    result = studykb("--vault", str(root), "check", "--json", timeout=120)
    codes = {(p["path"], p["code"]) for p in json.loads(result.stdout)["problems"]}
    assert ("bomb.md", "too-complex") in codes


@pytest.mark.parametrize("unit", ["[a](", "*a _b ", "[[a"])
def test_pathological_markdown_never_reaches_the_inline_parser(monkeypatch, unit: str) -> None:
    """markdown-it's inline parser is quadratic in the worst case: what it is handed stays
    under studykb.parse.markdown.MAX_INLINE_COST (special characters x length), so a
    bigger bomb costs no more parsing, and the ordinary paragraph is still parsed."""
    from markdown_it.parser_inline import ParserInline

    from studykb.parse import markdown
    from studykb.parse.body import read_body

    handed: list[int] = []
    parse = ParserInline.parse

    def counted(self, src, md, env, tokens):  # type: ignore[no-untyped-def]
        handed.append(len(markdown._INLINE_SPECIAL.findall(src)) * len(src))
        return parse(self, src, md, env, tokens)

    monkeypatch.setattr(ParserInline, "parse", counted)
    for size in (800_000, 3_200_000):
        handed.clear()
        body = read_body(unit * (size // len(unit)) + "\n\nSee [[ok]].\n", 1, "bomb.md")
        assert body.too_complex
        assert handed and max(handed) <= markdown.MAX_INLINE_COST
        assert [r.target for r in body.refs] == ["ok"]  # the ordinary paragraph, parsed


# -- leftovers, links and hard links ---------------------------------------------------------------


def test_temporary_files_of_a_killed_studykb_are_cleaned(make_vault, run) -> None:
    root = make_vault({"a.md": NOTE})
    dead = root / ".a.md.studykb-999999999-deadbeef.tmp"  # no such process
    old = root / ".a.md.k3j4h5g6.tmp"  # an earlier version's mkstemp name, an hour old
    backup = root / ".a.md.studykb-999999999-cafebabe.bak"
    for path in (dead, old, backup):
        path.write_text("leftover", encoding="utf-8")
    hour_ago = time.time() - 7200
    os.utime(old, (hour_ago, hour_ago))
    os.utime(dead, (time.time() - 10, time.time() - 10))
    result = run("check", "--json", vault=root)
    assert not dead.exists() and not old.exists()
    assert backup.exists()  # a rewrite's copy is reported, never deleted
    codes = {p["code"] for p in json.loads(result.stdout)["problems"]}
    assert "interrupted-write" in codes


@pytest.mark.slow
def test_sidebar_write_killed_at_any_moment_leaves_no_temporaries(make_vault, run) -> None:
    import signal

    files = {
        f"notes/n{i}.md": f"---\ntags: [t]\n---\n# N{i}\n\nshared words {i % 3}\n"
        for i in range(60)
    }
    root = make_vault(files)
    assert run("build", vault=root).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))}
    for delay in (0.3, 0.5, 0.7, 0.9, 1.2):
        proc = subprocess.Popen(
            [sys.executable, "-m", "studykb", "--vault", str(root), "sidebar", "--write"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # a dead process's temporary file is removed only once it is a second old
    # (files.stale_temporary): wait until every one left is, then check cleans them
    from studykb.vault.files import TEMPORARY, stale_temporary

    notes = str(root / "notes")
    deadline = time.monotonic() + 30
    while any(
        TEMPORARY.match(name) and not stale_temporary(name, notes) for name in os.listdir(notes)
    ):
        assert time.monotonic() < deadline, "a temporary file that never goes stale"
        time.sleep(0.05)
    assert studykb("--vault", str(root), "check").returncode in (0, 1)
    left = [p for p in (root / "notes").iterdir() if p.name.endswith(".tmp")]
    assert left == []


def test_mark_writes_through_a_link_and_keeps_hard_links(make_vault, run) -> None:
    root = make_vault({"real/target.md": NOTE, "hard.md": NOTE.replace("Race", "Hard")})
    (root / "notes").mkdir()
    (root / "notes" / "link.md").symlink_to("../real/target.md")
    os.link(root / "hard.md", root / "hard-too.md")
    (root / "real" / "target.md").chmod(0o640)
    assert run("mark", "notes/link.md", "done", vault=root).exit_code == 0
    assert (root / "notes" / "link.md").is_symlink()
    assert "status: done" in (root / "real" / "target.md").read_text(encoding="utf-8")
    assert stat.S_IMODE((root / "real" / "target.md").stat().st_mode) == 0o640
    assert run("mark", "hard.md", "done", vault=root).exit_code == 0
    assert (root / "hard.md").stat().st_nlink == 2
    assert "status: done" in (root / "hard-too.md").read_text(encoding="utf-8")
    assert f"done: {dt.date.today().isoformat()}" in (root / "hard.md").read_text(encoding="utf-8")


# -- a running watch and path options --------------------------------------------------------------


@pytest.mark.parametrize("spelling", [["-oOUT.json"], ["-o", "OUT.json"], ["--output=OUT.json"]])
def test_path_options_are_never_answered_by_a_watch(
    make_vault, open_vault, tmp_path: Path, monkeypatch, spelling: list[str]
) -> None:
    import threading

    from studykb import launch as client
    from studykb.cli.served import command_server

    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault({"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n"})
    vault = open_vault(root)
    server = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
    assert server.start()
    elsewhere = tmp_path / "caller"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    try:
        code = client.forward(["--vault", str(root), "graph", *spelling])
    finally:
        server.stop()
    assert code is None  # the client runs it itself, where -o means its own folder
    assert not (root / "OUT.json").exists() and not (Path.cwd() / "OUT.json").exists()


def test_a_bug_during_a_search_is_reported_not_taken_for_damage(
    make_vault, run, monkeypatch
) -> None:
    from studykb.search import searcher

    root = make_vault({"a.md": "# A\n\nalpha\n"})
    assert run("search", "alpha", vault=root).exit_code == 0
    folder = root / ".studykb" / "index"
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}

    def broken(*_args: object, **_kwargs: object) -> object:
        raise ValueError("a bug in studykb")

    monkeypatch.setattr(searcher, "_top", broken)
    monkeypatch.delenv("STUDYKB_DEBUG")
    result = run("search", "alpha", vault=root)
    assert result.exit_code == 70
    assert "internal error" in result.stderr and "rebuilding" not in result.stderr
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before
