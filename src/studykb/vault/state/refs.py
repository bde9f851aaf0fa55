"""``refs``: every reference written in a file, in the order written (``n``), with
what it resolved to (``target_key``, ``state``, ``note``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from studykb.model import Reference
from studykb.vault.state.rows import (
    Anchored,
    AttachmentRef,
    Edge,
    EdgeRow,
    Link,
    RefRow,
    Requires,
    ToResolve,
)
from studykb.vault.state.schema import Table, chunks, marks

_LINKS = (
    "SELECT source, path, line, kind, text, target, style, anchor, reason, optional,"
    " target_key, state, note FROM refs"
)
_EDGES = "SELECT source, target_key, kind, path, line, reason FROM refs"
_ANCHORED = (
    "SELECT r.path, r.line, r.text, r.anchor, d.path FROM refs r"
    " JOIN docs d ON d.key = r.target_key"
    " WHERE r.anchor != '' AND instr(r.target_key, '#') = 0"
    " AND substr(r.anchor, 1, 1) != '^'"
)
_TO_RESOLVE = (
    "SELECT n, source, path, target, style, anchor, optional, text, kind, target_key FROM refs"
)
_ASSETS = "SELECT path, line, text, target, style FROM refs WHERE state='asset'"
# joined, not `target_key IN (...)`: with a list of paths that form crossed every path
# with every course (170 ms for 1,000 paths at 10k notes, 3 ms joined)
_COURSES = (
    "SELECT r.source, r.target_key FROM refs AS r JOIN docs AS d ON d.key = r.target_key"
    " WHERE r.kind = 'course' AND d.type IN ('course', 'unit')"
)


class Refs(Table):
    """The ``refs`` table."""

    __slots__ = ()

    # -- references with their resolution ---------------------------------------------------
    def _links(self, where: str = "", args: tuple[Any, ...] = ()) -> list[Link]:
        out = []
        for row in self.db.execute(f"{_LINKS} {where}", args):
            (
                source,
                path,
                line,
                kind,
                text,
                target,
                style,
                anchor,
                reason,
                optional,
                target_key,
                state,
                note,
            ) = row
            ref = Reference(
                source, path, line, kind, text, target, style, anchor, reason, bool(optional)
            )
            out.append(Link(ref, target_key, state or "dangling", note or ""))
        return out

    def links(self) -> list[Link]:
        """Every reference, in the order written."""
        return self._links()

    def links_to(self, key: str) -> list[Link]:
        """Every reference to ``key``, in file and line order."""
        return self._links("WHERE target_key=? ORDER BY path, line", (key,))

    def links_from(self, key: str) -> list[Link]:
        """Every reference the document ``key`` holds, in line order."""
        return self._links("WHERE source=? ORDER BY line", (key,))

    def links_in(self, path: str) -> list[Link]:
        """Every reference written in the file ``path``, in line order."""
        return self._links("WHERE path=? ORDER BY line, n", (path,))

    def code_links(self) -> list[Link]:
        """The links into tracked repositories' code, in file and line order."""
        return self._links("WHERE style='code' ORDER BY path, line")

    def unresolved(self) -> list[Link]:
        """The references that resolve to no document, or to one of several."""
        return self._links("WHERE state IN ('dangling', 'ambiguous')")

    # -- resolved references as edges ----------------------------------------------------------
    def graph_edges(self) -> Iterator[EdgeRow]:
        """(source, target key, kind, path, line, reason) of every resolved reference,
        in the order written, as they come (the graph reads ~100k of them)."""
        return self.db.execute(f"{_EDGES} WHERE target_key IS NOT NULL ORDER BY n")

    def graph_edges_in(self, paths: Iterable[str]) -> list[EdgeRow]:
        """:meth:`graph_edges` of the references written in ``paths``, each file's in the
        order written."""
        out: list[EdgeRow] = []
        for chunk in chunks(paths):
            sql = f"{_EDGES} WHERE target_key IS NOT NULL AND path IN ({marks(chunk)}) ORDER BY n"
            out.extend(self.db.execute(sql, chunk))
        return out

    def edges(self, kind: str | None = None, order: str = "n") -> list[Edge]:
        """Resolved references as edges; only ``kind`` ones when given. ``order``:
        ``n`` (the order they were written in the files), ``line`` (by file and line) or
        ``source`` (by source, then line)."""
        return list(self.each_edge(kind, order))

    def each_edge(self, kind: str | None = None, order: str = "n") -> Iterator[Edge]:
        """:meth:`edges` as they are read (a whole vault's, never all held at once)."""
        by = {"n": "n", "line": "path, line, n", "source": "source, line, n"}[order]
        where = "target_key IS NOT NULL" + (" AND kind = ?" if kind else "")
        rows = self.db.execute(f"{_EDGES} WHERE {where} ORDER BY {by}", (kind,) if kind else ())
        return (Edge(*row) for row in rows)

    def wiki_labels(self, paths: Iterable[str] | None = None) -> list[tuple[str, str, str, str]]:
        """(path, source, target key, the reference as written) of every resolved body
        link written ``[[target|label]]`` (not an embed) in a document other than its
        target (in ``paths`` only, when given), for the related documents' names
        (:mod:`studykb.related.labels`)."""
        sql = (
            "SELECT path, source, target_key, text FROM refs WHERE kind = 'link'"
            " AND target_key IS NOT NULL AND text LIKE '[[%|%]]' AND source != target_key"
        )
        if paths is None:
            return [(a, b, c, d) for a, b, c, d in self.db.execute(sql)]
        out: list[tuple[str, str, str, str]] = []
        for chunk in chunks(paths):
            rows = self.db.execute(f"{sql} AND path IN ({marks(chunk)})", chunk)
            out.extend((a, b, c, d) for a, b, c, d in rows)
        return out

    def edges_in(self, paths: Iterable[str]) -> list[Edge]:
        """Resolved references written in ``paths``, by file and line (what the related
        features read again for the files an edit changed)."""
        out: list[Edge] = []
        for chunk in chunks(paths):
            sql = (
                f"{_EDGES} WHERE target_key IS NOT NULL AND path IN ({marks(chunk)})"
                " ORDER BY path, line, n"
            )
            out.extend(Edge(*row) for row in self.db.execute(sql, chunk))
        return out

    def course_sources(self) -> set[str]:
        """The files holding a ``course`` reference (whatever it resolves to)."""
        return {path for (path,) in self.db.execute("SELECT path FROM refs WHERE kind='course'")}

    def course_links(self, paths: Iterable[str] | None = None) -> dict[str, set[str]]:
        """Source key -> keys of the courses its ``course`` references name (a unit named
        counts as its course), for the files in ``paths`` (all without)."""
        out: dict[str, set[str]] = {}
        if paths is None:
            queries: Iterable[tuple[str, list[str]]] = [(_COURSES, [])]
        else:
            queries = ((f"{_COURSES} AND r.path IN ({marks(c)})", c) for c in chunks(paths))
        for sql, args in queries:
            for source, target in self.db.execute(sql, args):
                out.setdefault(source, set()).add(target.split("#", 1)[0])
        return out

    # -- what the checks read ------------------------------------------------------------------
    def requires_in(self, paths: list[str]) -> list[Requires]:
        """The ``requires`` of ``paths`` (resolved or not), in a fixed order."""
        out: list[Requires] = []
        for chunk in chunks(paths, as_given=True):
            sql = (
                "SELECT source, target_key, path, line FROM refs WHERE kind='requires'"
                f" AND path IN ({marks(chunk)})"
            )
            out.extend(Requires(*row) for row in self.db.execute(sql, chunk))
        return sorted(out, key=repr)

    def requires_resolved(self) -> list[tuple[str, str, str, int]]:
        """(source, target key, path, line) of every resolved ``requires``."""
        return self.db.execute(
            "SELECT source, target_key, path, line FROM refs"
            " WHERE kind='requires' AND +target_key IS NOT NULL"
        ).fetchall()

    def assets(self, paths: list[str] | None = None) -> list[AttachmentRef]:
        """The references to files that are not documents (written in ``paths``)."""
        if paths is None:
            return [AttachmentRef(*row) for row in self.db.execute(_ASSETS)]
        out: list[AttachmentRef] = []
        for chunk in chunks(paths, as_given=True):
            sql = f"{_ASSETS} AND path IN ({marks(chunk)})"
            out.extend(AttachmentRef(*row) for row in self.db.execute(sql, chunk))
        return out

    def anchored(self, paths: list[str] | None = None) -> list[Anchored]:
        """The ``[[note#heading]]`` references (not blocks, not units) written in
        ``paths`` or leading into them (every one without)."""
        if paths is None:
            return [Anchored(*row) for row in self.db.execute(_ANCHORED)]
        out: list[Anchored] = []
        for chunk in chunks(paths, as_given=True):
            # two queries, so each uses its index (refs by file, docs by path)
            for column in ("r.path", "d.path"):
                sql = f"{_ANCHORED} AND {column} IN ({marks(chunk)})"
                out.extend(Anchored(*row) for row in self.db.execute(sql, chunk))
        return out

    def to_resolve(self, paths: list[str] | None, names: set[str]) -> Iterable[ToResolve]:
        """The references to resolve again: written in ``paths`` or looking up one of
        ``names`` (every one when ``paths`` is None)."""
        if paths is None:
            return map(ToResolve._make, self.db.execute(_TO_RESOLVE))
        wanted: dict[int, ToResolve] = {}
        for chunk in chunks(paths, as_given=True):
            for row in self.db.execute(f"{_TO_RESOLVE} WHERE path IN ({marks(chunk)})", chunk):
                wanted[row[0]] = ToResolve._make(row)
        for chunk in chunks(names):
            sql = f"{_TO_RESOLVE} WHERE lookup IN ({marks(chunk)}) OR lookup2 IN ({marks(chunk)})"
            for row in self.db.execute(sql, chunk + chunk):
                wanted[row[0]] = ToResolve._make(row)
        return wanted.values()

    # -- counts ----------------------------------------------------------------------------------
    def resolved_count(self) -> int:
        sql = "SELECT count(*) FROM refs WHERE target_key IS NOT NULL"
        return int(self.db.execute(sql).fetchone()[0])

    def unresolved_counts(self) -> dict[str, int]:
        """How many references are ``dangling`` and ``ambiguous``."""
        sql = (
            "SELECT state, count(*) FROM refs WHERE state IN ('dangling', 'ambiguous')"
            " GROUP BY state"
        )
        return dict(self.db.execute(sql).fetchall())

    def dangling_site_links(self) -> int:
        """How many site links (``/docs/x/``) are ``dangling``: through the index of bad
        references (``refs_bad``), which SQLite uses only when the query says its
        condition (``state IN (...)``) too; a scan of every reference took about 0.015 s
        at 10k notes, in the refresh of every command after an edit."""
        sql = (
            "SELECT count(*) FROM refs WHERE state IN ('dangling', 'ambiguous')"
            " AND state='dangling' AND style='site'"
        )
        return int(self.db.execute(sql).fetchone()[0])

    def site_absolute(self) -> tuple[int, int]:
        """(how many site-absolute links ``/...`` there are, how many lead to a document)."""
        row = self.db.execute(
            "SELECT count(*), sum(target_key IS NOT NULL) FROM refs"
            " WHERE style IN ('path', 'site') AND substr(text, 1, 1)='/' AND state != 'asset'"
        ).fetchone()
        return row[0] or 0, row[1] or 0

    # -- writes ----------------------------------------------------------------------------------
    def insert(self, rows: list[RefRow]) -> None:
        """References as parsed (resolved later: :meth:`resolve`)."""
        self._writing().executemany(
            "INSERT INTO refs(source, path, line, kind, text, target, style, anchor,"
            " reason, optional, lookup, lookup2) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )

    def insert_resolved(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """References as parsed followed by their resolution (target key, state, note)."""
        self._writing().executemany(
            "INSERT INTO refs(source, path, line, kind, text, target, style, anchor, reason,"
            " optional, lookup, lookup2, target_key, state, note)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )

    def resolve(self, updates: list[tuple[str | None, str, str, int]]) -> None:
        """(target key, state, note, n): what each reference resolves to now."""
        self._writing().executemany(
            "UPDATE refs SET target_key=?, state=?, note=? WHERE n=?", updates
        )

    def delete_in(self, paths: list[str]) -> None:
        self._writing().execute(f"DELETE FROM refs WHERE path IN ({marks(paths)})", paths)
