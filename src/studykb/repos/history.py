"""Progress over time from the vault's own git history (``studykb status --history``).

The vault's folder is, or lies inside, a git repository: each commit of its first-parent
line (the main line, newest first from HEAD, at most ``commits`` of them and none before
``since``) is compared with its parent, folder by folder, inside the vault's folder only;
each changed Markdown file that the vault reads (not hidden, not excluded) is parsed with
the project's own parser, and each document with a ``status:`` and each course unit (one
without a status counts as todo) whose status differs from before is an event. The
timeline is the count of done, reading and todo after the last commit of each day that
changed something.

Read-only, like the rest of the repo tracker: objects are read from git's store with
dulwich, never from the working tree; nothing is written; no hook runs. A worktree (a
``.git`` file naming its folder in the main repository) is read as git reads it.
"""

from __future__ import annotations

import fnmatch
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from studykb.config import Config
from studykb.errors import UsageError
from studykb.parse import parse_file
from studykb.parse.reading import DRAWING, Reading
from studykb.repos.git import MAX_BYTES, GitError

#: Commits walked when not told otherwise.
COMMITS = 2000
STATES = ("done", "reading", "todo")
_BROKEN = (KeyError, OSError, ValueError, AssertionError, zlib.error)


@dataclass(frozen=True)
class Item:
    """A document or course unit that has a status, as one version of its file says."""

    id: str
    title: str
    status: str


@dataclass(frozen=True)
class Event:
    """A status that changed in a commit (``before`` None: the document was not there or
    had no status; ``after`` None: it was removed, or its status was)."""

    date: str
    commit: str
    id: str
    path: str
    title: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Day:
    """The counts after the last commit of a day."""

    date: str
    done: int
    reading: int
    todo: int

    @property
    def total(self) -> int:
        return self.done + self.reading + self.todo


@dataclass(frozen=True)
class History:
    days: tuple[Day, ...]
    """Oldest first: the first day walked, then each day whose commits changed a status."""
    events: tuple[Event, ...]
    """Oldest first."""
    repository: str
    """The work tree of the repository read."""
    folder: str
    """The vault's folder inside it ("" at its root)."""
    commits: int
    """Commits walked."""
    complete: bool
    """Whether the walk reached the first commit. False: cut by ``since`` or ``commits``
    (the counts start from the files of the commit before the oldest walked), or a
    shallow clone (from the files of its oldest commit, whose own changes are unknown)."""


def find_repository(root: Path) -> Path:
    """The work tree of the git repository holding ``root``; GitError when none does."""
    start = root.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    raise GitError(
        f"{start} is not in a git repository: the progress history is read from the "
        "vault's git history (commit the vault with git to have one)"
    )


def read_history(
    config: Config, reading: Reading, since: str | None = None, commits: int = COMMITS
) -> History:
    """The timeline and events of the vault at ``config.root``; GitError when there is no
    repository or it cannot be read."""
    top = find_repository(config.root)
    try:
        repo = Repo(str(top))
    except NotGitRepository:
        raise GitError(f"{top} is not a git repository") from None
    except _BROKEN as exc:
        raise GitError(f"{top} cannot be read as a git repository: {exc}") from None
    try:
        folder = config.root.resolve().relative_to(top).as_posix()
        folder = "" if folder == "." else folder
        return _Walk(repo, config, reading, folder).run(top, _since(since), max(commits, 1))
    except _BROKEN as exc:
        raise GitError(f"the git repository at {top} is damaged: {exc}") from None
    finally:
        repo.close()


def _since(value: str | None) -> int | None:
    if not value:
        return None
    try:
        day = datetime.strptime(value.strip(), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(f"--since {value!r} is not a date (YYYY-MM-DD)") from None
    return int(day.timestamp())


def local_date(commit: Commit) -> str:
    """The day of ``commit`` where it was made (its committer's time zone)."""
    zone = timezone(timedelta(seconds=commit.commit_timezone))
    return datetime.fromtimestamp(commit.commit_time, zone).strftime("%Y-%m-%d")


@dataclass
class _Walk:
    repo: Repo
    config: Config
    reading: Reading
    folder: str
    files: dict[str, dict[str, Item]] = field(default_factory=dict)
    """Vault path -> the items its current version holds."""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATES, 0))

    def run(self, top: Path, since: int | None, most: int) -> History:
        line, complete = self._line(since, most)
        days: list[Day] = []
        events: list[Event] = []
        if line:
            start = None if complete else self._parent(line[0])
            if not complete and start is None:  # a shallow clone: its oldest commit's files
                start = line[0]
            previous = self._vault_tree(start)
            for path, _old, new in self._changes(None, previous):  # the counts before
                self._set(path, self._items(path, new))
            for commit in line:
                tree = self._vault_tree(commit)
                found = self._apply(commit, previous, tree)
                previous = tree
                date = local_date(commit)
                if days and date < days[-1].date:
                    date = days[-1].date  # a commit dated before its parent: kept in order
                if found or not days:
                    events.extend(found)
                    day = Day(date, *(self.counts[state] for state in STATES))
                    if days and days[-1].date == date:
                        days[-1] = day
                    else:
                        days.append(day)
        return History(tuple(days), tuple(events), str(top), self.folder, len(line), complete)

    def _line(self, since: int | None, most: int) -> tuple[list[Commit], bool]:
        """The first-parent line from HEAD, oldest first, and whether it is all of it."""
        try:
            head = self.repo.head()
        except KeyError:
            raise GitError("the repository has no commits yet") from None
        shallow = self.repo.get_shallow()
        out: list[Commit] = []
        commit: Commit | None = self._commit(head)
        while commit is not None:
            if len(out) >= most or (since is not None and commit.commit_time < since):
                out.reverse()
                return out, False
            out.append(commit)
            if not commit.parents or commit.id in shallow:
                out.reverse()
                return out, not commit.parents
            commit = self._commit(commit.parents[0])
        out.reverse()
        return out, True

    def _commit(self, sha: bytes) -> Commit:
        found = self.repo[sha]
        if not isinstance(found, Commit):
            raise GitError(f"{sha.decode()} is not a commit")
        return found

    def _parent(self, commit: Commit) -> Commit | None:
        if not commit.parents or commit.id in self.repo.get_shallow():
            return None
        return self._commit(commit.parents[0])

    def _vault_tree(self, commit: Commit | None) -> bytes | None:
        """The tree of the vault's folder at ``commit`` (None: not there then)."""
        if commit is None:
            return None
        sha = commit.tree
        for name in self.folder.split("/") if self.folder else ():
            tree = self.repo[sha]
            if not isinstance(tree, Tree) or name.encode() not in tree:
                return None
            mode, sha = tree[name.encode()]
            if not stat.S_ISDIR(mode):
                return None
        return bytes(sha)

    def _apply(self, commit: Commit, old: bytes | None, new: bytes | None) -> list[Event]:
        before: dict[str, tuple[str, Item]] = {}
        after: dict[str, tuple[str, Item]] = {}
        for path, _old_blob, new_blob in self._changes(old, new):
            for item in self.files.get(path, {}).values():
                before[item.id] = (path, item)
            items = self._items(path, new_blob)
            for item in items.values():
                after[item.id] = (path, item)
            self._set(path, items)
        date, sha = local_date(commit), commit.id.decode()[:12]
        events = []
        for ident in sorted(before.keys() | after.keys()):
            was, now = before.get(ident), after.get(ident)
            status_was = was[1].status if was else None
            status_now = now[1].status if now else None
            if status_was != status_now:
                path, item = now or was  # type: ignore[misc]
                events.append(Event(date, sha, ident, path, item.title, status_was, status_now))
        return events

    def _set(self, path: str, items: dict[str, Item]) -> None:
        for item in self.files.pop(path, {}).values():
            self.counts[item.status] -= 1
        if items:
            self.files[path] = items
            for item in items.values():
                self.counts[item.status] += 1

    def _changes(
        self, old: bytes | None, new: bytes | None, prefix: str = ""
    ) -> Iterator[tuple[str, bytes | None, bytes | None]]:
        """(vault path, old blob, new blob) of each Markdown file the vault reads that
        differs between the trees ``old`` and ``new``; an equal folder is not entered."""
        if old == new:
            return
        was, now = self._entries(old), self._entries(new)
        for name in sorted(was.keys() | now.keys()):
            a, b = was.get(name), now.get(name)
            if a == b or name.startswith(".") or self._excluded(prefix + name, name):
                continue
            path = prefix + name
            a_dir = a is not None and stat.S_ISDIR(a[0])
            b_dir = b is not None and stat.S_ISDIR(b[0])
            if a_dir or b_dir:
                yield from self._changes(
                    a[1] if a and a_dir else None, b[1] if b and b_dir else None, path + "/"
                )
            if not _markdown(name):
                continue
            a_file = a[1] if a is not None and stat.S_ISREG(a[0]) else None
            b_file = b[1] if b is not None and stat.S_ISREG(b[0]) else None
            if a_file != b_file:
                yield path, a_file, b_file

    def _entries(self, sha: bytes | None) -> dict[str, tuple[int, bytes]]:
        if sha is None:
            return {}
        tree = self.repo[sha]
        if not isinstance(tree, Tree):
            return {}
        return {
            item.path.decode("utf-8", "replace"): (item.mode, item.sha) for item in tree.items()
        }

    def _excluded(self, rel: str, name: str) -> bool:
        """``exclude`` of studykb.toml, as the vault's scan reads it."""
        excluded = self.config.exclude
        if not excluded:
            return False
        if rel in excluded or name in excluded:
            return True
        return any(
            fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p)
            for p in excluded
            if any(c in p for c in "*?[")
        )

    def _items(self, path: str, blob: bytes | None) -> dict[str, Item]:
        """The documents with a status and the course units of one version of a file."""
        if blob is None:
            return {}
        found = self.repo[blob]
        if not isinstance(found, Blob) or found.raw_length() > MAX_BYTES:
            return {}
        raw = found.as_raw_string()
        if not may_track(raw):
            return {}
        out: dict[str, Item] = {}
        for doc in parse_file(path, raw, self.reading).documents:
            if doc.status or doc.type == "unit":
                out[doc.id] = Item(doc.id, doc.title, doc.status or "todo")
        return out


def may_track(raw: bytes) -> bool:
    """Speed seam: a file that says neither ``status`` nor ``units`` holds nothing the
    history counts, and is not parsed."""
    return b"status" in raw or b"units" in raw


def _markdown(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(".md") and not lower.endswith(DRAWING)
