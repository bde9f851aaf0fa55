"""Small real git repositories for the repo tracker's tests, made with dulwich.

``GitRepo(folder).commit({"a.py": "..."}, "message", when=...)`` writes the files (None
deletes one), stages everything and commits; the commit id (hex) is returned.
"""

from __future__ import annotations

import os
from pathlib import Path

from dulwich import porcelain
from dulwich.repo import Repo

DAY = 86400
#: 2026-11-01 00:00 UTC
START = 1793491200


class GitRepo:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.repo = Repo.init(str(folder))

    def commit(
        self,
        files: dict[str, str | bytes | None],
        message: str = "change",
        when: int = START,
        also: list[str] = (),  # type: ignore[assignment]
    ) -> str:
        for rel, content in files.items():
            path = self.folder / rel
            if content is None:
                if path.exists() or path.is_symlink():
                    path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        gone = [r for r, c in files.items() if c is None]
        if gone:
            porcelain.remove(self.repo, paths=[str(self.folder / r) for r in gone], cached=True)
        kept = [str(self.folder / r) for r, c in files.items() if c is not None] + [
            str(self.folder / r) for r in also
        ]
        if kept:
            porcelain.add(self.repo, paths=kept)
        sha = self.repo.get_worktree().commit(
            message.encode(),
            committer=b"T <t@example.com>",
            author=b"T <t@example.com>",
            commit_timestamp=when,
            commit_timezone=0,
            author_timestamp=when,
            author_timezone=0,
        )
        return sha.decode()

    def symlink(self, rel: str, target: str, when: int = START) -> str:
        """Commit ``rel`` as a symbolic link to ``target``."""
        os.symlink(target, self.folder / rel)
        return self.commit({}, "link", when, also=[rel])
