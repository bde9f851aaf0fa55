"""Completion inside a code link, for the language server: after ``[[NAME:`` the folders
and files of the repository's HEAD, one folder level at a time; after ``[[NAME:path#``
the symbols of that file (and ``L1``). Read from the local clone like everything else
here; a repository without a clone completes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from studykb.config import Config
from studykb.model import Document, fold
from studykb.repos.git import Clone, GitError, is_binary
from studykb.repos.symbols import symbols
from studykb.repos.tracked import tracked_in
from studykb.runtime import process

#: At most this many candidates are offered.
LIMIT = 200


@process.memo(maxsize=8)
def _listing(folder: str, head_id: bytes) -> tuple[str, ...]:
    """The files of the clone at ``folder`` at commit ``head_id``: read once per HEAD."""
    clone = Clone(Path(folder))
    try:
        return tuple(p for p, _sha in clone.files(clone.commit(head_id.decode())))
    finally:
        clone.close()


def code_candidates(
    root: Path, config: Config, docs: Iterable[Document], name: str, prefix: str, path: str = ""
) -> list[tuple[str, str]]:
    """(text to insert, detail) for what is typed after ``[[name:`` (``path`` empty) or
    after ``[[name:path#``."""
    repo = tracked_in(root, config, docs).get(fold(name))
    if repo is None or not repo.cloned or repo.clone is None:
        return []
    try:
        clone = Clone(repo.clone)
    except GitError:
        return []
    try:
        head = clone.commit()
        if path:
            entry = clone.entry(head, path)
            if entry is None or entry.folder or entry.data is None or is_binary(entry.data):
                return []
            table = symbols(entry.data, path) or {}
            return [
                (sym, f"lines {a}-{b} of {path}")
                for sym, (a, b) in table.items()
                if sym.startswith(prefix)
            ][:LIMIT]
        return _level(list(_listing(str(repo.clone), head.id)), prefix, repo.name)
    except GitError:
        return []
    finally:
        clone.close()


def _level(files: list[str], prefix: str, name: str) -> list[tuple[str, str]]:
    """The folders (ending in ``/``) and files right below the folder ``prefix`` is in,
    whose names start with what is typed of the last part."""
    folder = prefix.rpartition("/")[0]
    start = folder + "/" if folder else ""
    seen: dict[str, str] = {}
    for path in files:
        if not path.startswith(prefix):
            continue
        rest = path[len(start) :]
        head, slash, _tail = rest.partition("/")
        text = start + head + slash
        seen.setdefault(text, f"folder of {name}" if slash else f"file of {name}")
        if len(seen) >= LIMIT:
            break
    return sorted(seen.items())
