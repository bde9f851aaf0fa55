"""The vault: discover files, parse what changed, resolve references, keep the state.

This module holds :class:`Vault` and what it answers from the state: documents,
references with their resolution (links, backlinks), problems, topics, names and plain
texts (every SQL statement is in the state package, :mod:`studykb.vault.state`). Bringing
the state up to date with the disk, the refresh and its ordered steps, is in
``refresh.py`` (:mod:`studykb.vault.refresh`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from studykb.config import STATE_DIR, Config, load_config, locate
from studykb.errors import StudyError
from studykb.model import Document, Problem
from studykb.runtime.memory import paused_gc
from studykb.vault import damage, journal
from studykb.vault.cache import Cache
from studykb.vault.derived import Derived, Structures
from studykb.vault.flavour import of_config
from studykb.vault.kept_edges import KeptEdges
from studykb.vault.outside import Source
from studykb.vault.refresh import (
    PARALLEL_THRESHOLD,
    RACY_NS,
    SITE_LINKS_NOTICE,
    Ahead,
    BuildStats,
    Progress,
    Refresh,
    ScanRow,
    start_ahead,
)
from studykb.vault.resolve import ID, SITE_LINK_MESSAGE, Names, StoredNames, bad_code
from studykb.vault.saying import Saying
from studykb.vault.state import Store, schema_version
from studykb.vault.state.rows import (
    DocNames,
    Edge,
    EdgeRow,
    Link,
    StoredFile,
    TopicRow,
    doc_from_blob,
)
from studykb.vault.suggest import LEVELS, did_you_mean, suggest_all, suggestible
from studykb.vault.topics import TOPICS, TopicTable

T = TypeVar("T")

#: What reading the state may raise when the file is unusable underneath (for callers
#: that keep running: the watch, the language server).
StateError = sqlite3.Error


@dataclass(frozen=True)
class Shown:
    """Everything ``show`` tells about one document."""

    doc: Document
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Link] = field(default_factory=list)
    units: list[Document] = field(default_factory=list)


class Vault:
    """One vault and its state; open with :meth:`open`, then :meth:`refresh`."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = config.root
        self.site, self.reading = of_config(config)
        """The site generator the vault is written for, and the rules it is read with."""
        self.store = Store(config.state_dir)
        self.unconfigured = self.store.fresh and not config.explicit
        """A first state made where no studykb.toml named the vault: said once, by the
        first refresh, unless a command (``repos add``) wrote studykb.toml meanwhile."""
        self.cache = Cache(config.state_dir)
        """Everything derived from the state, kept between commands (see cache.py)."""
        self.structures = Structures(self, self.cache)
        """The derived structures in use, kept fresh (see derived.py)."""
        self.recovered = journal.recover(self.root, config.state_dir)
        """What was done about a move a killed process left half done (one line), or
        None: done here, before any refresh reads the files."""
        self._fingerprint: str | None = None
        self._generation: tuple[str, int] = ("", 0)
        self._docs: dict[str, Document] | None = None
        self._names: Names | None = None
        self._edges: KeptEdges | None = None
        """The graph edges of the last first build, kept for :meth:`graph_edges`."""
        self._blobs: list[tuple[str, str]] | None = None
        """(key, stored document) of the last first build, for :meth:`documents`."""
        self.outside: Source | None = None
        """Where documents from outside the folder come from (a tracked repository's
        notes, see :mod:`studykb.vault.outside`): set by the session, asked by each refresh."""
        self.saying: Saying | None = None
        """The answers of :meth:`any_saying` while a refresh runs (``vault/saying.py``)."""

    @classmethod
    def open(cls, vault: str | os.PathLike[str] | None = None) -> Vault:
        root, explicit = locate(vault)
        return cls(load_config(root, explicit))

    @classmethod
    def at(cls, root: Path, explicit: bool) -> Vault:
        """The vault whose folder is ``root`` (found before, see :func:`locate`), its
        studykb.toml read now; ``explicit``: named or marked, not taken by its look."""
        return cls(load_config(root, explicit))

    @classmethod
    def stored_ids(cls, where: str | None) -> list[str]:
        """The document ids of the vault at ``where`` as last built, without a refresh
        (shell completion); none before the first build."""
        root, explicit = locate(where)
        if not (root / STATE_DIR / "state.sqlite").is_file():
            return []
        vault = cls(load_config(root, explicit))
        try:
            return sorted(vault.store.names.at_levels((ID,)))
        finally:
            vault.close()

    def reopened(self) -> Vault:
        """This vault opened again (studykb.toml read again, nothing kept in memory), this
        one closed."""
        fresh = Vault.at(self.root, self.config.explicit)
        fresh.outside = self.outside
        self.close()
        return fresh

    def settings_changed(self) -> bool:
        """Whether studykb.toml says something else than when the vault was opened (True
        when it cannot be read)."""
        try:
            return load_config(self.root, self.config.explicit) != self.config
        except StudyError:
            return True

    def close(self) -> None:
        self.cache.close()
        self.store.close()

    def rebuild_if_damaged(self, exc: BaseException) -> str | None:
        """When ``exc`` proves the state damaged (met by any read or write of it, see
        :mod:`studykb.vault.damage`): close the vault, delete the state, and say so in
        one line; the caller opens the vault again, which builds it anew. Else None,
        and nothing is done."""
        reason = damage.damaged(exc)
        if reason is None:
            return None
        with contextlib.suppress(sqlite3.Error):
            self.close()
        damage.discard(self.store.path)
        return f"state was damaged ({reason}); rebuilding {self.store.path.parent.name}/"

    def fingerprint(self) -> str:
        """A name of the vault state as it is now, for what is derived from it (the search
        index's record, cached plans and related documents): the version of the code that
        made the state, which state file it is (made anew with a new name), and how many
        writes it has had. Every write changes it; two states never share one. Read in
        one row (it once hashed every file's path and content: ~10 ms at 10k files), and
        kept until a refresh writes."""
        if self._fingerprint is None:
            instance, writes = self._generation = self.store.meta.generation()
            named = f"{schema_version()}\0{instance}\0{writes}"
            self._fingerprint = hashlib.blake2b(named.encode(), digest_size=16).hexdigest()
        return self._fingerprint

    # -- refresh (its steps are in refresh.py) ---------------------------------
    def refresh(self, progress: Progress | None = None) -> BuildStats:
        """Bring the state up to date with the disk; returns what changed."""
        stats = Refresh(self).run(progress)
        if stats is None:  # pragma: no cover - only with a limit
            raise AssertionError("a refresh without a limit always runs")
        return stats

    def refresh_ahead(self, walk_here: bool = False) -> Ahead | None:
        """Start a small refresh in a forked process, on the other core, so that this
        one goes on meanwhile (a fresh command loading what it needs); the refresh's
        :meth:`Ahead.result` says what it did. Until then this process must not read
        the state (the index and the cache it may). ``walk_here``: this process walks
        the folder for it first, while it loads the parser (``vault/walked.py``: for a
        command with nothing else to do meanwhile).

        None, and nothing started, on one core, without fork, with other threads
        running, or for a first build (it shows its progress, and keeps what it built
        in this process).
        """
        if walk_here:
            from studykb.vault import walked  # deferred: only a fresh command's start

            return walked.start(self)
        return start_ahead(self)

    def reconnect(self) -> None:
        """Connections of this process's own, in a process forked from one that had the
        vault open (the inherited ones stay unused and open: closing them could end the
        other process's use of the files)."""
        self.store.reconnect()
        self.cache.reconnect()

    def _forget(self) -> None:
        """Drop what was kept from the state before a write."""
        self._fingerprint = None
        self._docs = None
        self._names = None
        self._edges = None
        self._blobs = None

    def release(self, documents: bool = True) -> None:
        """Let go of the graph edges and the documents (unless ``documents`` is false)
        kept from the state, each read back from it when next asked for: the last steps
        of a build, which hold the most memory, need neither
        (:func:`studykb.related.engine.made_lean`)."""
        self._edges = None
        if documents:
            self._docs = None
            self._blobs = None

    # -- reads -------------------------------------------------------------------
    def graph_edges(self) -> Iterable[EdgeRow]:
        """(source, target key, kind, path, line, reason) of every resolved reference, in
        file order: kept in memory right after a first build, else read from the state."""
        if self._edges is not None:
            return self._edges
        return self.store.refs.graph_edges()

    def documents(self) -> dict[str, Document]:
        """Every document by key (cached until the next refresh that changes something)."""
        if self._docs is None:
            with paused_gc():
                if self._blobs is not None:  # just built: no need to read them back
                    self._docs = {key: doc_from_blob(data) for key, data in self._blobs}
                    self._blobs = None
                else:
                    self._docs = {d.key: d for d in self.store.docs.all()}
        return self._docs

    def documents_for(self, keys: Iterable[str]) -> dict[str, Document]:
        """The documents with these keys (missing ones left out), without loading them all."""
        if self._docs is not None:
            return {k: self._docs[k] for k in keys if k in self._docs}
        return {d.key: d for d in self.store.docs.with_keys(sorted(set(keys)))}

    def document(self, key: str) -> Document | None:
        if self._docs is not None:
            return self._docs.get(key)
        return self.store.docs.get(key)

    # -- typed reads (the SQL is in the state package) ----------------------------------------
    def graph_edges_in(self, paths: Iterable[str]) -> list[EdgeRow]:
        """:meth:`graph_edges` of the references written in ``paths``."""
        return self.store.refs.graph_edges_in(paths)

    def edges(self, kind: str | None = None, order: str = "n") -> list[Edge]:
        """Resolved references as edges (see :meth:`studykb.vault.state.refs.Refs.edges`)."""
        return self.store.refs.edges(kind, order)

    def derived(self, spec: Derived[T]) -> T:
        """The value of a derived structure for the state now (see derived.py)."""
        return self.structures.get(spec)

    def each_edge(self, kind: str | None = None, order: str = "n") -> Iterator[Edge]:
        """:meth:`edges` as they are read from the state (never all held at once)."""
        return self.store.refs.each_edge(kind, order)

    def edges_in(self, paths: Iterable[str]) -> list[Edge]:
        """The resolved references written in these files."""
        return self.store.refs.edges_in(paths)

    def wiki_labels(self, paths: Iterable[str] | None = None) -> list[tuple[str, str, str, str]]:
        """(path, source, target key, text) of every resolved labelled wikilink (of the
        files ``paths``, when given)."""
        return self.store.refs.wiki_labels(paths)

    def texts(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]:
        """path -> (plain text of the body, headings)."""
        return self.store.texts.of(paths)

    def file_rows(self) -> list[StoredFile]:
        """(path, mtime_ns, content hash) of every file."""
        return self.store.files.rows()

    def file_hashes(self, paths: Iterable[str] | None = None) -> dict[str, str]:
        """path -> content hash of every file (of those of ``paths`` that exist)."""
        return self.store.files.hashes(paths)

    def generation(self) -> tuple[str, int]:
        """(the state's name, how many writes changed its files), as :meth:`fingerprint`
        read them (the two always name the same state)."""
        self.fingerprint()
        return self._generation

    def changed_since(self, generation: int, now: int) -> set[str] | None:
        """The files that came, went or changed after write ``generation`` up to ``now``;
        None when the state's journal cannot say (a full comparison is needed)."""
        return self.store.journal.changed_since(generation, now)

    def course_sources(self) -> set[str]:
        """The files that name a course (their course may change without them)."""
        return self.store.refs.course_sources()

    def keys_in(self, paths: Iterable[str]) -> list[str]:
        return self.store.docs.keys_in(paths)

    def name_rows(self, paths: Iterable[str] | None = None) -> list[DocNames]:
        """(key, path, id, title, type, aliases as JSON, url) of every document (of the
        files ``paths`` only, when given)."""
        return self.store.docs.names(None if paths is None else sorted(paths))

    def any_saying(self, types: tuple[str, ...], word: str) -> bool:
        """Whether a document of one of ``types`` holds ``word`` in its fields."""
        if self.saying is not None:  # a refresh runs: asked once (``vault/saying.py``)
            return self.saying.answer(self.store.docs.any_saying, types, word)
        return self.store.docs.any_saying(types, word)

    def documents_in(self, paths: Iterable[str]) -> dict[str, list[Document]]:
        return self.store.docs.in_files(paths)

    def course_links(self, paths: Iterable[str] | None = None) -> dict[str, set[str]]:
        return self.store.refs.course_links(paths)

    def topic_rows(self) -> list[TopicRow]:
        return self.store.docs.topics()

    def topics(self) -> TopicTable:
        """Every topic by name (see :mod:`studykb.vault.topics`), a derived structure."""
        return self.structures.get(TOPICS)

    def preload_topics(self, digest: str) -> None:
        """Load the topic table the cache keeps, if made from the topic rows of
        ``digest``, ahead of :meth:`topics` (reads the cache only, never the state: a
        fresh command does it while its refresh runs)."""
        self.structures.preload(TOPICS, digest)

    def names(self) -> Names:
        if self._names is None:
            self._names = StoredNames(self.store.tables, self.reading.content_dirs)
        return self._names

    def links(self) -> list[Link]:
        """Every reference with its resolution, in the order written."""
        return self.store.refs.links()

    def links_in(self, path: str) -> list[Link]:
        """The references written in the file ``path``, in line order."""
        return self.store.refs.links_in(path)

    def backlinks(self, key: str) -> list[Link]:
        """Every reference to ``key`` (body and front matter), in file and line order."""
        return self.store.refs.links_to(key)

    def outgoing(self, key: str) -> list[Link]:
        return self.store.refs.links_from(key)

    def code_links(self) -> list[Link]:
        """The links into tracked repositories' code, in file and line order."""
        return self.store.refs.code_links()

    def show(self, doc: Document) -> Shown:
        """``doc`` with its references, what refers to it and, for a course, its units."""
        units: list[Document] = []
        if doc.type == "course":
            units = sorted(
                (d for d in self.documents().values() if d.parent == doc.key),
                key=lambda d: d.line,
            )
        return Shown(doc, self.outgoing(doc.key), self.backlinks(doc.key), units)

    def problems(self) -> list[Problem]:
        """Every problem, with severities from the configuration; ``ignore`` drops one."""
        out = []
        for p in self.store.problems.all():
            shown = self.config.as_configured(p)
            if shown is not None:
                out.append(shown)
        bad = self.store.refs.unresolved()
        targets = {
            link.ref.target
            for link in bad
            if link.state == "dangling" and suggestible(link.ref.style)
        }
        suggested = suggest_all(targets, self.store.names.at_levels(LEVELS)) if targets else {}
        for link in bad:
            code = bad_code(link.state, link.ref.style)
            level = self.config.severity_of(code)
            if level == "ignore":
                continue
            ref = link.ref
            if code == "dangling-link":
                message = SITE_LINK_MESSAGE.format(text=ref.text)
            elif link.state == "dangling":
                message = f"{ref.text!r} resolves to no document" + did_you_mean(
                    suggested.get(ref.target)
                )
            else:
                message = f"{ref.text!r} fits several documents; using {link.note}"
            out.append(Problem(ref.path, ref.line, level, code, message))
        out.extend(self._anchor_problems())
        out.extend(self._cover_problems())
        level = self.config.severity_of(journal.CODE)
        if level != "ignore":
            out.extend(
                Problem(p.path, p.line, level, p.code, p.message)
                for p in journal.problems(self.root, self.config.state_dir)
            )
        out.sort(key=lambda p: (p.path, p.line, p.code, p.message))
        return out

    def _cover_problems(self) -> list[Problem]:
        """``dangling-ref`` for each name in ``covers`` that names no topic (a typo drops
        the document out of every plan of the topic it meant), with a suggestion among
        the topics' names, at the line the name is written on."""
        level = self.config.severity_of("dangling-ref")
        if level == "ignore":
            return []
        table = self.topics()
        missing = [
            (doc, name)
            for doc in self.store.docs.covering()
            for name in doc.covers
            if table.key(name) is None
        ]
        if not missing:
            return []
        suggested = suggest_all({name for _d, name in missing}, table.names)
        return [
            Problem(
                doc.path,
                _line_of(self.root / doc.path, name, doc.line),
                level,
                "dangling-ref",
                f"covers {name!r}, which names no topic" + did_you_mean(suggested.get(name)),
            )
            for doc, name in missing
        ]

    def _anchor_problems(self) -> list[Problem]:
        """``[[note#heading]]`` where the note has no such heading (found at write time)."""
        level = self.config.severity_of("dangling-anchor")
        if level == "ignore":
            return []
        return [
            Problem(path, line, level, "dangling-anchor", message)
            for path, line, message in self.store.anchors.all()
        ]

    def text(self, path: str) -> tuple[str, list[str]]:
        """Plain text and headings of a file's body."""
        return self.store.texts.text(path)

    def outline(self, path: str) -> str | None:
        """The outline (JSON) of the file at ``path``, or None when there is no such file."""
        return self.store.texts.outline(path)


def _line_of(file: Path, name: str, start: int) -> int:
    """The line (1-based) where ``name`` is written in the first ``covers`` from line
    ``start`` of the file on (``start`` itself when it cannot be read or found)."""
    key = re.compile(r"""(?:^|[\s{,])["']?covers["']?\s*[:=]""")
    word = re.compile(r"(?<![\w-])#?" + re.escape(name) + r"(?![\w-])", re.IGNORECASE)
    try:
        lines = file.read_text(encoding="utf-8-sig", errors="replace").split("\n")
    except OSError:
        return start
    first = max(start - 1, 0)
    at = next((n for n in range(first, len(lines)) if key.search(lines[n])), first)
    found = next((n for n in range(at, len(lines)) if word.search(lines[n])), None)
    return start if found is None else found + 1


__all__ = [
    "BuildStats",
    "Edge",
    "Link",
    "StateError",
    "Vault",
    "Path",
    "Ahead",
    "PARALLEL_THRESHOLD",
    "Progress",
    "RACY_NS",
    "SITE_LINKS_NOTICE",
    "ScanRow",
]
