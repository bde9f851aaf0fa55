"""``repos show NAME``: one tracked repository in full.

Its name, address, clone and state, HEAD; the progress its ``progress`` file states; the
notes of its own its ``notes`` reads into the vault (``NAME:path``, with their titles);
and the notes that link into its code, grouped by the file (or folder) they link into,
as ``backlinks NAME:path`` lists them for each.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studykb.errors import StudyError
from studykb.model import fold
from studykb.repos.links import code_links, repo_of
from studykb.repos.progress import RepoProgress, read_progress
from studykb.repos.tracked import Tracked, unique
from studykb.vault.outside import is_outside, split

if TYPE_CHECKING:
    from studykb.vault import Link, Vault


@dataclass(frozen=True)
class OwnNote:
    """One of the repository's own notes read into the vault."""

    path: str
    """``NAME:path``."""
    id: str
    title: str


@dataclass
class Shown:
    repo: Tracked
    state: dict[str, Any]
    """name, url, path, declared, state, head, date, clean, message (as ``repos`` lists)."""
    progress: RepoProgress | None
    own: list[OwnNote] = field(default_factory=list)
    files: list[tuple[str, list[Link]]] = field(default_factory=list)
    """(path in the repository, the links into it), by path."""


def find(vault: Vault, repos: dict[str, Tracked], name: str) -> Tracked:
    """The tracked repository ``name`` names (its name, in any case, or an alias of the
    course or entry that tracks it); a StudyError (exit 1) with the closest names."""
    found = repos.get(fold(name.strip()))
    if found is not None:
        return found
    wanted = fold(name.strip())
    for key, _path, _id, _title, dtype, aliases, *_rest in vault.name_rows():
        if dtype in ("entry", "course") and key in repos and aliases:
            try:
                said = json.loads(aliases)
            except ValueError:
                continue
            if isinstance(said, list) and wanted in {fold(a) for a in said if isinstance(a, str)}:
                return repos[key]
    names = [r.name for r in unique(repos)]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    close += [n for n in names if wanted and wanted in fold(n) and n not in close]
    hint = "Did you mean: " + ", ".join(close[:3]) + "?" if close else None
    if not names:
        hint = "No repository is tracked: see `studykb repos add`."
    raise StudyError(f"No tracked repository named {name!r}.", hint=hint)


def show(vault: Vault, repos: dict[str, Tracked], repo: Tracked, state: dict[str, Any]) -> Shown:
    """Everything ``repos show`` prints of ``repo`` (``state``: its row of the listing)."""
    out = Shown(repo, state, read_progress(repo))
    paths = sorted(
        path
        for path, digest in vault.file_hashes().items()
        if is_outside(digest) and (split(path) or ("",))[0] == repo.name
    )
    if paths:
        rows: dict[str, tuple[str, str]] = {}
        for key, path, ident, title, *_rest in vault.name_rows(paths):
            if path not in rows or key == path:
                rows[path] = (ident, title)
        out.own = [OwnNote(p, *rows.get(p, ("", ""))) for p in paths]
    grouped: dict[str, list[Link]] = {}
    for link, code in code_links(vault):
        mine = repo_of(repos, link, code)
        if mine is not None and mine.name == repo.name:
            grouped.setdefault(code.path.strip("/"), []).append(link)
    out.files = sorted(grouped.items())
    return out
