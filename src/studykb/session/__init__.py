"""The library API: one vault, opened, and everything studykb can answer about it.

The command line, the watch, the language server and the web view all call a
:class:`Session`; it returns model objects (documents, plans, hits, sidebars),
never text, and each front end formats them itself.

    with Session.open("~/notes") as kb:
        kb.refresh()
        plan = kb.plan(kb.find("FSDP2"))
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from studykb import graph as g
from studykb.config import locate as _locate
from studykb.graph import GraphOptions
from studykb.model import Document, Problem
from studykb.repos import links, notes
from studykb.runtime.memory import give_back
from studykb.search.state import SearchIndex, index_dir
from studykb.session.related import RelatedViews
from studykb.study import plans
from studykb.vault import Ahead, BuildStats, Link, Shown, Vault, setup
from studykb.vault.files import read_in
from studykb.vault.lookup import find, suggest
from studykb.vault.outside import read_only, refuse, split
from studykb.vault.resolve import PATH

if TYPE_CHECKING:
    from studykb.parse.outline import Outline
    from studykb.repos.view import RepoView
    from studykb.search.portable import RememberedTerms
    from studykb.search.query import Found, SearchOptions
    from studykb.search.state import SyncStats
    from studykb.study.ask import Question
    from studykb.study.new import Created, NewDoc
    from studykb.study.plans import Knowledge, Onward, Plan, Step
    from studykb.study.rename import Done, Move, Reader
    from studykb.study.tracker import Tracker
    from studykb.vault.buffers import BufferView
    from studykb.vault.loose import Looked
    from studykb.vault.setup import InitPlan
    from studykb.vault.topics import TopicTable


def _no_phase(_name: str) -> AbstractContextManager[object]:
    return contextlib.nullcontext()


class Session(RelatedViews):
    """One vault and everything studykb answers about it."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        vault.outside = notes.source  # a tracked repository's notes (read only if named)
        self.phase: Callable[[str], AbstractContextManager[object]] = _no_phase
        """Wraps each long step (a front end shows it: the command line's spinner)."""

    @classmethod
    def open(cls, where: str | os.PathLike[str] | None = None) -> Session:
        """The vault at ``where`` (else ``$STUDYKB_VAULT``, else found from here)."""
        return cls(Vault.open(where))

    @classmethod
    def at(cls, root: Path, explicit: bool) -> Session:
        """The vault whose folder :meth:`locate` found (``explicit``: named or marked)."""
        return cls(Vault.at(root, explicit))

    @classmethod
    def of(cls, kb: Session | Vault) -> Session:
        """``kb`` itself, or a session on the vault ``kb`` (scripts written before)."""
        return kb if isinstance(kb, Session) else cls(kb)

    @staticmethod
    def locate(where: str | None, cwd: Path | None = None) -> tuple[Path, bool]:
        """The vault folder ``where`` names (else ``$STUDYKB_VAULT``, else found from
        ``cwd``) and whether it is named or marked (not only taken by its look)."""
        return _locate(where, cwd=cwd)

    @staticmethod
    def stored_ids(where: str | None) -> list[str]:
        """The document ids of the vault at ``where`` as last built, without a refresh
        (shell completion); none before the first build."""
        return Vault.stored_ids(where)

    @staticmethod
    def plan_init(root: Path) -> InitPlan:
        """What ``init`` would write in ``root`` and what studykb would read there."""
        return setup.plan(root)

    @staticmethod
    def init(plan: InitPlan) -> Path:
        """Write the ``studykb.toml`` of ``plan`` (never over an existing one): its path."""
        return setup.write(plan)

    def close(self) -> None:
        self.vault.close()

    def reconnect(self) -> None:
        """Connections of this process's own to the state and the cache, in a process
        forked from one that keeps using its own (SQLite's rule: a connection is never
        used on both sides of a fork)."""
        self.vault.reconnect()

    def reopen(self) -> None:
        """Open the vault again, here (studykb.toml read again, nothing kept in memory:
        after another process wrote, or the settings changed); the old one is closed."""
        self.vault = self.vault.reopened()

    def settings_changed(self) -> bool:
        """Whether studykb.toml says something else than when the vault was opened."""
        return self.vault.settings_changed()

    def rebuild_if_damaged(self, exc: BaseException) -> str | None:
        """When ``exc`` proves the state damaged: close, delete the state (it only holds
        what can be rebuilt) and return the notice to show; the front end opens the
        vault again and repeats what it was doing. Else None, nothing done."""
        return self.vault.rebuild_if_damaged(exc)

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def root(self) -> Any:
        return self.vault.root

    @property
    def config(self) -> Any:
        return self.vault.config

    @property
    def reading(self) -> Any:
        """How the vault's generator reads names and anchors (its flavour's rules)."""
        return self.vault.reading

    @property
    def site(self) -> Any:
        """The site generator's rules the vault is read by (links, page addresses)."""
        return self.vault.site

    def take_recovered(self) -> str | None:
        """What opening the vault recovered (a move a killed process left half done),
        once: the notice to show, or None."""
        said, self.vault.recovered = self.vault.recovered, None
        return said

    def fingerprint(self) -> str:
        """A name of the vault's state now (it changes with every change of a file)."""
        return self.vault.fingerprint()

    def topic_table(self) -> TopicTable:
        """The vault's topics, with their names and what teaches or is about each."""
        return self.vault.topics()

    def remembered_terms(self) -> RememberedTerms:
        """The terms of Chinese runs for an update of a few documents' static search
        index: cut as the search index remembers them in the cache where it can
        (:class:`studykb.search.portable.RememberedTerms`; ``save()`` keeps the new)."""
        # deferred: the static search index's terms, for a site only
        from studykb.search.portable import RememberedTerms

        return RememberedTerms(self.vault.cache)

    def texts(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]:
        """path -> (plain text of the body, headings) of every document (of the files
        ``paths``, when given)."""
        return self.vault.texts(paths)

    def outline(self, path: str) -> Outline:
        """The headings and blocks of the file ``path`` as last read."""
        from studykb.parse.outline import Outline  # deferred: its patterns compile on import

        return Outline.from_json(self.vault.outline(path))

    def stored_outline(self, path: str) -> str | None:
        """:meth:`outline` as stored (JSON), None when there is no such file."""
        return self.vault.outline(path)

    def headings(self, path: str) -> list[str]:
        """The headings of the file ``path`` as last read."""
        return self.vault.text(path)[1]

    def file_hashes(self) -> dict[str, str]:
        """path -> content hash of every file as last read."""
        return self.vault.file_hashes()

    def read_file(self, path: str) -> bytes | None:
        """The bytes of the vault file ``path`` as they are on disk (read whole and
        stable, never through a link out of the vault), or None; of a repository's note
        (``NAME:path``), its blob as last read."""
        if split(path) is not None and read_only(self.vault, path):  # a repository's note
            return notes.read_note(self.vault, path)
        return read_in(self.root, path)

    # -- the state ------------------------------------------------------------------------
    def refresh(
        self,
        progress: Callable[[int, int], None] | None = None,
        ahead: Ahead | None = None,
    ) -> BuildStats:
        """Bring the state up to date with the files (only what changed is read again);
        ``ahead``: a refresh started by :meth:`refresh_ahead`, taken when it did the work."""
        if ahead is not None:
            stats = ahead.result()
            if stats is not None:
                return stats
        return self.vault.refresh(progress)

    def refresh_ahead(self, walk_here: bool = False) -> Ahead | None:
        """Start a small refresh beside this process, on the other core, and go on (see
        :meth:`studykb.vault.Vault.refresh_ahead`, ``walk_here`` too): :meth:`refresh`
        with it takes its result. Until then, nothing of the state is read here."""
        return self.vault.refresh_ahead(walk_here)

    def let_go(self) -> None:
        """Let go of what a first build kept of the state (its documents and edges; what
        comes next reads them back) and hand the room back to the system
        (:func:`studykb.runtime.memory.give_back`): ``build`` makes no graph."""
        self.vault.release()
        give_back()

    def warm_search(self) -> None:
        """Load what a search needs (whoosh, the index and query code) and open the
        index, ahead of the search (reads the index only, never the state)."""
        from studykb.search import index, query  # noqa: F401

        index.warm(self.vault)

    def index_current(self) -> int | None:
        """How many documents the search index holds, when it already reflects the state
        (known without whoosh); None when it needs a sync."""
        spec = SearchIndex(index_dir(self.vault))
        value = self.vault.structures.current(spec)
        return None if value is None or not spec.names_index(value) else value.documents

    def sync_search(
        self,
        wait: float | None = None,
        quiet: bool = False,
        building: bool = False,
        *,
        shown: bool = True,
    ) -> SyncStats:
        """Bring the search index in step with the state; ``building``: wait as long as
        another process holds the index (``studykb build``), else answer from the last
        complete index after a moment; ``shown``: as a :attr:`phase` (a watch's are not)."""
        # deferred: loads Stemmer, whoosh
        from studykb.search import index

        if building:
            wait = index.BUILD_LOCK_WAIT
        with self.phase("building the search index") if shown else contextlib.nullcontext():
            return index.sync(self.vault, wait=wait, quiet=quiet)

    # -- documents ------------------------------------------------------------------------
    def find(self, query: str) -> Document:
        """The document ``query`` names (path, id, alias, title, URL); NotFound with
        suggestions otherwise."""
        return find(self.vault, query)

    def lookup(self, query: str) -> Looked:
        """The document ``query`` names, as written or loosely (spacing, word forms, the
        title without its parenthesis, "X paper", a longer name), saying how; NotFound
        with suggestions when nothing fits. Writers (``mark``, ``mv``) use :meth:`find`."""
        # deferred: loads Stemmer
        from studykb.vault.loose import lookup

        return lookup(self.vault, query)

    def suggest(self, query: str, limit: int = 5) -> list[str]:
        return suggest(self.vault, query, limit)

    def document(self, key: str) -> Document | None:
        return self.vault.document(key)

    def documents(self) -> dict[str, Document]:
        return self.vault.documents()

    def documents_for(self, keys: Iterable[str]) -> dict[str, Document]:
        return self.vault.documents_for(keys)

    def tracks_code(self) -> bool:
        """Whether the vault links into code or names a clone (else the repositories,
        and git's library, are never read)."""
        return bool(self.config.repos) or bool(self.vault.code_links())

    def problems(self) -> list[Problem]:
        """Every problem of the vault (its code links too), with the configured severities."""
        found = self.vault.problems()
        if not self.tracks_code():
            return found  # no code link, no clone named here: git and tree-sitter stay unloaded
        light = links.without_clones(self.vault, found)  # no clone here: nor then
        return light if light is not None else self.repos().with_problems(found)

    def repo_note(self, query: str) -> Document | None:
        """The note of a tracked repository that ``query`` names by its path
        (``NAME:path.md``, its notes read into the vault), else None."""
        if split(query) is None:
            return None
        for key in self.vault.names().candidates(query.partition("#")[0], PATH):
            doc = self.vault.document(key)
            if doc is not None and doc.type != "unit" and self.read_only(doc):
                return doc
        return None

    def read_only(self, doc: Document) -> str | None:
        """The tracked repository ``doc`` is read from (its notes: no command writes
        them), or None for a document of the vault's own files."""
        return read_only(self.vault, doc.path)

    def files_of(self, paths: list[str]) -> dict[str, Path]:
        """Where each of ``paths`` is on disk: in the vault's folder, or a repository's
        note in its clone's working tree."""
        return notes.files(self.vault, paths)

    def refuse_read_only(self, doc: Document, command: str) -> None:
        """A :class:`~studykb.errors.StudyError` (exit 1) when ``doc`` is a repository's
        note: ``command`` would write it."""
        refuse(self.vault, doc.path, command)

    def show(self, doc: Document) -> Shown:
        return self.vault.show(doc)

    def backlinks(self, doc: Document) -> list[Link]:
        return self.vault.backlinks(doc.key)

    def links_to(self, key: str) -> list[Link]:
        """:meth:`backlinks` of the document ``key`` (its key, as references name it)."""
        return self.vault.backlinks(key)

    def graph(self, options: GraphOptions | None = None) -> Any:
        """The typed graph (networkx), filtered by type, tag and edge kind."""
        options = options or GraphOptions()
        topics = self.vault.topics()
        full = g.build(self.vault.documents(), self.vault.graph_edges(), topics)
        return g.select(full, topics.names, options.types, options.tags, options.kinds)

    def graph_edge_kinds(
        self, paths: Iterable[str] | None = None
    ) -> Iterable[tuple[str, str, str]]:
        """(source, target, kind) of every edge of the unfiltered :meth:`graph`, in its
        order, without building it (:func:`studykb.graph.edge_kinds`); with ``paths``,
        only those from the documents of these files."""
        docs, topics = self.vault.documents(), self.vault.topics()
        if paths is None:
            return g.edge_kinds(docs, self.vault.graph_edges(), topics)
        wanted = set(paths)
        sources = {key for key, doc in docs.items() if doc.path in wanted}
        return g.edge_kinds(docs, self.vault.graph_edges_in(sorted(wanted)), topics, sources)

    # -- search -------------------------------------------------------------------------------
    def search(self, options: SearchOptions) -> Found:
        """Ranked hits with snippets (the index is brought up to date first)."""
        # deferred: loads Stemmer
        from studykb.search import query

        self.sync_search()
        hits = query.search(self.vault, options)
        return query.Found(hits, query.explain(options), query.also_searched(self.vault, options))

    def also_searched(self, text: str) -> list[str]:
        """The other names a search for ``text`` looks for too (the topics' thesaurus);
        reads no index."""
        # deferred: loads Stemmer
        from studykb.search import query

        return query.also_searched(self.vault, query.SearchOptions(query=text))

    def close_search(self) -> None:
        """Close the searcher kept open between queries (a short-lived process)."""
        # deferred: loads Stemmer, whoosh
        from studykb.search import index

        index.close(self.vault)

    # -- study ------------------------------------------------------------------------------
    def knowledge(self) -> Knowledge:
        """The prerequisite graph, coverage and what is known (for plans and trees)."""
        return plans.knowledge(self.vault)

    def plan_stamp(self) -> str:
        """A name of the plan tables' content and of every document's card they were
        made from (:mod:`studykb.study.plan_inputs`); cheap while an edit leaves the
        tables alone (they are read, not made again, and no card is read for it)."""
        return self.vault.structures.stamp(plans.TABLES)

    def plan(
        self,
        target: Document,
        include_known: bool = False,
        depth: int | None = None,
        kb: Knowledge | None = None,
    ) -> Plan:
        """What to read before ``target``, in order, leaving out what is known."""
        return plans.plan(self.vault, target, include_known=include_known, depth=depth, kb=kb)

    def ready(self, target: Document | None = None, limit: int = 10) -> list[Step]:
        """What can be read now: unknown documents whose prerequisites are all known."""
        return plans.ready(self.vault, target, limit=limit)

    def after(self, target: Document, limit: int = 10) -> list[Onward]:
        """What to read once ``target`` is known: what builds on it, ready ones first."""
        return plans.after(self.vault, target, limit=limit)

    def repos(self) -> RepoView:
        """The tracked repositories, the code links into them, their units' activity."""
        # deferred: loads dulwich and tree-sitter, for vaults that track a repository
        from studykb.repos.view import RepoView

        return RepoView(self.vault)

    def status(self) -> Tracker:
        """Courses, what is being read, what was finished, the reading lists."""
        from studykb.study.tracker import status  # deferred: only the commands that show it

        return status(self.vault)

    def mark(self, doc: Document, status: str) -> bool:
        """Set ``doc``'s status in its file (False when it had it already); refreshes."""
        from studykb.study.mark import mark  # deferred: loads frontmatter, yaml

        changed = mark(self.vault, doc, status)
        if changed:
            self.vault.refresh()
        return changed

    def ask(self, question: str) -> Question:
        """A question in English or Chinese read as before/after/next/related/about/status
        and its target (a name that resolves here, as written or loosely spelled, when
        one does); UsageError when not understood."""
        from studykb.study.ask import ask  # deferred: only ``ask`` needs it

        return ask(self.vault, question)

    def new(self, spec: NewDoc) -> Created:
        """Create a document from its template (never over an existing file)."""
        from studykb.study.new import create_in  # deferred: loads frontmatter, yaml

        return create_in(self.vault, spec)

    def plan_move(self, doc: Document, new: str, read: Reader | None = None) -> Move:
        """How renaming ``doc`` to ``new`` (a name, or a path from the vault folder)
        rewrites every reference to it; ``read`` gives a file's text (default: the disk)."""
        # deferred: loads markdown_it, mdit_py_plugins
        from studykb.study import destination, rename

        destination.check(self.vault.config, doc, new)
        return rename.plan(self.vault, doc, new, read or rename.read_disk(self.vault.root))

    def move(self, move: Move) -> Done:
        """Apply a planned move to the files (all or nothing, see
        :mod:`studykb.vault.journal`), then refresh."""
        # deferred: loads markdown_it, mdit_py_plugins
        from studykb.study import rename

        done = rename.apply(self.vault.root, self.vault.config.state_dir, move)
        self.vault.refresh()
        return done

    # -- the editor ------------------------------------------------------------------------------
    def buffer_view(
        self, base: BufferView | None = None, stats: BuildStats | None = None
    ) -> BufferView:
        """The vault as an editor's buffers are read against it (:mod:`studykb.vault.buffers`):
        built whole, or ``base`` brought up to date after the refresh ``stats`` tells."""
        # deferred: loads markdown_it, mdit_py_plugins
        from studykb.vault.buffers import view

        return view(self.vault, base, stats)

    # -- the web view (issue 17) ----------------------------------------------------------------
    def outgoing(self, doc: Document) -> list[Link]:
        """The references ``doc`` makes, in line order (read through the index on the
        file's path: a few ms at 10k documents where ``show`` scans every reference)."""
        links = self.vault.links_in(doc.path)
        return [link for link in links if link.ref.source == doc.key]

    def all_links(self) -> list[Link]:
        """Every reference of the vault with its resolution, in file order (one read, for
        a whole site at once)."""
        return self.vault.links()


__all__ = ["GraphOptions", "Session", "Shown"]
