"""What ``check`` says of links into code: each judged at the commit it follows (HEAD when
it names none), in the local clone, read through :mod:`studykb.repos.git`.

- ``dangling-code`` (error): the repository is not tracked, or the commit, the file, the
  line range or the symbol is not there; a missing file that a later commit renamed, and a
  symbol found elsewhere (another file, a close name), are suggested.
- ``unreadable-code`` (warning): what a link names cannot be read to judge it (a symbolic
  link, a submodule, a binary or huge file, a language whose symbols are not read).
- ``bad-repo`` (warning): a clone that is named but is no repository, or would be read
  outside its folder; the links into it are not judged.
- ``bad-progress`` (warning): the ``progress`` file a readable clone names cannot be
  counted at HEAD (not there, a folder, a binary file).

A repository tracked by URL only (no clone on this machine) is not judged at all.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dulwich.objects import Commit

from studykb.model import ERROR, WARNING, Problem, fold
from studykb.parse.code_links import CodeLink
from studykb.repos.git import Clone, Entry, GitError, is_binary
from studykb.repos.links import code_links as code_links
from studykb.repos.links import repo_of as repo_of
from studykb.repos.links import unknown_repo
from studykb.repos.symbols import Symbols, language_of, lines_of, symbols
from studykb.repos.tracked import Tracked, tracked
from studykb.vault import Link, Vault

#: At most this many files are parsed to find where a missing symbol went.
SEARCH_FILES = 400
#: The refs rows of code links.
#: Makes the problem of one link from a message (and a code and severity).
Bad = Callable[..., Problem]


@dataclass(frozen=True)
class Facts:
    """What judging a link needs of one file: its lines, whether it is binary, and its
    symbols (None: its language is not read; not asked: ``parsed`` False)."""

    lines: int
    binary: bool
    symbols: Symbols | None = None
    parsed: bool = False


@dataclass
class Reader:
    """Clones and parsed files shared by every link of one run: the seam that
    :class:`studykb.repos.cached.CachedReader` replaces with one kept across runs."""

    repos: dict[str, Tracked]
    clones: dict[str, Clone | GitError] = field(default_factory=dict)
    parsed: dict[tuple[bytes, str], Facts] = field(default_factory=dict)
    listing: dict[bytes, list[tuple[str, bytes]]] = field(default_factory=dict)
    blobs: dict[bytes, bytes | None] = field(default_factory=dict)
    """Files read while looking for a moved symbol, kept for the next one."""

    def blob(self, clone: Clone, sha: bytes) -> bytes | None:
        if sha not in self.blobs:
            self.blobs[sha] = clone.blob(sha)
        return self.blobs[sha]

    def clone(self, repo: Tracked) -> Clone | GitError | None:
        if not repo.cloned or repo.clone is None:
            return None
        if repo.name not in self.clones:
            try:
                self.clones[repo.name] = Clone(repo.clone)
            except GitError as exc:
                self.clones[repo.name] = exc
        return self.clones[repo.name]

    def entry(self, clone: Clone, commit: Commit, path: str) -> Entry | None:
        """``path`` at ``commit``, its bytes not read (None: not there)."""
        return clone.entry(commit, path, read=False)

    def facts(self, clone: Clone, sha: bytes, path: str, parse: bool = True) -> Facts:
        """The facts of blob ``sha`` at ``path``; GitError when it cannot be read."""
        key = (sha, language_of(path) or "")
        held = self.parsed.get(key)
        if held is not None and (held.parsed or not parse):
            return held
        data = self.blobs.get(sha) or clone.read(sha, path)
        found = make_facts(data, path, parse)
        self.parsed[key] = found
        return found

    def files(self, clone: Clone, commit: Commit) -> list[tuple[str, bytes]]:
        if commit.id not in self.listing:
            self.listing[commit.id] = clone.files(commit)
        return self.listing[commit.id]

    def defining(self, clone: Clone, commit: Commit, code: CodeLink) -> list[str]:
        """The files other than the link's own (of its language) that define its symbol,
        at most three, in path order."""
        return _elsewhere(self, clone, commit, code)

    def close(self) -> None:
        for clone in self.clones.values():
            if isinstance(clone, Clone):
                clone.close()


def make_facts(data: bytes, path: str, parse: bool = True) -> Facts:
    binary = is_binary(data)
    table = symbols(data, path) if parse and not binary else None
    return Facts(lines_of(data), binary, table, parse and not binary)


def bad_repo(reader: Reader, repo: Tracked) -> Problem | None:
    """The ``bad-repo`` problem of a repository whose clone cannot be read, where it is
    declared; None when it reads (or is not cloned here)."""
    clone = reader.clone(repo)
    if not isinstance(clone, GitError):
        return None
    path, line = repo.declared_at
    return Problem(path, line, WARNING, "bad-repo", f"repository {repo.name!r}: {clone}")


def bad_progress(reader: Reader, repo: Tracked) -> Problem | None:
    """The ``bad-progress`` problem of a readable clone whose ``progress`` file cannot be
    counted (not at HEAD, a folder, a binary file), where it is declared; None when it
    counts, names none, or the clone is not here or not readable (``bad-repo`` says so)."""
    clone = reader.clone(repo) if repo.progress else None
    if clone is None or isinstance(clone, GitError):
        return None
    # deferred: progress reads the clone's HEAD only for repositories that name a file
    from studykb.repos.progress import read_progress

    found = read_progress(repo, clone)
    if found is None or not found.message:
        return None
    path, line = repo.declared_at
    return Problem(path, line, WARNING, "bad-progress", f"repository {repo.name!r}: {found.line()}")


def clone_problems(reader: Reader, repo: Tracked) -> list[Problem]:
    """What ``check`` says of a tracked clone itself: ``bad-repo``, ``bad-progress``."""
    return [p for p in (bad_repo(reader, repo), bad_progress(reader, repo)) if p is not None]


def problems(vault: Vault) -> list[Problem]:
    """Every problem of the vault's code links and tracked clones, severities as configured."""
    # deferred: the cached reader is made of this module's Reader
    from studykb.repos.cached import CachedReader

    repos = tracked(vault)
    reader: Reader = CachedReader(repos, cache=vault.cache)
    out: list[Problem] = []
    try:
        for link, code in code_links(vault):
            found = judge(reader, link, code)
            if found is not None:
                out.append(found)
        for repo in {r.name: r for r in repos.values()}.values():
            out.extend(clone_problems(reader, repo))
    finally:
        reader.close()
    shown = (vault.config.as_configured(p) for p in out)
    return [p for p in shown if p is not None]


def with_code_problems(vault: Vault, found: list[Problem]) -> list[Problem]:
    """``found`` (the vault's problems) with those of its code links, in file order."""
    out = list(dict.fromkeys(found + problems(vault)))  # a bad clone a refresh said too
    return sorted(out, key=lambda p: (p.path, p.line, p.code, p.message))


def judge(reader: Reader, link: Link, code: CodeLink) -> Problem | None:
    """The problem of one code link, or None when it holds (or is not judged)."""
    try:
        return _judge(reader, link, code)
    except GitError as exc:  # a damaged clone, found while looking for suggestions
        ref = link.ref
        return Problem(ref.path, ref.line, WARNING, "unreadable-code", f"{ref.text!r}: {exc}")


def _judge(reader: Reader, link: Link, code: CodeLink) -> Problem | None:
    ref = link.ref
    repo = repo_of(reader.repos, link, code)

    def bad(message: str, kind: str = "dangling-code", level: str = ERROR) -> Problem:
        return Problem(ref.path, ref.line, level, kind, f"{ref.text!r}: {message}")

    if repo is None:
        return unknown_repo(reader.repos, link, code)
    clone = reader.clone(repo)
    if clone is None or isinstance(clone, GitError):
        return None  # not cloned here (URL only), or reported once as bad-repo
    if code.bad_anchor:
        return bad(f"#{code.bad_anchor} is neither a line range (#L10-40) nor a symbol name")
    try:
        commit = clone.commit(code.rev)
        entry = reader.entry(clone, commit, code.path)
        if entry is not None and not entry.folder and (code.lines or code.symbol):
            facts = reader.facts(clone, entry.sha, code.path, parse=bool(code.symbol))
    except GitError as exc:
        missing = "not in the clone" in str(exc)
        return bad(
            str(exc),
            "dangling-code" if missing else "unreadable-code",
            ERROR if missing else WARNING,
        )
    at = f"at {code.rev}" if code.rev else "at HEAD"
    if entry is None:
        return bad(
            f"{code.path} is not in {repo.name} {at}" + _moved(reader, clone, commit, code.path)
        )
    if not (code.lines or code.symbol):
        return None
    if entry.folder:
        return bad(f"{code.path} is a folder; a line range or symbol needs a file")
    if facts.binary:
        return bad(f"{code.path} is a binary file", "unreadable-code", WARNING)
    if code.lines:
        return _lines(bad, code, facts.lines, at)
    return _symbol(reader, clone, commit, facts, code, at, bad)


def _lines(bad: Bad, code: CodeLink, count: int, at: str) -> Problem | None:
    assert code.lines is not None
    start, end = code.lines
    if start < 1 or end < start:
        return bad(f"L{start}-{end} is not a range of lines (the first line is L1)")
    if end > count:
        lines = f"{count} line" + ("" if count == 1 else "s")
        return bad(f"{code.path} has {lines} {at}; L{start}-{end} runs past its end")
    return None


def _symbol(
    reader: Reader, clone: Clone, commit: Commit, facts: Facts, code: CodeLink, at: str, bad: Bad
) -> Problem | None:
    assert code.symbol is not None
    table = facts.symbols
    if table is None:
        return bad(
            f"symbols of {posixpath.splitext(code.path)[1] or 'such'} files are not read",
            "unreadable-code",
            WARNING,
        )
    if find_symbol(table, code.symbol) is not None:
        return None
    places = reader.defining(clone, commit, code)
    hint = "; it is defined in " + ", ".join(f"{p}#{code.symbol}" for p in places)
    if not places:
        close = difflib.get_close_matches(code.symbol, list(table), n=1, cutoff=0.7)
        hint = f"; {close[0]!r} is in the file" if close else ""
    return bad(f"{code.symbol} is not defined in {code.path} {at}{hint}")


def find_symbol(table: Symbols, symbol: str) -> tuple[int, int] | None:
    """The lines of ``symbol`` in ``table``: its own name, or a name ending in it (a
    namespace or enclosing class left out: ``Gemm.run`` for ``ops.Gemm.run``)."""
    if symbol in table:
        return table[symbol]
    tail = "." + symbol
    for name, span in table.items():
        if name.endswith(tail):
            return span
    return None


def related(language: str | None, other: str | None) -> bool:
    """Whether a symbol of a ``language`` file may have moved into an ``other`` one: the
    same language, or both C-like (C, C++, CUDA)."""
    if other is None:
        return False
    return language == other or not {language, other} - {"c", "cpp", "cuda"}


def _elsewhere(reader: Reader, clone: Clone, commit: Commit, code: CodeLink) -> list[str]:
    """The files of a related language that define the link's symbol (a scan of the
    files holding its last name, at most :data:`SEARCH_FILES` of them parsed)."""
    assert code.symbol is not None
    language = language_of(code.path)
    needle = code.symbol.rsplit(".", 1)[-1].encode()
    places: list[str] = []
    tried = 0
    for path, sha in reader.files(clone, commit):
        if path == code.path or not related(language, language_of(path)):
            continue
        data = reader.blob(clone, sha)
        if data is None or needle not in data:
            continue
        tried += 1
        table = reader.facts(clone, sha, path).symbols
        if table is not None and find_symbol(table, code.symbol) is not None:
            places.append(path)
        if tried >= SEARCH_FILES or len(places) >= 3:
            break
    return places


def _moved(reader: Reader, clone: Clone, commit: Commit, path: str) -> str:
    new = clone.moved(path, commit)
    if new:
        return f"; it was renamed to {new}"
    name = posixpath.basename(path)
    same = [p for p, _sha in reader.files(clone, commit) if posixpath.basename(p) == name]
    return f"; did you mean {', '.join(same[:3])}?" if same else ""


def links_into(vault: Vault, repo: str, path: str = "") -> list[tuple[Link, CodeLink]]:
    """The code links into ``repo`` (a name), into ``path`` or below it when given."""
    repos = tracked(vault)
    wanted = repos.get(fold(repo))
    out = []
    for link, code in code_links(vault):
        mine = repo_of(repos, link, code)
        if (mine.name if mine else fold(code.repo)) != (wanted.name if wanted else fold(repo)):
            continue
        inside = (
            not path or code.path == path.strip("/") or code.path.startswith(path.strip("/") + "/")
        )
        if inside:
            out.append((link, code))
    return out


def count_by_repo(vault: Vault, repos: Iterable[Tracked]) -> dict[str, int]:
    """How many notes link into each repository (by name)."""
    tracked_now = tracked(vault)
    notes: dict[str, set[str]] = {r.name: set() for r in repos}
    for link, code in code_links(vault):
        mine = repo_of(tracked_now, link, code)
        if mine is not None and mine.name in notes:
            notes[mine.name].add(link.ref.path)
    return {name: len(paths) for name, paths in notes.items()}
