"""Bringing the vault's state up to date with the disk (:meth:`Vault.refresh`).

A refresh is an ordered list of named steps that gathers everything before it writes,
then writes it in one SQLite transaction:

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
import dataclasses
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studykb.model import Problem
from studykb.runtime.memory import paused_gc
from studykb.vault import files as vault_files
from studykb.vault import racy, saying, update
from studykb.vault.checks import Files, attachment_problems
from studykb.vault.outside import Changes, Outside, changes, is_outside
from studykb.vault.resolve import bad_code
from studykb.vault.rows import UNREAD, parse_rows, unread_rows
from studykb.vault.scan import Scan, scan
from studykb.vault.state.rows import FileStamp, ParsedRows, StoredProblem

if TYPE_CHECKING:
    from studykb.runtime.pools import Beside
    from studykb.vault import Vault
    from studykb.vault.state import Tables

#: A problem found by the scan, as stored (origin ``scan``).
ScanRow = StoredProblem

Progress = Callable[[int, int], None]
#: Parse in worker processes when at least this many files changed.
PARALLEL_THRESHOLD = 64
#: Files whose mtime is this close to (or after) the start of the refresh that stored them
#: are hashed again by the next one (git's "racily clean" entries).
RACY_NS = 1_000_000_000
#: The marks whose change alone is written (the other files; what the notes were read at).
_REWRITTEN = ("files", "outside")
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
    unconfigured: str | None = None
    """"no studykb.toml here" on the first refresh of a folder without one: said at the
    end of the command, and only if the command did not write the file (``repos add``)."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.modified or self.removed)


class Refresh:
    """One refresh of a vault's state: :meth:`run` takes the steps in order."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.config = vault.config
        self.root = vault.root
        self.site = vault.site
        self.reading = vault.reading
        self.store = vault.store
        self._added: list[str] = []
        """The paths the first build read."""
        self._states: dict[str, int] | None = None
        """References per resolution state, counted by the first build."""
        self._given: Outside | None = None
        """What the source outside the folder holds, as the run before this one of the
        same refresh asked it (see :meth:`_follow`)."""

    def run(
        self,
        progress: Progress | None = None,
        most: int | None = None,
        given: tuple[Scan, int] | None = None,
        stamps: dict[str, FileStamp] | None = None,
    ) -> BuildStats | None:
        """:meth:`Vault.refresh`; with ``most``, None (and nothing written) when more files
        than that are to be read, or it is a first build; ``given``: the folder's walk and
        when it started, made by the process this one runs beside, and ``stamps``, the
        stored files' stamps, read while it walked (``vault/walked.py``)."""
        with saying.kept(self.vault):  # what it asks the state twice, asked once
            return self._run(progress, most, given, stamps)

    def _run(
        self,
        progress: Progress | None,
        most: int | None,
        given: tuple[Scan, int] | None,
        stamps: dict[str, FileStamp] | None,
    ) -> BuildStats | None:
        started = time.perf_counter()
        stats = BuildStats(notice=self.store.notice, unconfigured=self._unconfigured_notice())
        if given is None:
            scanned_ns = time.time_ns()
            found = scan(self.config, self.site.scope)
        else:
            found, scanned_ns = given
        for leftover in found.stale:  # temporary files of a killed studykb
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        stored = self.store.files.stamps() if stamps is None else stamps
        if stored and self.store.meta.get("reading") != self.reading.digest():
            stored = {}  # read by other rules now: every file again, as a first build
        old = {path: st for path, st in stored.items() if not is_outside(st.hash)}
        removed = sorted(set(old) - set(found.files))
        changed = self._changed(found, old)
        first = not old and bool(changed)
        outside = Changes() if first else self._outside(stored)
        if most is not None and (not old or len(changed) + len(removed) + outside.count > most):
            return None
        scan_rows = [
            StoredProblem(p.path, p.line, p.severity, p.code, p.message, "scan")
            for p in (*found.problems, *outside.problems)
        ]
        files = Files(self.root, found.attachments, found.attachment_names)
        marks = self._marks(scanned_ns, files)
        if self.vault.outside is not None:  # what the stored notes were read at
            marks["outside"] = outside.now.stamp
        elif not stored:  # a whole new state, without the notes the old one held
            marks["outside"] = ""
        if first:  # first build: one streaming bulk write (see bulk.py)
            self._first_build(changed, scan_rows, files, marks, progress)
            stats.added = sorted(self._added)
            racy.settle(self.store, self.root, RACY_NS)  # not left to the next command
        else:
            to_parse, touched, unread = self._confirm(changed, old)
            to_parse += outside.items
            parsed = (self._parse(to_parse, progress) if to_parse else []) + unread
            read = [item[0] for item in to_parse] + [rows.path for rows in unread]
            removed += outside.removed
            stats.added = sorted(path for path in read if path not in stored)
            stats.modified = sorted(path for path in read if path in stored)
            stats.removed = removed
            if parsed or removed or touched or self._scan_changed(scan_rows):
                full = not stored
                self._write(parsed, removed, touched, scan_rows, full, files=files, marks=marks)
                self.vault._forget()  # noqa: SLF001
            elif any(self.store.meta.get(k) != v for k, v in marks.items() if k in _REWRITTEN):
                with self.store.transaction() as state:
                    self._finish_write(state, files, marks, [])
        own = {*stats.added, *stats.modified, *stats.removed}
        own -= {*outside.now.hashes, *outside.removed}  # the vault's own files that changed
        if self.vault.outside is not None and self._given is None and (first or own):
            self._follow(outside.now, stats, progress)
        self._count(stats)
        if not old and changed:  # said once, when the whole vault is read
            stats.notice = _joined(stats.notice, self._site_links_notice())
        stats.seconds = time.perf_counter() - started
        return stats

    def _outside(self, stored: dict[str, FileStamp]) -> Changes:
        """What changed of the documents the vault's source outside its folder holds (a
        tracked repository's notes); nothing without a source."""
        source = self.vault.outside
        if source is None:
            return Changes()
        last = (self.store.meta.get("outside") or "") if stored else ""
        now = self._given if self._given is not None else source(self.vault, last)
        if not now.same:
            return changes(stored, now)
        kept = [  # the source holds what it did: its stored documents and problems stand
            Problem(row.path, row.line, row.severity, row.code, row.message)
            for row in self.store.problems.found_by("scan")
            if row.code in now.codes
        ]
        hashes = {path: st.hash for path, st in stored.items() if is_outside(st.hash)}
        return Changes(dataclasses.replace(now, hashes=hashes, problems=kept), problems=kept)

    def _follow(self, before: Outside, stats: BuildStats, progress: Progress | None) -> None:
        """Once more when the vault's own files changed and the source now says something
        else (the notes a course's ``repo:`` names are known once the course is stored;
        a first build reads the folder only)."""
        assert self.vault.outside is not None
        now = self.vault.outside(self.vault, before.stamp)
        if now.same or (now.hashes == before.hashes and now.problems == before.problems):
            return
        again = Refresh(self.vault)
        again._given = now
        more = again.run(progress)
        if more is not None:
            stats.added = sorted({*stats.added, *more.added})
            stats.modified = sorted({*stats.modified, *more.modified} - set(more.added))
            stats.removed = sorted({*stats.removed, *more.removed})

    def _count(self, stats: BuildStats) -> None:
        """Documents, links and problems of the state just written."""
        states = self._states
        self._states = None
        edges = self.vault._edges  # noqa: SLF001 - the vault's, kept by the first build
        stats.documents = self.store.docs.count()
        if edges is not None:  # just built: counted in memory (the indexes may wait)
            stats.links = len(edges)
        else:
            stats.links = self.store.refs.resolved_count()
        stats.problems, stats.errors = self._problem_counts(states)

    def _changed(self, found: Scan, old: dict[str, FileStamp]) -> list[str]:
        """Files to read: new ones, those whose mtime or size differ, and those stored so
        close to the last refresh that a rewrite in the same mtime tick could hide."""
        mark = self.store.meta.get("scanned_ns") if old else None
        since = int(mark) - RACY_NS if mark and mark.isdigit() else None
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
        # deferred: the whole-vault write path (7 ms of imports) only for a full build
        from studykb.vault.bulk import parse_stream, write_all

        vault = self.vault
        stream = parse_stream(self.root, changed, self.config.worker_count, progress, self.reading)
        with paused_gc():  # a million rows that all stay alive until the commit
            self._added, vault._edges, vault._blobs, self._states = write_all(  # noqa: SLF001
                self.store,
                stream,
                scan_rows,
                self.root,
                expected=len(changed),
                reading=self.reading,
                finish=lambda state: self._finish_write(state, files, marks),
            )
        vault._docs = None  # noqa: SLF001
        vault._names = None  # noqa: SLF001
        vault._fingerprint = None  # noqa: SLF001
        saying.written(vault, None)

    def _finish_write(
        self,
        state: Tables,
        files: Files,
        marks: dict[str, str],
        paths: list[str] | None = None,
    ) -> None:
        """The last step of every write: missing attachments (of ``paths`` only, when the
        other files are as they were), then the marks. ``paths``: the files that came,
        went or changed (None: the whole vault was read; empty: only mtimes or
        attachments changed, and the fingerprint stays)."""
        same = paths is not None and state.meta.get("files") == marks["files"]
        attachment_problems(state, files, self.reading, paths if same else None)
        state.meta.put(marks)
        if paths is None or paths:  # files came, went or changed: a new fingerprint
            generation = state.meta.next_generation()
            self.vault._fingerprint = None  # noqa: SLF001
            # which files: what is derived from the state (the search index) catches up
            # by looking at those only
            state.journal.record(generation, paths)

    def _unconfigured_notice(self) -> str | None:
        if not self.vault.unconfigured or self.store.notice:
            return None
        return (
            f"no studykb.toml here: reading {self.root} as a vault because it holds "
            "Markdown files (`studykb init` makes it one and silences this)"
        )

    def _site_links_notice(self) -> str | None:
        """A word when every site-absolute link (``/docs/x/``) leads to no document: the
        content folder is likely not where studykb looks."""
        total, resolved = self.store.refs.site_absolute()
        if total < SITE_LINKS_NOTICE or resolved:
            return None
        where = ", ".join(f"{d}/" for d in self.site.content_dirs)
        return (
            f"none of the {total} site-absolute links (/...) leads to a document; they are "
            f"read from {where} as a {self.site.generator} site"
            + (f" ({self.site.reason})" if self.site.reason else "")
            + " (set generator in studykb.toml if that is wrong)"
        )

    def _problem_counts(self, states: dict[str, int] | None = None) -> tuple[int, int]:
        """(problems, errors) as :meth:`Vault.problems` would list them, counted in SQL
        (``states``: references per resolution state, when already counted)."""
        problems = errors = 0
        for code, found, n in self.store.problems.counts():
            level = self.config.level(code, found)
            if level != "ignore":
                problems += n
                errors += n if level == "error" else 0
        if states is None:
            states = self.store.refs.unresolved_counts()
        site = 0
        if states.get("dangling"):  # site links that lead nowhere are dangling-link
            site = self.store.refs.dangling_site_links()
        for state, style, n in (
            ("dangling", "name", states.get("dangling", 0) - site),
            ("dangling", "site", site),
            ("ambiguous", "name", states.get("ambiguous", 0)),
        ):
            if not n:
                continue
            level = self.config.severity_of(bad_code(state, style))
            if level != "ignore":
                problems += n
                errors += n if level == "error" else 0
        anchors = self.vault._anchor_problems()  # noqa: SLF001
        problems += len(anchors)
        errors += sum(p.severity == "error" for p in anchors)
        return problems, errors

    def _confirm(
        self, changed: list[str], old: dict[str, FileStamp]
    ) -> tuple[
        list[tuple[str, bytes, str, int, int]], list[tuple[int, int, str]], list[ParsedRows]
    ]:
        """Read changed files; those whose content hash is unchanged are only touched,
        those that cannot be read are ``unreadable`` (said once, tried again each time)."""
        to_parse = []
        touched = []
        unread = []
        for path in changed:
            try:
                raw, st = vault_files.read_note(self.root / path)
            except OSError as exc:
                gone = exc.errno in vault_files.VANISHED
                if not gone and (path not in old or old[path].hash != UNREAD):
                    unread.append(unread_rows(path, exc.strerror or str(exc)))
                continue  # vanished since the scan: the next refresh sees it
            digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
            if path in old and old[path].hash == digest:
                touched.append((st.st_mtime_ns, st.st_size, path))
            else:
                to_parse.append((path, raw, digest, st.st_mtime_ns, st.st_size))
        return to_parse, touched, unread

    def _parse(
        self, items: list[tuple[str, bytes, str, int, int]], progress: Progress | None
    ) -> list[ParsedRows]:
        with_rules = [(*item, self.reading) for item in items]
        if len(with_rules) < PARALLEL_THRESHOLD:  # an edit: here, without loading the pools
            rows = []
            for n, item in enumerate(with_rules, 1):
                rows.append(parse_rows(item))
                if progress:
                    progress(n, len(with_rules))
            return rows
        # deferred: the worker pools load only when many files are parsed
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
        stored = self.store.problems.found_by("scan")
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
        paths = removed + [rows.path for rows in parsed]
        with self.store.transaction() as state:
            update.write(state, parsed, removed, touched, scan_rows, full, self.reading, self.root)
            self._finish_write(state, files, marks, None if full else paths)
        saying.written(self.vault, None if full else parsed)


def _joined(first: str | None, second: str | None) -> str | None:
    return "; ".join(part for part in (first, second) if part) or None


class Ahead:
    """A refresh running beside this process (see :meth:`Vault.refresh_ahead`)."""

    def __init__(self, vault: Vault, job: Beside) -> None:
        self._vault = vault
        self._job: Beside | None = job

    def ready(self) -> bool:
        """Whether the refresh is done (:meth:`result` answers at once)."""
        return self._job is None or self._job.ready()

    def result(self) -> BuildStats | None:
        """What the refresh did, once it is done; None when it did nothing: it gave
        up, writing nothing, with more than :data:`PARALLEL_THRESHOLD` files to read (a
        long refresh shows its progress in this process), or it failed (the refresh
        here meets the failure again, and says what it is)."""
        job, self._job = self._job, None
        if job is None:
            return None
        try:
            done = job.result()
        except Exception:  # noqa: BLE001 - met again by the refresh here
            return None
        if done is None:
            return None
        self._vault._forget()  # noqa: SLF001 - its own state, written by its child
        return BuildStats(**done)


def start_ahead(vault: Vault) -> Ahead | None:
    """:meth:`Vault.refresh_ahead`."""
    # deferred: the worker pools load only for a refresh ahead of the command
    from studykb.runtime import pools

    if vault.store.fresh or not pools.beside_helps():
        return None
    return Ahead(vault, pools.beside(_refresh_small, vault))


def _refresh_small(vault: Vault) -> dict[str, Any] | None:
    """The refresh of :meth:`Vault.refresh_ahead`, in the forked process: what it did,
    as plain data for the pipe."""
    vault.reconnect()
    stats = Refresh(vault).run(most=PARALLEL_THRESHOLD)
    return None if stats is None else dataclasses.asdict(stats)
