"""The vault: discover files, parse what changed, resolve references, keep the state.

:meth:`Vault.refresh` is an ordered list of named steps that gathers everything
before it writes, then writes it in one SQLite transaction:

1. ``scan``      walk the folder (mtime and size of every Markdown file)
2. ``diff``      compare with the stored files; hash changed ones to confirm
3. ``parse``     parse only what changed (both cores when there is much to do)
4. ``store``     replace the rows of changed and removed files
5. ``resolve``   re-resolve the references of changed files, and every reference
                 whose target name was touched by the change
6. ``vault``     vault-wide problems: duplicate ids, prerequisite loops, missing headings
7. ``files``     references to files that are not there (when they or the files changed)

The vault is read the way its site generator renders it (``flavour.py``): the rules
(:class:`~studykb.parse.reading.Reading`) go to every parse, and when they change (a
``hugo.toml`` appears, ``studykb.toml`` names another generator) every file is read again.
A file whose mtime falls within a second of the last refresh that stored it is hashed
again, as git does: a rewrite of the same size in the same mtime tick is not missed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studykb.config import Config, load_config, locate
from studykb.model import Document, Problem, Reference
from studykb.vault.cache import Cache
from studykb.vault.checks import Files
from studykb.vault.flavour import of_config
from studykb.vault.resolve import Names, StoredNames, fold, name_rows, names_of, table_rows
from studykb.vault.scan import Scan, scan
from studykb.vault.store import (
    Edge,
    EdgeRow,
    ParsedRows,
    Store,
    doc_from_blob,
    schema_version,
)
from studykb.vault.suggest import LEVELS, did_you_mean, suggest_all, suggestible
from studykb.vault.topics import TopicTable
from studykb.vault.topics import digest as topic_digest

if TYPE_CHECKING:
    from studykb.runtime.pools import Beside

#: A problem found by the scan, as stored: path, line, severity, code, message, origin.
ScanRow = tuple[str, int, str, str, str, str]

#: What reading the state may raise when the file is unusable underneath (for callers
#: that keep running: the watch, the language server).
StateError = sqlite3.Error

Progress = Callable[[int, int], None]
#: Parse in worker processes when at least this many files changed.
PARALLEL_THRESHOLD = 64
#: Files whose mtime is this close to (or after) the start of the refresh that stored them
#: are hashed again by the next one (git's "racily clean" entries).
RACY_NS = 1_000_000_000
#: Say so when at least this many site-absolute links (``/docs/x/``) all lead nowhere.
SITE_LINKS_NOTICE = 10


@dataclass
class BuildStats:
    """What one refresh did."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    documents: int = 0
    links: int = 0
    problems: int = 0
    errors: int = 0
    seconds: float = 0.0
    notice: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.added or self.modified or self.removed)


@dataclass(frozen=True, slots=True)
class Link:
    """A reference together with what it resolved to."""

    ref: Reference
    target: str | None
    """Key of the target document, or None."""
    state: str
    """ok, ambiguous, dangling, external, outside or asset."""
    note: str = ""


class Vault:
    """One vault and its state; open with :meth:`open`, then :meth:`refresh`."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = config.root
        self.site, self.reading = of_config(config)
        """The site generator the vault is written for, and the rules it is read with."""
        self.store = Store(config.state_dir)
        if self.store.fresh and not config.explicit:
            self.store.notice = self.store.notice or (
                f"no studykb.toml here: reading {config.root} as a vault because it holds "
                "Markdown files (`studykb init` makes it one and silences this)"
            )
        self.cache = Cache(config.state_dir)
        """Everything derived from the state, kept between commands (see cache.py)."""
        self._fingerprint: str | None = None
        self._topics: tuple[str, TopicTable] | None = None
        self._docs: dict[str, Document] | None = None
        self._names: Names | None = None
        self._edges: list[EdgeRow] | None = None
        """The graph edges of the last first build, kept for :meth:`graph_edges`."""
        self._blobs: list[tuple[str, str]] | None = None
        """(key, stored document) of the last first build, for :meth:`documents`."""
        self._added: list[str] = []
        """The paths the last first build read."""
        self._states: dict[str, int] | None = None
        """References per resolution state, counted by the last first build."""

    @classmethod
    def open(cls, vault: str | os.PathLike[str] | None = None) -> Vault:
        root, explicit = locate(vault)
        return cls(load_config(root, explicit))

    def close(self) -> None:
        self.cache.close()
        self.store.close()

    def fingerprint(self) -> str:
        """A name of the vault state as it is now, for what is derived from it (the search
        index's record, cached plans and related documents): the version of the code that
        made the state, which state file it is (made anew with a new name), and how many
        writes it has had. Every write changes it; two states never share one. Read in
        one row (it once hashed every file's path and content: ~10 ms at 10k files), and
        kept until a refresh writes."""
        if self._fingerprint is None:
            rows = dict(
                self.store.db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('instance', 'generation')"
                )
            )
            named = f"{schema_version()}\0{rows.get('instance', '')}\0{rows.get('generation', 0)}"
            self._fingerprint = hashlib.blake2b(named.encode(), digest_size=16).hexdigest()
        return self._fingerprint

    # -- refresh ---------------------------------------------------------------
    def refresh(self, progress: Progress | None = None) -> BuildStats:
        """Bring the state up to date with the disk; returns what changed."""
        stats = self._refresh(progress)
        if stats is None:  # pragma: no cover - only with a limit
            raise AssertionError("a refresh without a limit always runs")
        return stats

    def refresh_ahead(self) -> Ahead | None:
        """Start a small refresh in a forked process, on the other core, so that this
        one goes on meanwhile (a fresh command loading what it needs); the refresh's
        :meth:`Ahead.result` says what it did. Until then this process must not read
        the state (the index and the cache it may).

        None, and nothing started, on one core, without fork, with other threads
        running, or for a first build (it shows its progress, and keeps what it built
        in this process).
        """
        from studykb.runtime import pools

        if self.store.fresh or not pools.beside_helps():
            return None
        return Ahead(self, pools.beside(_refresh_small, self))

    def reconnect(self) -> None:
        """Connections of this process's own, in a process forked from one that had the
        vault open (the inherited ones stay unused and open: closing them could end the
        other process's use of the files)."""
        self.store.reconnect()
        self.cache.reconnect()

    def _refresh(
        self, progress: Progress | None = None, most: int | None = None
    ) -> BuildStats | None:
        """:meth:`refresh`; with ``most``, None (and nothing written) when more files
        than that are to be read, or it is a first build."""
        started = time.perf_counter()
        stats = BuildStats(notice=self.store.notice)
        scanned_ns = time.time_ns()
        found = scan(self.config)
        for leftover in found.stale:  # temporary files of a killed studykb
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        old = self.store.files()
        if old and self.store.get_meta("reading") != self.reading.digest():
            old = {}  # read by other rules now: every file again, as a first build
        removed = sorted(set(old) - set(found.files))
        changed = self._changed(found, old)
        if most is not None and (not old or len(changed) + len(removed) > most):
            return None
        scan_rows = [
            (p.path, p.line, p.severity, p.code, p.message, "scan") for p in found.problems
        ]
        files = Files(self.root, found.attachments, found.attachment_names)
        marks = self._marks(scanned_ns, files)
        if not old and changed:  # first build: one streaming bulk write (see bulk.py)
            self._first_build(changed, scan_rows, files, marks, progress)
            stats.added = sorted(self._added)
        else:
            to_parse, touched = self._confirm(changed, old)
            parsed = self._parse(to_parse, progress) if to_parse else []
            stats.added = sorted(item[0] for item in to_parse if item[0] not in old)
            stats.modified = sorted(item[0] for item in to_parse if item[0] in old)
            stats.removed = removed
            if parsed or removed or touched or self._scan_changed(scan_rows):
                full = not old
                self._write(parsed, removed, touched, scan_rows, full, files=files, marks=marks)
                self._forget()
            elif self.store.get_meta("files") != marks["files"]:
                with self.store.transaction() as db:
                    self._finish_write(db, files, marks, [])
        self._count(stats)
        if not old and changed:  # said once, when the whole vault is read
            stats.notice = _joined(stats.notice, self._site_links_notice())
        stats.seconds = time.perf_counter() - started
        return stats

    def _count(self, stats: BuildStats) -> None:
        """Documents, links and problems of the state just written."""
        states = self._states
        self._states = None
        if self._edges is not None:  # just built: counted in memory (the indexes may wait)
            stats.documents = self.store.db.execute("SELECT count(*) FROM docs").fetchone()[0]
            stats.links = len(self._edges)
        else:
            stats.documents, stats.links = self.store.db.execute(
                "SELECT (SELECT count(*) FROM docs),"
                " (SELECT count(*) FROM refs WHERE target_key IS NOT NULL)"
            ).fetchone()
        stats.problems, stats.errors = self._problem_counts(states)

    def _changed(self, found: Scan, old: dict[str, tuple[int, int, str]]) -> list[str]:
        """Files to read: new ones, those whose mtime or size differ, and those stored so
        close to the last refresh that a rewrite in the same mtime tick could hide."""
        racy = self.store.get_meta("scanned_ns") if old else None
        since = int(racy) - RACY_NS if racy and racy.isdigit() else None
        out = []
        for path, st in found.files.items():
            before = old.get(path)
            if before is None or before[:2] != st or (since is not None and before[0] >= since):
                out.append(path)
        return out

    def _marks(self, scanned_ns: int, files: Files) -> dict[str, str]:
        """What a write records in ``meta``: when the scan started, the rules the files
        were read with, and a digest of the other files (for missing attachments)."""
        digest = hashlib.blake2b(digest_size=16)
        for path in sorted(files.paths.values()):
            digest.update(path.encode() + b"\0")
        return {
            "scanned_ns": str(scanned_ns),
            "reading": self.reading.digest(),
            "files": digest.hexdigest(),
        }

    def _first_build(
        self,
        changed: list[str],
        scan_rows: list[ScanRow],
        files: Files,
        marks: dict[str, str],
        progress: Progress | None,
    ) -> None:
        from studykb.runtime.memory import paused_gc
        from studykb.vault.bulk import parse_stream, write_all

        stream = parse_stream(self.root, changed, self.config.worker_count, progress, self.reading)
        with paused_gc():  # a million rows that all stay alive until the commit
            self._added, self._edges, self._blobs, self._states = write_all(
                self.store,
                stream,
                scan_rows,
                self.root,
                expected=len(changed),
                reading=self.reading,
                finish=lambda db: self._finish_write(db, files, marks),
            )
        self._docs = None
        self._names = None
        self._fingerprint = None

    def _finish_write(
        self,
        db: sqlite3.Connection,
        files: Files,
        marks: dict[str, str],
        paths: list[str] | None = None,
    ) -> None:
        """The last step of every write: missing attachments (of ``paths`` only, when the
        other files are as they were), then the marks. ``paths``: the files that came,
        went or changed (None: the whole vault was read; empty: only mtimes or
        attachments changed, and the fingerprint stays)."""
        from studykb.vault.checks import attachment_problems

        same = paths is not None and self.store.get_meta("files") == marks["files"]
        attachment_problems(db, files, self.reading, paths if same else None)
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(marks.items()))
        if paths is None or paths:  # files came, went or changed: a new fingerprint
            db.execute(
                "INSERT INTO meta VALUES('generation', '1')"
                " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
            self._fingerprint = None

    def _forget(self) -> None:
        """Drop what was kept from the state before a write."""
        self._fingerprint = None
        self._docs = None
        self._names = None
        self._edges = None
        self._blobs = None

    def _site_links_notice(self) -> str | None:
        """A word when every site-absolute link (``/docs/x/``) leads to no document: the
        content folder is likely not where studykb looks."""
        row = self.store.db.execute(
            "SELECT count(*), sum(target_key IS NOT NULL) FROM refs"
            " WHERE style='path' AND substr(text, 1, 1)='/' AND state != 'asset'"
        ).fetchone()
        total, resolved = row[0] or 0, row[1] or 0
        if total < SITE_LINKS_NOTICE or resolved:
            return None
        where = ", ".join(f"{d}/" for d in self.site.content_dirs)
        return (
            f"none of the {total} site-absolute links (/...) leads to a document; they are "
            f"read from {where} as a {self.site.generator} site (set generator in "
            "studykb.toml if that is wrong)"
        )

    def _problem_counts(self, states: dict[str, int] | None = None) -> tuple[int, int]:
        """(problems, errors) as :meth:`problems` would list them, counted in SQL
        (``states``: references per resolution state, when already counted)."""
        severity = self.config.severity
        problems = errors = 0
        db = self.store.db
        for code, level, n in db.execute(
            "SELECT code, severity, count(*) FROM problems GROUP BY code, severity"
        ):
            level = severity.get(code, level)
            if level != "ignore":
                problems += n
                errors += n if level == "error" else 0
        if states is None:
            states = dict(
                db.execute(
                    "SELECT state, count(*) FROM refs WHERE state IN ('dangling', 'ambiguous')"
                    " GROUP BY state"
                ).fetchall()
            )
        for state in ("dangling", "ambiguous"):
            n = states.get(state, 0)
            if not n:
                continue
            level = self.config.severity_of(
                "dangling-ref" if state == "dangling" else "ambiguous-ref"
            )
            if level != "ignore":
                problems += n
                errors += n if level == "error" else 0
        anchors = self._anchor_problems()
        problems += len(anchors)
        errors += sum(p.severity == "error" for p in anchors)
        return problems, errors

    def _anchor_problems(self) -> list[Problem]:
        """``[[note#heading]]`` where the note has no such heading (found at write time)."""
        level = self.config.severity_of("dangling-anchor")
        if level == "ignore":
            return []
        return [
            Problem(path, line, level, "dangling-anchor", message)
            for path, line, message in self.store.db.execute(
                "SELECT path, line, message FROM anchors"
            )
        ]

    def _confirm(
        self, changed: list[str], old: dict[str, tuple[int, int, str]]
    ) -> tuple[list[tuple[str, bytes, str, int, int]], list[tuple[int, int, str]]]:
        """Read changed files; those whose content hash is unchanged are only touched."""
        to_parse = []
        touched = []
        from studykb.vault.files import read_note

        for path in changed:
            try:
                raw, st = read_note(self.root / path)
            except OSError:
                continue  # vanished or unreadable since the scan: the next refresh sees it
            digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
            if path in old and old[path][2] == digest:
                touched.append((st.st_mtime_ns, st.st_size, path))
            else:
                to_parse.append((path, raw, digest, st.st_mtime_ns, st.st_size))
        return to_parse, touched

    def _parse(
        self, items: list[tuple[str, bytes, str, int, int]], progress: Progress | None
    ) -> list[ParsedRows]:
        from studykb.vault.rows import parse_rows

        with_rules = [(*item, self.reading) for item in items]
        if len(with_rules) < PARALLEL_THRESHOLD:  # an edit: here, without loading the pools
            rows = []
            for n, item in enumerate(with_rules, 1):
                rows.append(parse_rows(item))
                if progress:
                    progress(n, len(with_rules))
            return rows
        from studykb.runtime.pools import imap

        return list(
            imap(
                parse_rows,
                with_rules,
                self.config.worker_count,
                progress,
                at_least=PARALLEL_THRESHOLD,
            )
        )

    def _scan_changed(self, rows: list[ScanRow]) -> bool:
        stored = self.store.db.execute(
            "SELECT path, line, severity, code, message, origin FROM problems WHERE origin='scan'"
        ).fetchall()
        return sorted(stored) != sorted(rows)

    def _write(
        self,
        parsed: list[ParsedRows],
        removed: list[str],
        touched: list[tuple[int, int, str]],
        scan_rows: list[ScanRow],
        full: bool,
        files: Files,
        marks: dict[str, str],
    ) -> None:
        paths = removed + [row[0] for row in parsed]
        with self.store.transaction() as db:
            # what the duplicate-id and loop checks depend on, before and after the change
            ids_before = _explicit_ids(db, paths)
            requires_before = _requires_rows(db, paths)
            names = self._delete(db, paths)
            db.executemany("UPDATE files SET mtime_ns=?, size=? WHERE path=?", touched)
            self._insert(db, parsed, full, names)
            moved = self._resolve(db, [row[0] for row in parsed], names, full)
            db.execute("DELETE FROM problems WHERE origin='scan'")
            db.executemany("INSERT INTO problems VALUES (?,?,?,?,?,?)", scan_rows)
            from studykb.vault.checks import anchor_problems, vault_problems

            anchor_problems(db, None if full else paths, self.reading)
            # a loop also appears or goes when a requires elsewhere now names another doc
            loops = full or moved or requires_before != _requires_rows(db, paths)
            ids = None if full else ids_before | _explicit_ids(db, paths)
            vault_problems(db, self.root, recompute_cycles=loops, ids=ids)
            self._finish_write(db, files, marks, None if full else paths)

    def _delete(self, db: sqlite3.Connection, paths: list[str]) -> set[str]:
        """Remove the rows of ``paths``; the names their documents answered to."""
        names: set[str] = set()
        roots = self.reading.content_dirs
        for chunk in _chunks(paths):
            qs = ",".join("?" * len(chunk))
            for key, path, did, title, _t, aliases, url in db.execute(
                f"SELECT key, path, id, title, type, names, url FROM docs WHERE path IN ({qs})",
                chunk,
            ):
                names.update(_names(key, path, did, title, aliases, url, roots))
            for table in ("files", "docs", "refs", "texts", "names"):
                db.execute(f"DELETE FROM {table} WHERE path IN ({qs})", chunk)
            db.execute(f"DELETE FROM problems WHERE origin='parse' AND path IN ({qs})", chunk)
        return names

    def _insert(
        self, db: sqlite3.Connection, parsed: list[ParsedRows], full: bool, names: set[str]
    ) -> None:
        """Insert the rows of the files parsed; the names of their documents are added to
        ``names`` (and to the names table, unless a full build fills it at once)."""
        roots = self.reading.content_dirs
        for path, mtime, size, digest, doc_rows, ref_rows, problem_rows, text_row in parsed:
            db.execute("INSERT INTO files VALUES (?,?,?,?)", (path, mtime, size, digest))
            db.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?)", doc_rows)
            db.executemany(
                "INSERT INTO refs(source, path, line, kind, text, target, style, anchor,"
                " reason, optional, lookup, lookup2) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                ref_rows,
            )
            db.executemany("INSERT INTO problems VALUES (?,?,?,?,?,'parse')", problem_rows)
            db.execute(
                "INSERT INTO texts(path, body, headings, outline) VALUES (?,?,?,?)", text_row
            )
            if not full:  # a full build resolves everything and fills names at once
                for key, path_, did, title, dtype, _e, aliases, url, _d in doc_rows:
                    names.update(_names(key, path_, did, title, aliases, url, roots))
                    db.executemany(
                        "INSERT INTO names VALUES (?,?,?,?)",
                        name_rows(key, path_, did, title, dtype, aliases, url, roots),
                    )

    def _resolve(self, db, parsed_paths: list[str], names: set[str], full: bool) -> bool:  # type: ignore[no-untyped-def]
        """Re-resolve what the change may touch; True when a ``requires`` of a file not
        parsed again now names another document."""
        roots = self.reading.content_dirs
        if full:
            table = Names(
                db.execute("SELECT key, path, id, title, type, names, url FROM docs"), roots
            )
            db.execute("DELETE FROM names")
            db.executemany("INSERT INTO names VALUES (?,?,?,?)", table_rows(table))
        else:  # look up only the names the references to resolve ask for
            table = StoredNames(db, roots)
        cols = (
            "SELECT n, source, path, target, style, anchor, optional, text, kind, target_key"
            " FROM refs"
        )
        if full:
            rows = db.execute(cols)
        else:
            wanted: dict[int, tuple[Any, ...]] = {}
            sql = cols + " WHERE "
            for chunk in _chunks(parsed_paths):
                for row in db.execute(sql + f"path IN ({','.join('?' * len(chunk))})", chunk):
                    wanted[row[0]] = row
            for chunk in _chunks(sorted(names)):
                marks = ",".join("?" * len(chunk))
                for row in db.execute(
                    sql + f"lookup IN ({marks}) OR lookup2 IN ({marks})", chunk + chunk
                ):
                    wanted[row[0]] = row
            rows = wanted.values()
        updates = []
        moved = False
        fresh = set(parsed_paths)  # their rows were just inserted, unresolved
        for n, source, path, target, style, anchor, optional, text, kind, old in rows:
            key, state, note = table.resolve(
                source, path, target, style, anchor, bool(optional), text
            )
            updates.append((key, state, note, n))
            moved = moved or (kind == "requires" and key != old and path not in fresh)
        db.executemany("UPDATE refs SET target_key=?, state=?, note=? WHERE n=?", updates)
        return moved

    # -- reads -------------------------------------------------------------------
    def graph_edges(self) -> Iterable[EdgeRow]:
        """(source, target key, kind, path, line, reason) of every resolved reference, in
        file order: kept in memory right after a first build, else read from the state."""
        if self._edges is not None:
            return self._edges
        return self.store.db.execute(
            "SELECT source, target_key, kind, path, line, reason FROM refs"
            " WHERE target_key IS NOT NULL ORDER BY n"
        )

    def documents(self) -> dict[str, Document]:
        """Every document by key (cached until the next refresh that changes something)."""
        if self._docs is None:
            from studykb.runtime.memory import paused_gc

            with paused_gc():
                if self._blobs is not None:  # just built: no need to read them back
                    self._docs = {key: doc_from_blob(data) for key, data in self._blobs}
                    self._blobs = None
                else:
                    self._docs = {d.key: d for d in self.store.documents()}
        return self._docs

    def documents_for(self, keys: Iterable[str]) -> dict[str, Document]:
        """The documents with these keys (missing ones left out), without loading them all."""
        if self._docs is not None:
            return {k: self._docs[k] for k in keys if k in self._docs}
        return {d.key: d for d in self.store.documents_for(sorted(set(keys)))}

    def document(self, key: str) -> Document | None:
        if self._docs is not None:
            return self._docs.get(key)
        return self.store.document(key)

    # -- typed reads (the SQL is in store.py) ------------------------------------------------
    def edges(self, kind: str | None = None, order: str = "n") -> list[Edge]:
        """Resolved references as edges (see :meth:`Store.edges`)."""
        return self.store.edges(kind, order)

    def texts(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]:
        """path -> (plain text of the body, headings)."""
        return self.store.texts(paths)

    def file_rows(self) -> list[tuple[str, int, str]]:
        """(path, mtime_ns, content hash) of every file."""
        return self.store.file_rows()

    def file_hashes(self) -> dict[str, str]:
        """path -> content hash of every file."""
        return self.store.file_hashes()

    def keys_in(self, paths: Iterable[str]) -> list[str]:
        return self.store.keys_in(paths)

    def documents_in(self, paths: Iterable[str]) -> dict[str, list[Document]]:
        return self.store.documents_in(paths)

    def course_links(self, paths: Iterable[str] | None = None) -> dict[str, set[str]]:
        return self.store.course_links(paths)

    def topic_rows(self) -> list[tuple[str, str, str, str]]:
        return self.store.topic_rows()

    def topics(self) -> TopicTable:
        """Every topic by name (see :mod:`studykb.vault.topics`): kept while the vault
        state stays the same, and in the cache while the topic documents do (an edit
        rarely touches them)."""
        fp = self.fingerprint()
        if self._topics is not None and self._topics[0] == fp:
            return self._topics[1]
        rows = self.topic_rows()
        made = topic_digest(rows)
        if self._topics is not None and self._topics[1].digest == made:
            table = self._topics[1]
        else:
            from studykb.vault.cache import key as cache_key

            entry = cache_key("topics", made)
            data = self.cache.get("topics", entry)
            loaded = None
            try:
                loaded = TopicTable.from_data(data) if isinstance(data, dict) else None
            except (KeyError, TypeError):
                loaded = None
            if loaded is None:
                loaded = TopicTable(rows)
                self.cache.put("topics", entry, loaded.to_data())
            table = loaded
        self._topics = (fp, table)
        return table

    def names(self) -> Names:
        if self._names is None:
            self._names = StoredNames(self.store.db, self.reading.content_dirs)
        return self._names

    def links(self, where: str = "", args: Iterable[Any] = ()) -> list[Link]:
        """References with their resolution; ``where`` filters the ``refs`` table."""
        out = []
        for row in self.store.refs(where, args):
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
                _n,
            ) = row
            ref = Reference(
                source, path, line, kind, text, target, style, anchor, reason, bool(optional)
            )
            out.append(Link(ref, target_key, state or "dangling", note or ""))
        return out

    def backlinks(self, key: str) -> list[Link]:
        """Every reference to ``key`` (body and front matter), in file and line order."""
        return self.links("WHERE target_key=? ORDER BY path, line", (key,))

    def outgoing(self, key: str) -> list[Link]:
        return self.links("WHERE source=? ORDER BY line", (key,))

    def problems(self) -> list[Problem]:
        """Every problem, with severities from the configuration; ``ignore`` drops one."""
        severity = self.config.severity
        out = []
        for p in self.store.problems():
            level = severity.get(p.code, p.severity)
            if level != "ignore":
                out.append(
                    p if level == p.severity else Problem(p.path, p.line, level, p.code, p.message)
                )
        bad = self.links("WHERE state IN ('dangling', 'ambiguous')")
        targets = {
            link.ref.target
            for link in bad
            if link.state == "dangling" and suggestible(link.ref.style)
        }
        suggested = suggest_all(targets, self.store.names_at(LEVELS)) if targets else {}
        for link in bad:
            code = "dangling-ref" if link.state == "dangling" else "ambiguous-ref"
            level = self.config.severity_of(code)
            if level == "ignore":
                continue
            ref = link.ref
            if link.state == "dangling":
                message = f"{ref.text!r} resolves to no document" + did_you_mean(
                    suggested.get(ref.target)
                )
            else:
                message = f"{ref.text!r} fits several documents; using {link.note}"
            out.append(Problem(ref.path, ref.line, level, code, message))
        out.extend(self._anchor_problems())
        out.sort(key=lambda p: (p.path, p.line, p.code, p.message))
        return out

    def text(self, path: str) -> tuple[str, list[str]]:
        """Plain text and headings of a file's body."""
        return self.store.text(path)


def _names(
    key: str,
    path: str,
    did: str,
    title: str,
    aliases: str,
    url: str | None,
    roots: Iterable[str] = (),
) -> set[str]:
    """The (folded) names a document answers to: references to them resolve again."""
    out = {name for name, _lvl in names_of(key, path, did, title, json.loads(aliases), roots)}
    if "#" in key:
        out.add(fold(key.split("#", 1)[1]))
    if url:
        from studykb.parse.urls import normalize_url

        out.add(normalize_url(url))
    return out


def _joined(first: str | None, second: str | None) -> str | None:
    return "; ".join(part for part in (first, second) if part) or None


def _chunks(items: list[str], size: int = 400) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _explicit_ids(db: sqlite3.Connection, paths: list[str]) -> set[str]:
    """The declared ids (folded as the duplicate-id check folds them) in ``paths``."""
    out: set[str] = set()
    for chunk in _chunks(paths):
        out.update(
            i
            for (i,) in db.execute(
                f"SELECT lower(id) FROM docs WHERE explicit=1 AND type != 'unit'"
                f" AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return out


def _requires_rows(db: sqlite3.Connection, paths: list[str]) -> list[tuple[Any, ...]]:
    """The resolved ``requires`` of ``paths``, as the loop check reads them."""
    out: list[tuple[Any, ...]] = []
    for chunk in _chunks(paths):
        out.extend(
            db.execute(
                f"SELECT source, target_key, path, line FROM refs WHERE kind='requires'"
                f" AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return sorted(out, key=repr)


__all__ = ["BuildStats", "Edge", "Link", "StateError", "Vault", "Path"]


class Ahead:
    """A refresh running beside this process (see :meth:`Vault.refresh_ahead`)."""

    def __init__(self, vault: Vault, job: Beside) -> None:
        self._vault = vault
        self._job: Beside | None = job

    def result(self) -> BuildStats | None:
        """What the refresh did, once it is done; None when it did nothing: it gave
        up, writing nothing, with more than :data:`PARALLEL_THRESHOLD` files to read (a
        long refresh shows its progress in this process), or it failed (the refresh
        here meets the failure again, and says what it is)."""
        job, self._job = self._job, None
        if job is None:
            return None
        try:
            stats: BuildStats | None = job.result()
        except Exception:  # noqa: BLE001 - met again by the refresh here
            stats = None
        if stats is not None:
            self._vault._forget()  # noqa: SLF001 - its own state, written by its child
        return stats


def _refresh_small(vault: Vault) -> BuildStats | None:
    """The refresh of :meth:`Vault.refresh_ahead`, in the forked process."""
    vault.reconnect()
    return vault._refresh(most=PARALLEL_THRESHOLD)  # noqa: SLF001
