"""``studykb watch`` driven in a subprocess against a temporary vault."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from studykb.editor.watch import relevant

WAIT = 60  # seconds; generous for a busy machine running tests in parallel; never reached
# when things work (every wait ends as soon as the line it waits for is printed)


class Watch:
    """``studykb watch`` in a subprocess, its output lines in a queue."""

    def __init__(self, vault: Path) -> None:
        env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "studykb", "--vault", str(vault), "watch"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, pattern: str, timeout: float = WAIT) -> str:
        """The next output line matching ``pattern`` (earlier lines are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line matching {pattern!r} in {timeout}s; got {self.seen}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if regex.search(line):
                return line

    def stop(self) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        assert self.proc.stderr is not None
        return self.proc.returncode, "\n".join(self.seen + rest), self.proc.stderr.read()


@pytest.fixture
def watching(make_vault):  # type: ignore[no-untyped-def]
    started: list[Watch] = []

    def start(files: dict[str, str]) -> tuple[Path, Watch]:
        vault = make_vault(files)
        watch = Watch(vault)
        started.append(watch)
        watch.expect(r"^watching ")
        return vault, watch

    yield start
    for watch in started:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_edit_rename_delete(watching):
    vault, watch = watching({"notes/topics/ddp.md": "---\nid: ddp\n---\n# DDP\n"})

    write(vault / "notes/a.md", "# A\n\nSee [[missing]] and [[ddp]].\n")
    watch.expect(r"^\[[\d:]+\] added notes/a\.md$")
    watch.expect(r"^  new: notes/a\.md:3: error dangling-ref '\[\[missing\]\]'")

    # an editor that writes a temporary file and renames it over the note
    write(vault / "notes/.a.md.tmp", "# A\n\nSee [[ddp]].\n")
    os.replace(vault / "notes/.a.md.tmp", vault / "notes/a.md")
    watch.expect(r"^  fixed: notes/a\.md:3: error dangling-ref '\[\[missing\]\]'")

    # swap and backup files are not notes
    for junk in ("notes/.a.md.swp", "notes/a.md~", "notes/4913", "notes/#a.md#"):
        write(vault / junk, "[[junk]]\n")
    os.remove(vault / "notes/4913")

    os.rename(vault / "notes/a.md", vault / "notes/b.md")
    line = watch.expect(r"^\[[\d:]+\] (added notes/b\.md|removed notes/a\.md)$")
    watch.expect(r"removed notes/a\.md$" if "added" in line else r"added notes/b\.md$")

    os.remove(vault / "notes/topics/ddp.md")
    watch.expect(r"^\[[\d:]+\] removed notes/topics/ddp\.md$")
    watch.expect(r"^  new: notes/b\.md:3: error dangling-ref '\[\[ddp\]\]'")
    watch.expect(r"^\[[\d:]+\] 1 document, 1 problem \(1 error\)")

    code, out, err = watch.stop()
    assert code == 0, err
    assert "stopped watching" in out
    assert "Traceback" not in err and "Traceback" not in out
    assert "junk" not in out and "4913" not in out and ".swp" not in out


def test_a_burst_of_changes_is_taken_in_few_refreshes(watching):
    vault, watch = watching({"notes/keep.md": "# keep\n"})
    folder = vault / "notes/batch"
    folder.mkdir()
    for n in range(40):  # like `git checkout` of another branch
        (folder / f"n{n:02}.md").write_text(f"# N{n}\n\n[[n{(n + 1) % 40:02}]]\n")
    watch.expect(r"^\[[\d:]+\] 41 documents, 0 problems")
    refreshes = [line for line in watch.seen if re.match(r"^\[[\d:]+\] \d+ documents", line)]
    assert len(refreshes) < 40
    assert any("... and" in line for line in watch.seen)

    shutil.move(str(folder), str(vault / "notes/moved"))  # one event for a folder of notes
    watch.expect(r"^\[[\d:]+\] added notes/moved/n00\.md$")
    shutil.rmtree(vault / "notes/moved")
    watch.expect(r"^\[[\d:]+\] 1 document, 0 problems")
    code, _out, err = watch.stop()
    assert code == 0 and "Traceback" not in err


def test_config_change_is_picked_up(watching):
    vault, watch = watching({"notes/a.md": "[[nowhere]]\n", "drafts/b.md": "[[never]]\n"})
    (vault / "studykb.toml").write_text('exclude = ["drafts"]\n')
    watch.expect(r"^  fixed: drafts/b\.md:1: error dangling-ref")
    code, _out, err = watch.stop()
    assert code == 0 and "Traceback" not in err


def test_vault_that_disappears_stops_with_a_message(watching):
    vault, watch = watching({"notes/a.md": "# a\n"})
    shutil.rmtree(vault)
    try:
        watch.proc.wait(timeout=WAIT)
    finally:
        code, _out, err = watch.stop()
    assert code == 1
    assert "disappeared" in err
    assert "Traceback" not in err


def test_relevant_paths(tmp_path):
    root = tmp_path
    (root / "notes").mkdir()
    assert relevant(str(root / "notes/a.md"), root)
    assert relevant(str(root / "studykb.toml"), root)
    assert relevant(str(root / "notes"), root)  # a folder (renamed or created)
    assert relevant(str(root / "gone-folder"), root)  # deleted: no extension
    for noise in (
        ".studykb/state.sqlite",
        ".git/index",
        "notes/.a.md.swp",
        "notes/a.md~",
        "notes/4913",
        "notes/#a.md#",
        "notes/a.png",
        "notes/.#a.md",
    ):
        assert not relevant(str(root / noise), root), noise
    assert not relevant(str(root / "drafts/a.md"), root, ("drafts",))
    assert not relevant("/elsewhere/a.md", root)


def test_a_second_watch_follows_the_first_and_takes_over(watching):
    vault, first = watching({"notes/a.md": "# A\n"})
    second = Watch(vault)
    try:
        second.expect(r"^watching ")
        write(vault / "notes/b.md", "# B\n\n[[nowhere]]\n")
        for watch in (first, second):  # the owner refreshed; both report it
            watch.expect(r"^\[[\d:]+\] added notes/b\.md$")
            watch.expect(r"^  new: notes/b\.md:3: error dangling-ref '\[\[nowhere\]\]'")
        code, _out, err = first.stop()
        assert code == 0
        write(vault / "notes/c.md", "# C\n\n[[nowhere-else]]\n")
        second.expect(r"^\[[\d:]+\] added notes/c\.md$")  # taken over
        second.expect(r"^  new: notes/c\.md:3: error dangling-ref")
    finally:
        code, out, err = second.stop()
    assert code == 0, err
    assert "studykb watch, pid " in err and "already keeps this vault fresh" in err
    assert "keeps the vault fresh now" in err
    assert "answering studykb commands" not in out.splitlines()[0]  # the first one answers
    assert "Traceback" not in err


def test_changes_another_process_wrote_are_not_lost(make_vault, open_vault):
    """The state brought up to date by someone else (a command, another watch) between
    two refreshes: the watch still sees what changed."""
    from studykb.editor.watch import Watcher

    root = make_vault({"notes/a.md": "# A\n", "notes/gone.md": "# Gone\n"})
    watcher = Watcher(open_vault(root))
    watcher.start()
    assert [d.title for d in watcher.kb.documents().values()] == ["A", "Gone"]
    write(root / "notes/b.md", "# B\n\n[[nowhere]]\n")
    (root / "notes/gone.md").unlink()
    other = open_vault(root, refresh=False)  # another process: it refreshes first
    assert other.refresh().changed
    change = watcher.refresh()
    assert change.stats.added == ["notes/b.md"] and change.stats.removed == ["notes/gone.md"]
    assert [(p.path, p.code) for p in change.new] == [("notes/b.md", "dangling-ref")]
    # what the watch kept in memory was read again: commands it answers see the change
    assert sorted(d.title for d in watcher.kb.documents().values()) == ["A", "B"]
    watcher.kb.close()
