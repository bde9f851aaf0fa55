"""What a :class:`studykb.session.Session` answers about related documents, sidebars and
topic pages (a part of the session kept in its own module; the session is one class)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from studykb.study import plans
from studykb.vault import BuildStats, Vault

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.outputs.sidebar_write import Outcome
    from studykb.related.rank import Related, RelatedOptions
    from studykb.related.sidebar import Sidebar, Stream
    from studykb.related.topics import Topic, TopicPage

T = TypeVar("T")


def _structure_names() -> frozenset[str]:
    """The cache names of every derived structure (loads every structure's code)."""
    # deferred: loads every structure's code (numpy and scipy among it)
    from studykb.structures import names

    return names()


class RelatedViews:
    """Related documents, sidebars and topics of the session's vault."""

    vault: Vault

    def prepare_related(self, stats: BuildStats) -> bool:
        """After a refresh, make what related documents need when the refresh read many
        files or none of it is kept yet; whether it did (:func:`studykb.related.engine.prepare`,
        then the graph's rows of one document's ranking, :mod:`studykb.related.row_graph`)."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.engine import ENGINE, prepare
        from studykb.related.row_graph import ROW_GRAPH  # deferred: loads numpy
        from studykb.related.vectorcache import VECTORS  # deferred: loads numpy

        if not prepare(self.vault, stats, _structure_names):
            return False
        # the engine and the vectors are written: let them go before the graph's rows of
        # one document's ranking are made (of the features alone), so the build holds
        # no more at once than before they were
        self.vault.structures.forget([ENGINE, VECTORS])
        self.vault.derived(ROW_GRAPH)
        self.vault.structures.forget([ROW_GRAPH])
        return True

    def warm_related(self) -> Iterator[None]:
        """Steps that load what related documents need and read what is kept of it,
        ahead of ranking one document (the cache only: they may run while the refresh
        runs beside them; the first always, the others while it still runs:
        :func:`studykb.related.rank.warm_steps`)."""
        # deferred: loads ahocorasick_rs, numpy
        from studykb.related.rank import warm_steps

        return warm_steps(self.vault)

    def related(self, doc: Document, options: RelatedOptions | None = None) -> list[Related]:
        """Related documents, best first, with the reasons in words."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.rank import related

        return related(self.vault, doc, options, self._index_text(options))

    def sidebar(self, doc: Document, options: RelatedOptions | None = None) -> Sidebar:
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.sidebar import sidebar

        found = sidebar(self.vault, doc, options, self._index_text(options))
        return self._plan_before([found], options)[0]

    def sidebars(
        self, keys: list[str] | None = None, options: RelatedOptions | None = None
    ) -> list[Sidebar]:
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.sidebar import sidebars

        return sidebars(self.vault, keys, options, self._index_text(options), self._needs())

    def sidebars_as(
        self,
        shape: Callable[[Sidebar], T],
        keys: list[str] | None = None,
        options: RelatedOptions | None = None,
    ) -> list[T]:
        """``shape(sidebar)`` of each of :meth:`sidebars`, made where the sidebar is (in
        the workers, for a whole vault: :func:`studykb.related.sidebar.shaped`)."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.sidebar import shaped

        return shaped(self.vault, shape, keys, options, self._index_text(options), self._needs())

    def sidebars_stream(
        self,
        shape: Callable[[Sidebar], T],
        keys: list[str] | None = None,
        options: RelatedOptions | None = None,
    ) -> Stream[T]:
        """:meth:`sidebars_as`, a block at a time as it is iterated (the keys and paths
        known first): :func:`studykb.related.sidebar.stream`."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.sidebar import stream

        return stream(self.vault, shape, keys, options, self._index_text(options), self._needs())

    def _plan_before(self, found: list[Sidebar], options: RelatedOptions | None) -> list[Sidebar]:
        """The sidebars with "Before this" from the plan model (the first level of each
        document's plan, as ``before`` shows it), so the two never disagree."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.rank import RelatedOptions

        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.sidebar import with_needs

        limit = (options or RelatedOptions()).limit
        return with_needs(found, self._needs(), limit)

    def _needs(self) -> Any:
        """What a document needs directly, as its plan's first level has it."""
        kb = plans.knowledge(self.vault)
        return lambda key: plans.direct_needs(kb, key)

    def _index_text(self, options: RelatedOptions | None) -> Any:
        """The search index's more-like-this, for related documents' ``--text index``."""
        if options is None or options.text != "index":
            return None
        # deferred: loads Stemmer, whoosh
        from studykb.search import index

        return index.IndexText(self.vault)

    def warm_lists(self) -> Iterator[None]:
        """Steps that load what :meth:`lists_to_rank` and the sidebars need, ahead of
        them (the cache only: they may run while the refresh runs beside them;
        :func:`studykb.related.warming.site_lists_steps`)."""
        # deferred: its steps load numpy, scipy
        from studykb.related.warming import site_lists_steps

        return site_lists_steps(self.vault)

    def lists_to_rank(self, state: str) -> tuple[set[str] | None, dict[str, str]]:
        """For a static site last made at ``state``: the documents whose
        related lists may have changed since (None: every one), and the digests of the
        lists it was made with (:func:`studykb.related.changes.to_rank`)."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.changes import to_rank

        return to_rank(self.vault, state)

    def keep_lists(self, state: str, digests: dict[str, str]) -> None:
        """Keep what :meth:`lists_to_rank` compares with next time."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.changes import keep

        keep(self.vault, state, digests)

    def write_sidebars(self, found: list[Sidebar], dry_run: bool = False) -> Outcome:
        """Put each note's sidebar between its markers (only what changed is written)."""
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.outputs import sidebar_write

        outcome = sidebar_write.plan(self.vault, found)
        return outcome if dry_run else sidebar_write.apply(outcome)

    def topics(self) -> list[Topic]:
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.topics import topics

        return topics(self.vault)

    def topic_page(self, doc: Document) -> TopicPage:
        # deferred: loads ahocorasick_rs, numpy, scipy
        from studykb.related.topics import topic_page

        return topic_page(self.vault, doc)

    # -- writing beside an editor ---------------------------------------------------------------
