"""What the front ends ask of the repo tracker: the tracked repositories with their state
(``studykb repos``), the notes that link into a file (``backlinks NAME:path``) and the
activity of the course units mapped to a repository's folders (``status``).

A unit of a course names what of the course's repository it is about with ``path:`` (a
folder or a file, or a list of them); its activity is the date of the last commit that
changed one of them. A unit with a commit in the last ``active_days`` days (studykb.toml,
14 by default) counts as being read, whatever its written status, unless it is ``done``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from studykb.errors import StudyError
from studykb.model import Problem
from studykb.parse.code_links import CodeLink, code_link
from studykb.repos.add import Added, add_repo
from studykb.repos.check import code_links, find_symbol, links_into, repo_of, with_code_problems
from studykb.repos.files import CodeFile, CodeTarget, code_file, heads, linked, target
from studykb.repos.git import Clone, GitError, is_binary
from studykb.repos.history import COMMITS, History, read_history
from studykb.repos.notes import counts
from studykb.repos.progress import RepoProgress, read_progress
from studykb.repos.show import Shown, find, show
from studykb.repos.symbols import language_of, symbols
from studykb.repos.tracked import Tracked, tracked, unique
from studykb.vault import Link, Vault

DAY = 86400


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True)
class Activity:
    """The last commit that changed what a unit maps to."""

    unit: str
    """The unit's key (``courses/x.md#a1``)."""
    paths: tuple[str, ...]
    date: str | None
    """ISO date of that commit (None: no commit changed them, or no clone)."""
    commit: str | None
    active: bool
    """A commit within the last ``active_days`` days."""


class RepoView:
    """The repo tracker of one vault, read when asked."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._repos: dict[str, Tracked] | None = None

    @property
    def repos(self) -> dict[str, Tracked]:
        if self._repos is None:
            self._repos = tracked(self.vault)
        return self._repos

    def with_problems(self, found: list[Problem]) -> list[Problem]:
        """``found`` (the vault's problems) with those of the code links and clones."""
        return with_code_problems(self.vault, found)

    def listing(self) -> list[dict[str, Any]]:
        """Each tracked repository: name, url, path, where it is declared, its state
        (``cloned``, ``missing``: no clone here, ``bad``: not readable), HEAD's commit and
        date, whether the working tree is clean, how many notes link into it, and how many
        of its own notes its ``notes`` gives the knowledge base (``own_notes``)."""
        own = counts(self.vault)
        notes: dict[str, set[str]] = {}
        for link, code in code_links(self.vault):
            mine = repo_of(self.repos, link, code)
            if mine is not None:
                notes.setdefault(mine.name, set()).add(link.ref.path)
        out = []
        for repo in unique(self.repos):
            row = _state(repo)
            message = row.pop("message")
            row.update(
                notes=len(notes.get(repo.name, ())),
                own_notes=own.get(repo.name, 0),
                message=message,
            )
            out.append(row)
        return out

    def show(self, name: str) -> Shown:
        """``repos show NAME``: the repository ``name`` names, its state, the progress its
        ``progress`` file states, its own notes and the links into its code by file; a
        StudyError (exit 1) with the closest names when no repository has that name."""
        repo = find(self.vault, self.repos, name)
        return show(self.vault, self.repos, repo, _state(repo))

    def progress(self, keys: list[str]) -> dict[str, RepoProgress]:
        """The progress the repository of each document of ``keys`` (a course or entry)
        states in its ``progress`` file, for those that name one; keyed by the key."""
        out: dict[str, RepoProgress] = {}
        for key in keys:
            repo = self.repos.get(key)
            found = read_progress(repo) if repo is not None else None
            if found is not None:
                out[key] = found
        return out

    def is_code(self, query: str) -> bool:
        """Whether ``query`` is ``NAME:path`` for a tracked repository NAME."""
        code = code_link(query)
        return code is not None and code.repo.casefold() in self.repos

    def backlinks(self, query: str) -> tuple[str, str, list[Link]]:
        """(repository name, path, the references) of the code links into ``NAME:path``
        (into the file, or into the folder and below)."""
        code = code_link(query)
        if code is None:
            return "", "", []
        repo = self.repos.get(code.repo.casefold())
        name = repo.name if repo else code.repo
        return name, code.path, [link for link, _code in links_into(self.vault, name, code.path)]

    def code(self, query: str, most: int = 400) -> dict[str, Any]:
        """What the code link ``query`` (``NAME:path#L10-40@rev``) shows: the lines (at
        most ``most``), or a folder's files; a StudyError (exit 1) saying why it cannot."""
        code = code_link(query)
        repo = self.repos.get(code.repo.casefold()) if code else None
        if code is None or repo is None:
            raise StudyError(f"{query!r} names no file of a tracked repository.")
        if not repo.cloned or repo.clone is None:
            where = f" ({repo.url})" if repo.url else ""
            raise StudyError(f"{repo.name} is not cloned on this machine{where}.")
        try:
            clone = Clone(repo.clone)
        except GitError as exc:
            raise StudyError(f"{repo.name}: {exc}") from None
        try:
            return _code(clone, repo.name, code, most)
        except GitError as exc:
            raise StudyError(f"{query}: {exc}") from None
        finally:
            clone.close()

    def target(self, text: str, link: Link | None = None) -> CodeTarget | None:
        """Where the code link written ``text`` goes (None: it names no tracked
        repository); ``link``: the reference it is, resolved by the vault."""
        return target(self.repos, text, link)

    def linked(self) -> list[tuple[CodeTarget, Link]]:
        """Every code link into a tracked repository, with where it goes."""
        return linked(self.vault, self.repos)

    def heads(self) -> str:
        """A digest of the refs of every cloned tracked repository."""
        return heads(self.repos)

    def file(
        self, name: str, path: str, rev: str | None = None, symbols: tuple[str, ...] = ()
    ) -> CodeFile:
        """The file or folder ``path`` of repository ``name`` at ``rev`` (HEAD), read from
        the clone's object store, with the lines of ``symbols``; a StudyError (exit 1)
        when there is no such repository, commit or path."""
        return code_file(self.repos, name, path, rev, symbols)

    def add(self, name: str, path: str, url: str | None = None) -> Added:
        """``repos add``: write ``[repos.NAME]`` (the clone at ``path``, its address
        ``url``, else its ``origin`` remote's) into studykb.toml; a StudyError, and
        nothing written, for a bad name, a name or address taken, a path no clone."""
        return add_repo(self.vault, self.repos, name, path, url)

    def history(self, since: str | None = None, commits: int = COMMITS) -> History:
        """Progress over time from the vault's own git history (``status --history``): a
        StudyError (exit 1) when the vault is in no git repository or it cannot be read."""
        try:
            return read_history(self.vault.config, self.vault.reading, since, commits)
        except GitError as exc:
            raise StudyError(str(exc)) from None

    def activity(self, units: list[Any], now: float | None = None) -> dict[str, Activity]:
        """The activity of each unit (documents of type ``unit``) whose course tracks a
        cloned repository and that maps to ``path:``; keyed by the unit's key."""
        days = self.vault.config.active_days
        now = time.time() if now is None else now
        out: dict[str, Activity] = {}
        clones: dict[str, Clone | None] = {}
        try:
            for unit in units:
                paths = _paths(unit.meta.get("path"))
                repo = self.repos.get(unit.parent or "")
                if not paths or repo is None or not repo.cloned or repo.clone is None:
                    continue
                if repo.name not in clones:
                    try:
                        clones[repo.name] = Clone(repo.clone)
                    except GitError:
                        clones[repo.name] = None
                clone = clones[repo.name]
                if clone is None:
                    continue
                found = [c for c in (clone.last_change(p) for p in paths) if c is not None]
                last = max(found, key=lambda c: c.commit_time, default=None)
                out[unit.key] = Activity(
                    unit.key,
                    paths,
                    _iso(last.commit_time) if last else None,
                    last.id.decode()[:12] if last else None,
                    bool(last and now - last.commit_time <= days * DAY),
                )
        finally:
            for clone in clones.values():
                if clone is not None:
                    clone.close()
        return out


def _state(repo: Tracked) -> dict[str, Any]:
    """A repository's name, url, clone, where it is declared and its state (``cloned``,
    ``missing``: no clone here, ``bad``: not readable) with HEAD's commit and date and
    whether the working tree is clean."""
    row: dict[str, Any] = {
        "name": repo.name,
        "url": repo.url or None,
        "path": str(repo.clone) if repo.clone else None,
        "declared": f"{repo.source}:{repo.line}",
        "state": "missing",
        "head": None,
        "date": None,
        "clean": None,
        "message": "",
    }
    if not repo.cloned or repo.clone is None:
        return row
    try:
        clone = Clone(repo.clone)
    except GitError as exc:
        row.update(state="bad", message=str(exc))
        return row
    try:
        head = clone.commit()
        row.update(
            state="cloned", head=head.id.decode(), date=_iso(head.commit_time), clean=_clean(clone)
        )
    except GitError as exc:
        row.update(state="bad", message=str(exc))
    finally:
        clone.close()
    return row


def _code(clone: Clone, name: str, code: CodeLink, most: int) -> dict[str, Any]:
    commit = clone.commit(code.rev)
    entry = clone.entry(commit, code.path)
    out: dict[str, Any] = {
        "repo": name,
        "path": code.path,
        "commit": commit.id.decode(),
        "date": _iso(commit.commit_time),
        "symbol": code.symbol,
        "language": language_of(code.path),
        "lines": None,
        "text": "",
        "files": [],
    }
    if entry is None:
        raise GitError(f"{code.path} is not in {name} at {code.rev or 'HEAD'}")
    if entry.folder:
        prefix = code.path + "/"
        out["files"] = [p for p, _sha in clone.files(commit) if p.startswith(prefix)]
        return out
    data = entry.data or b""
    if is_binary(data):
        raise GitError(f"{code.path} is a binary file")
    lines = data.decode("utf-8", "replace").splitlines()
    start, end = code.lines or (1, len(lines))
    if code.symbol:
        table = symbols(data, code.path)
        span = find_symbol(table, code.symbol) if table is not None else None
        if span is None:
            raise GitError(f"{code.symbol} is not defined in {code.path}")
        start, end = span
    if start < 1 or end > len(lines) or end < start:
        raise GitError(f"{code.path} has {len(lines)} lines; L{start}-{end} is not among them")
    end = min(end, start + most - 1)
    out["lines"] = [start, end]
    out["text"] = "\n".join(lines[start - 1 : end])
    return out


def _paths(value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    return tuple(v.strip().strip("/") for v in values if isinstance(v, str) and v.strip())


def _clean(clone: Clone) -> bool | None:
    """Whether the working tree matches HEAD (None: a bare clone, or not known)."""
    from dulwich import porcelain  # deferred: porcelain loads much of dulwich

    if clone.repo.bare:
        return None
    try:
        found = porcelain.status(clone.repo, untracked_files="no")
    except Exception:  # noqa: BLE001 - a state to show, never a failure of the listing
        return None
    staged = any(found.staged.values())
    return not staged and not found.unstaged
