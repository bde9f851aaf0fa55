"""The reader of code links kept across runs (issue 29's speed bar): ``check`` after a
``git pull`` re-reads only the files the pull changed.

Two entries of the vault's cache (:mod:`studykb.vault.cache`, msgpack only), declared in
its ``MADE_BY``, so a change of the code that reads symbols invalidates them:

- ``repo-files``: what each file says, by blob id and language (a blob id names the
  bytes, so a kept row is never stale): its line count, whether it is binary, its symbols;
- ``repo-commits``: per clone and commit, the listing of its files (path, blob id) and,
  once a symbol was missing at that commit, the index of symbol names (each dotted tail
  too, as a link may leave out enclosing names) to the files that define them: "where
  did it go" is a look-up, not a scan.

Both are behind :class:`studykb.repos.check.Reader`'s methods; what they say is what the
plain reader says (its scan stops after :data:`~studykb.repos.check.SEARCH_FILES` files
holding the name; the index has no such limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dulwich.objects import Commit

from studykb.parse.code_links import CodeLink
from studykb.repos.check import Facts, Reader, related
from studykb.repos.git import Clone, Entry, GitError
from studykb.repos.symbols import language_of
from studykb.vault.cache import Cache
from studykb.vault.cache import key as cache_key

FILES_ENTRY = "repo-files"
COMMITS_ENTRY = "repo-commits"
#: Kept rows of files beyond this: only those used by the last run are written back.
MAX_FILES = 50_000
#: Commits kept per vault (the newest used).
MAX_COMMITS = 8


@dataclass
class _Commit:
    files: dict[str, bytes]
    index: dict[str, list[str]] | None = None


@dataclass
class CachedReader(Reader):
    """:class:`Reader` whose facts of files and listings of commits are kept in ``cache``
    (written back by :meth:`close`)."""

    cache: Cache | None = None
    _rows: dict[str, Any] = field(default_factory=dict)
    _used: set[str] = field(default_factory=set)
    _new: bool = False
    _commits: dict[str, _Commit] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _commits_new: bool = False
    _loaded: bool = False

    def _load(self) -> None:
        if self._loaded or self.cache is None:
            self._loaded = True
            return
        self._loaded = True
        rows = self.cache.get(FILES_ENTRY, cache_key(FILES_ENTRY), keep=False)
        if isinstance(rows, dict):
            self._rows = rows
        kept = self.cache.get(COMMITS_ENTRY, cache_key(COMMITS_ENTRY), keep=False)
        if isinstance(kept, dict):
            try:
                for ident in kept["order"]:
                    row = kept["commits"][ident]
                    files = {str(p): str(s).encode() for p, s in row["files"]}
                    index = row.get("index")
                    paths = list(files)
                    self._commits[str(ident)] = _Commit(
                        files,
                        None
                        if index is None
                        else {str(k): [paths[i] for i in v] for k, v in index.items()},
                    )
                    self._order.append(str(ident))
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                self._commits, self._order = {}, []

    def facts(self, clone: Clone, sha: bytes, path: str, parse: bool = True) -> Facts:
        self._load()
        name = f"{sha.decode()}:{language_of(path) or ''}"
        row = self._rows.get(name)
        found = _facts(row)
        if found is not None and (found.parsed or not parse):
            self._used.add(name)
            return found
        found = super().facts(clone, sha, path, parse)
        self._rows[name] = [
            found.lines,
            found.binary,
            found.parsed,
            None if found.symbols is None else [[k, a, b] for k, (a, b) in found.symbols.items()],
        ]
        self._used.add(name)
        self._new = True
        return found

    def _commit(self, clone: Clone, commit: Commit) -> _Commit:
        self._load()
        ident = f"{clone.folder}\x1f{commit.id.decode()}"
        held = self._commits.get(ident)
        if held is None:
            held = _Commit(dict(clone.files(commit)))
            self._commits[ident] = held
            self._commits_new = True
        if ident in self._order:
            self._order.remove(ident)
        self._order.append(ident)
        return held

    def files(self, clone: Clone, commit: Commit) -> list[tuple[str, bytes]]:
        return sorted(self._commit(clone, commit).files.items())

    def entry(self, clone: Clone, commit: Commit, path: str) -> Entry | None:
        sha = self._commit(clone, commit).files.get(path)
        if sha is not None:
            return Entry(path, False, None, sha)
        return super().entry(clone, commit, path)  # a folder, a link, a submodule, none

    def defining(self, clone: Clone, commit: Commit, code: CodeLink) -> list[str]:
        assert code.symbol is not None
        index = self._index(clone, self._commit(clone, commit))
        language = language_of(code.path)
        places = []
        for path in index.get(code.symbol, ()):  # each defines it (find_symbol)
            if path != code.path and related(language, language_of(path)):
                places.append(path)
                if len(places) >= 3:
                    break
        return places

    def _index(self, clone: Clone, held: _Commit) -> dict[str, list[str]]:
        """The commit's index of symbol names: made from that of another commit of the
        clone (only the files whose blob differs are read), else from every file."""
        if held.index is not None:
            return held.index
        mine = f"{clone.folder}\x1f"
        base = next(
            (
                self._commits[i]
                for i in reversed(self._order)
                if i.startswith(mine) and self._commits[i].index is not None
            ),
            None,
        )
        index: dict[str, list[str]] = {}
        changed = sorted(held.files)
        if base is not None and base.index is not None:
            gone = {p for p, sha in base.files.items() if held.files.get(p) != sha}
            changed = [p for p in changed if base.files.get(p) != held.files[p]]
            for name, paths in base.index.items():
                kept = [p for p in paths if p not in gone]
                if kept:
                    index[name] = kept
        touched: set[str] = set()
        for path in changed:
            if language_of(path) is None:
                continue
            try:
                table = self.facts(clone, held.files[path], path).symbols
            except GitError:  # a file too large to read defines nothing here
                continue
            for name in {tail for full in table or () for tail in _suffixes(full)}:
                index.setdefault(name, []).append(path)
                touched.add(name)
        for name in touched:
            index[name].sort()
        held.index = index
        self._commits_new = True
        return index

    def close(self) -> None:
        # each clone's HEAD, once checked, is indexed, so that after a pull the new
        # commit's index is made from it (only the files the pull changed are read)
        for clone in self.clones.values():
            if not isinstance(clone, Clone) or self.cache is None:
                continue
            try:
                head = self._commits.get(f"{clone.folder}\x1f{clone.commit().id.decode()}")
                if head is not None:
                    self._index(clone, head)
            except GitError:
                continue
        super().close()
        if self.cache is None:
            return
        if self._new:
            rows = self._rows
            if len(rows) > MAX_FILES:
                rows = {k: v for k, v in rows.items() if k in self._used}
            self.cache.put(FILES_ENTRY, cache_key(FILES_ENTRY), rows, keep=False)
        if self._commits_new:
            order = self._order[-MAX_COMMITS:]
            commits = {}
            for ident in order:
                held = self._commits[ident]
                paths = sorted(held.files)
                at = {p: i for i, p in enumerate(paths)}
                commits[ident] = {
                    "files": [[p, held.files[p].decode()] for p in paths],
                    "index": None
                    if held.index is None
                    else {k: [at[p] for p in v] for k, v in held.index.items()},
                }
            value = {"order": order, "commits": commits}
            self.cache.put(COMMITS_ENTRY, cache_key(COMMITS_ENTRY), value, keep=False)


def _suffixes(name: str) -> list[str]:
    """The names :func:`~studykb.repos.check.find_symbol` finds ``name`` by: itself and
    each dotted tail (``ops.Gemm.run``: ``Gemm.run``, ``run``)."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _facts(row: Any) -> Facts | None:
    """The facts a kept row holds (None: no row, or not one)."""
    if not isinstance(row, list) or len(row) != 4:
        return None
    lines, binary, parsed, table = row
    try:
        symbols = None if table is None else {str(k): (int(a), int(b)) for k, a, b in table}
        return Facts(int(lines), bool(binary), symbols, bool(parsed))
    except (TypeError, ValueError):
        return None
