"""What the web view shows of a tracked repository: where a code link goes, and a file
(or folder) of a clone with its commit, blob and the lines of the symbols asked for.

Everything is read from the clone's object store (:class:`studykb.repos.git.Clone`): a
path is looked up in the commit's trees, never on disk, so no path can lead out of the
clone. A repository that is not cloned here is still named, with its public address.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import quote

from dulwich.objects import Commit

from studykb.errors import StudyError
from studykb.model import fold
from studykb.parse.code_links import CodeLink, split_wikilink
from studykb.repos.changes import last_change
from studykb.repos.check import code_links, find_symbol, repo_of
from studykb.repos.git import MAX_BYTES, Clone, GitError, is_binary
from studykb.repos.symbols import symbols
from studykb.repos.tracked import Tracked, unique
from studykb.vault import Link, Vault


@dataclass(frozen=True)
class CodeTarget:
    """Where a code link goes."""

    repo: str
    """The tracked repository's name."""
    path: str
    lines: tuple[int, int] | None
    symbol: str | None
    rev: str | None
    cloned: bool
    public: str
    """The address of what it names on the repository's web host ('' when unknown)."""


@dataclass(frozen=True)
class CodeFile:
    """A file or folder of a tracked repository, as the web view shows it."""

    repo: str
    path: str
    rev: str | None
    url: str
    """The repository's address ('' when unknown)."""
    public: str
    """The file's address on the repository's web host ('' when unknown)."""
    cloned: bool
    commit: str = ""
    """The commit read (hex): ``rev``'s, else HEAD's ('' when not cloned)."""
    date: str = ""
    changed: str = ""
    """The newest commit at or before ``commit`` that changed the file ('' unknown)."""
    changed_date: str = ""
    blob: str = ""
    """The file's blob id (a folder's tree id)."""
    folder: bool = False
    files: tuple[str, ...] = ()
    text: str | None = None
    """The file's text; None when it is not shown (see ``message``)."""
    message: str = ""
    spans: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    """The lines of each symbol asked for (None: not defined in the file)."""


def public_url(url: str, path: str, rev: str | None, lines: tuple[int, int] | None) -> str:
    """``URL/blob/REV/path#L10-L40`` (GitHub's form, also GitLab's and Gitea's) for a
    repository at an http(s) address; '' for any other."""
    base = url.strip().rstrip("/").removesuffix(".git")
    if not base.lower().startswith(("https://", "http://")):
        return ""
    out = f"{base}/blob/{quote(rev or 'HEAD', safe='')}/{quote(path, safe='/')}"
    if lines:
        a, b = lines
        out += f"#L{a}" + (f"-L{b}" if b != a else "")
    return out


def target(repos: dict[str, Tracked], text: str, link: Link | None = None) -> CodeTarget | None:
    """Where the code link written ``text`` goes; None when it names no tracked one."""
    code = split_wikilink(text)
    if code is None:
        return None
    repo = repo_of(repos, link, code) if link is not None else repos.get(fold(code.repo))
    if repo is None:
        return None
    return _target(repo, code)


def _target(repo: Tracked, code: CodeLink) -> CodeTarget:
    public = public_url(repo.url, code.path, code.rev, code.lines)
    return CodeTarget(
        repo.name, code.path, code.lines, code.symbol, code.rev, repo.cloned, public
    )  # fmt: skip


def linked(vault: Vault, repos: dict[str, Tracked]) -> list[tuple[CodeTarget, Link]]:
    """Every code link into a tracked repository, with where it goes."""
    out = []
    for link, code in code_links(vault):
        repo = repo_of(repos, link, code)
        if repo is not None:
            out.append((_target(repo, code), link))
    return out


def heads(repos: dict[str, Tracked]) -> str:
    """A digest of the HEAD (and its refs) of every cloned tracked repository: what a
    page of their code may be made from besides the vault."""
    h = hashlib.blake2b(digest_size=16)
    for repo in unique(repos):
        h.update(f"\0{repo.name}\0{repo.url}\0{repo.clone or ''}\0{repo.cloned}".encode())
        if not repo.cloned or repo.clone is None:
            continue
        try:
            clone = Clone(repo.clone)
        except GitError as exc:
            h.update(str(exc).encode())
            continue
        try:
            for name, sha in sorted(clone.repo.get_refs().items()):
                h.update(name + b"=" + sha)
        except (KeyError, OSError, ValueError) as exc:
            h.update(str(exc).encode())
        finally:
            clone.close()
    return h.hexdigest()


def code_file(
    repos: dict[str, Tracked], name: str, path: str, rev: str | None, wanted: Iterable[str] = ()
) -> CodeFile:
    """The file (or folder) ``path`` of the repository ``name`` at ``rev`` (None: HEAD),
    with the lines of the symbols ``wanted``; a StudyError (exit 1) when the repository
    is not tracked, its clone cannot be read, or it has no such commit or path."""
    repo = repos.get(fold(name))
    path = path.strip("/")
    if repo is None:
        raise StudyError(f"No tracked repository is named {name!r}.")
    if not path or any(part in ("", ".", "..") for part in path.split("/")):
        raise StudyError(f"{path!r} is no path of a file in {repo.name}.")
    base = CodeFile(
        repo.name, path, rev, repo.url, public_url(repo.url, path, rev, None), repo.cloned
    )  # fmt: skip
    if not repo.cloned or repo.clone is None:
        return base
    try:
        clone = Clone(repo.clone)
    except GitError as exc:
        raise StudyError(f"{repo.name}: {exc}") from None
    try:
        return _read(clone, base, list(wanted))
    except GitError as exc:
        raise StudyError(f"{repo.name}:{path}: {exc}") from None
    finally:
        clone.close()


def _read(clone: Clone, base: CodeFile, wanted: list[str]) -> CodeFile:
    commit = clone.commit(base.rev)
    at = base.rev or "HEAD"
    try:
        entry = clone.entry(commit, base.path, read=False)
    except GitError as exc:  # a symbolic link, a submodule: named, never followed
        return _with(base, commit, message=str(exc))
    if entry is None:
        raise GitError(f"not in {base.repo} at {at}")
    if entry.folder:
        prefix = base.path + "/"
        files = tuple(p for p, _sha in clone.files(commit) if p.startswith(prefix))
        changed = last_change(clone, commit, base.path, entry.sha)
        values = {"blob": entry.sha.decode(), "folder": True, "files": files}
        return _with(base, commit, changed, **values)
    changed = last_change(clone, commit, base.path, entry.sha)
    found = _with(base, commit, blob=entry.sha.decode(), changed=changed)
    try:
        data = clone.read(entry.sha, base.path)
    except GitError as exc:
        return _with(found, None, message=f"{exc}; not shown (at most {MAX_BYTES // 1024} KiB)")
    if is_binary(data):
        return _with(found, None, message=f"{base.path} is a binary file; not shown")
    spans: dict[str, tuple[int, int] | None] = {}
    if wanted:
        table = symbols(data, base.path)
        spans = {s: (find_symbol(table, s) if table is not None else None) for s in wanted}
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    return _with(found, None, text=text, spans=spans)


def _with(
    base: CodeFile, commit: Commit | None, changed: Commit | None = None, **values: object
) -> CodeFile:
    if commit is not None:
        values.update(commit=commit.id.decode(), date=_iso(commit.commit_time))
    if changed is not None:
        values.update(changed=changed.id.decode(), changed_date=_iso(changed.commit_time))
    return replace(base, **values)  # type: ignore[arg-type]


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")
