"""A repository's progress as its own file states it: ``progress = "README.md"``.

``progress`` in ``[repos.NAME]`` (or in the ``repo:`` table of a course or of an entry
with ``kind: repo``) names one Markdown file of the repository; its task items
(``- [x]`` done, ``- [ ]`` open, as :mod:`studykb.parse.tasks` counts them) are the
repository's progress. The file is read from the clone's HEAD in git's object store,
never the working tree: what is committed is what counts. What cannot be read (no clone
here, no such file at HEAD, a folder, a symbolic link, a binary file) is said in
``message``, never raised.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from studykb.parse.tasks import count_tasks
from studykb.repos.git import Clone, GitError, is_binary
from studykb.repos.tracked import Tracked


@dataclass(frozen=True)
class RepoProgress:
    """The task items of a repository's ``progress`` file at HEAD."""

    repo: str
    path: str
    commit: str | None
    """HEAD's commit (hex; None: not read)."""
    date: str | None
    """HEAD's date (ISO; None: not read)."""
    done: int = 0
    total: int = 0
    message: str = ""
    """Why the file was not counted (empty: it was)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "path": self.path,
            "commit": self.commit,
            "date": self.date,
            "done": self.done if not self.message else None,
            "total": self.total if not self.message else None,
            "message": self.message or None,
        }

    def line(self) -> str:
        """``progress (README.md at a1b2c3d): 7 of 9 checked``, or why not."""
        if self.message:
            return f"progress ({self.path}): {self.message}"
        at = f" at {self.commit[:7]}" if self.commit else ""
        return f"progress ({self.path}{at}): {self.done} of {self.total} checked"


def read_progress(repo: Tracked, opened: Clone | None = None) -> RepoProgress | None:
    """The progress ``repo`` states in its ``progress`` file; None when it names none.
    ``opened``: its clone, already open (left open)."""
    if not repo.progress:
        return None
    path = posixpath.normpath(repo.progress.replace("\\", "/").strip("/"))

    def failed(message: str, commit: str | None = None, date: str | None = None) -> RepoProgress:
        return RepoProgress(repo.name, path, commit, date, message=message)

    if repo.clone is None or not repo.clone.exists():
        where = "names no clone here" if repo.clone is None else f"has no clone at {repo.clone}"
        return failed(f"{repo.name} {where}; its progress cannot be read without a clone")
    try:
        clone = opened or Clone(repo.clone)
    except GitError as exc:
        return failed(f"{repo.name}: {exc}")
    try:
        head = clone.commit()
        sha, date = head.id.decode(), datetime.fromtimestamp(head.commit_time, UTC)
        day = date.strftime("%Y-%m-%d")
        try:
            entry = clone.entry(head, path)
        except GitError as exc:
            return failed(f"{exc}", sha, day)
        if entry is None:
            return failed(f"{path} is not in {repo.name} at HEAD ({sha[:7]})", sha, day)
        if entry.folder or entry.data is None:
            return failed(f"{path} is a folder in {repo.name}, not a file", sha, day)
        if is_binary(entry.data):
            return failed(f"{path} is a binary file", sha, day)
        tasks = count_tasks(entry.data.decode("utf-8", "replace").removeprefix("\ufeff"))
        return RepoProgress(repo.name, path, sha, day, tasks.done, tasks.total)
    except GitError as exc:
        return failed(f"{repo.name}: {exc}")
    finally:
        if opened is None:
            clone.close()
