"""The related-posts sidebar of a document: Related, Before this, Leads to.

``sidebar(vault, doc)`` and ``sidebars(vault)`` return :class:`Sidebar` model objects;
:mod:`studykb.outputs.sidebar` turns them into Markdown, HTML or JSON.

* Related: :func:`studykb.related.rank.related` (hand-picked first).
* Before this: the document's own ``requires``, then the prerequisites of the topics it
  covers (not those topics themselves, which it teaches).
* Leads to: the documents that require it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Generic, TypeVar

from studykb.related.rank import BLOCK, Ranker, Related, RelatedOptions
from studykb.runtime.pools import cores, imap_shared

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.related.textsim import TextSimilarity
    from studykb.vault import Vault


#: Sidebars computed in worker processes when there are at least this many (and 2+ cores).
PARALLEL_MIN = 2000
#: Sidebars made at a time (in one worker) at most: one block of the ranker's scoring.
CHUNK = BLOCK
#: About how many (document, vault document) pairs one chunk may score at once: a
#: document's candidates grow with the vault (a block of 512 held 44 MB at 10k
#: documents, 231 MB at 50k), so a large vault is ranked in smaller chunks, for the
#: same CPU per document (:func:`chunk_size`).
CELLS = 3_000_000

T = TypeVar("T")


@dataclass(frozen=True)
class Neighbour:
    """A document in "Before this" or "Leads to"."""

    key: str
    id: str
    path: str
    title: str
    type: str
    level: int | None = None
    note: str = ""
    """Why it is listed: the ``requires`` reason, or "for <topic>"."""


@dataclass(frozen=True)
class Sidebar:
    """Everything the sidebar of one document shows."""

    key: str
    id: str
    path: str
    title: str
    type: str
    related: list[Related] = field(default_factory=list)
    before: list[Neighbour] = field(default_factory=list)
    leads_to: list[Neighbour] = field(default_factory=list)
    more_before: int = 0
    """Prerequisites left out beyond the limit."""
    more_leads_to: int = 0
    """Documents that require this one, left out beyond the limit."""


#: What a document needs directly, with why, given by the caller: the first level of its
#: plan (:func:`studykb.study.plans.direct_needs`).
Needs = Callable[[str], "list[tuple[Document, str]]"]


def with_needs(found: list[Sidebar], needs: Needs, limit: int) -> list[Sidebar]:
    """The sidebars with "Before this" from ``needs`` (the plan model, as ``before``
    shows it), so the two never disagree."""
    out = []
    for sb in found:
        before = _needed(needs, sb.key)
        out.append(replace(sb, before=before[:limit], more_before=max(0, len(before) - limit)))
    return out


def _needed(needs: Needs, key: str) -> list[Neighbour]:
    return [
        Neighbour(d.key, d.id, d.path, d.title, d.type, d.level, reason) for d, reason in needs(key)
    ]


def sidebar(
    vault: Vault,
    doc: Document,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
) -> Sidebar:
    options = options or RelatedOptions()
    ranker = Ranker.for_vault(vault, options.text, index_text)
    return build(ranker, doc.key, options)


def sidebars(
    vault: Vault,
    keys: list[str] | None = None,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
    needs: Needs | None = None,
) -> list[Sidebar]:
    """Sidebars of ``keys`` (default: every document but course units), in key order:
    the related lists of a block of documents scored at once by the engine; with
    ``needs``, "Before this" from it (as :func:`with_needs` gives it)."""
    return shaped(vault, _same, keys, options, index_text, needs)


def shaped(
    vault: Vault,
    shape: Callable[[Sidebar], T],
    keys: list[str] | None = None,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
    needs: Needs | None = None,
) -> list[T]:
    """``shape(sidebar)`` of each of :func:`sidebars`, in the same order, made where the
    sidebar is made: in the workers, for a whole vault, so what comes back is what the
    caller keeps (text, say), not the sidebars' objects, which cost more to send than
    to make. All of them at once: :func:`stream` gives them a block at a time."""
    return list(stream(vault, shape, keys, options, index_text, needs))


@dataclass(frozen=True)
class Stream(Generic[T]):
    """The ``shape(sidebar)`` of each of ``keys``, in that order, made as it is iterated:
    a chunk of documents at a time (:func:`chunk_size`), in worker processes for a whole vault,
    each block let go once iterated past, so that what is held at once does not grow
    with the vault. ``keys`` and their ``paths`` are known before anything is ranked."""

    keys: list[str]
    paths: list[str]
    blocks: Callable[[], Iterator[list[T]]]

    def __iter__(self) -> Iterator[T]:
        for block in self.blocks():
            yield from block


def stream(
    vault: Vault,
    shape: Callable[[Sidebar], T],
    keys: list[str] | None = None,
    options: RelatedOptions | None = None,
    index_text: TextSimilarity | None = None,
    needs: Needs | None = None,
) -> Stream[T]:
    """:func:`shaped`, as a :class:`Stream`: the same items, in the same order."""
    options = options or RelatedOptions()
    ranker = Ranker.for_vault(vault, options.text, index_text)
    ix = ranker.ix
    if keys is None:
        keys = [k for k, t in zip(ix.keys, ix.types, strict=True) if t != "unit"]
    keys = sorted(k for k in keys if k in ix.number)
    paths = [ix.paths[ix.number[k]] for k in keys]
    return Stream(keys, paths, partial(_blocks, (ranker, options, needs, shape), keys))


def chunk_size(documents: int) -> int:
    """How many sidebars a worker makes at a time in a vault of ``documents``: what a
    chunk holds while it is scored stays about the same (30 MB) whatever the vault's
    size, and never more than :data:`CHUNK` at a time."""
    return min(CHUNK, max(16, CELLS // max(documents, 1)))


def _blocks(shared: Shared[T], keys: list[str]) -> Iterator[list[T]]:
    """The items of ``keys``, a chunk at a time, in order: workers that inherit the
    loaded engine score a chunk each (the same arithmetic as one process) when there
    are many keys."""
    ranker, options, _needs, _shape = shared
    size = chunk_size(len(ranker.ix.keys))
    chunks = [keys[n : n + size] for n in range(0, len(keys), size)]
    workers = min(cores(), 4)
    if len(keys) < PARALLEL_MIN or options.text == "index":
        workers = 1
    return imap_shared(_work, shared, chunks, workers)


def _same(sb: Sidebar) -> Sidebar:
    return sb


def build(
    ranker: Ranker,
    key: str,
    options: RelatedOptions,
    related: list[Related] | None = None,
    needs: Needs | None = None,
) -> Sidebar:
    ix = ranker.ix
    i = ix.number[key]
    limit = options.limit
    before = _before(ranker, i) if needs is None else _needed(needs, key)
    leads = sorted(ix.required_by(i), key=lambda j: (ix.levels[j] or 9, ix.titles[j], ix.keys[j]))
    return Sidebar(
        key=key,
        id=ix.ids[i],
        path=ix.paths[i],
        title=ix.titles[i],
        type=ix.types[i],
        related=related if related is not None else ranker.related(key, options),
        before=before[:limit],
        more_before=max(0, len(before) - limit),
        leads_to=[_neighbour(ranker, j, "") for j in leads[:limit]],
        more_leads_to=max(0, len(leads) - limit),
    )


def _before(ranker: Ranker, i: int) -> list[Neighbour]:
    ix = ranker.ix
    out: dict[int, Neighbour] = {}
    for j, reason in ix.requires[i]:
        out.setdefault(j, _neighbour(ranker, j, reason))
    covered = [t for t in ix.topics[i] if t != i]
    taught = set(covered)
    for t in covered:
        for j, _reason in ix.requires[t]:
            if j != i and j not in taught and j not in out:
                out[j] = _neighbour(ranker, j, f"for {ix.titles[t]}")
    return list(out.values())


def _neighbour(ranker: Ranker, j: int, note: str) -> Neighbour:
    ix = ranker.ix
    return Neighbour(
        ix.keys[j], ix.ids[j], ix.paths[j], ix.titles[j], ix.types[j], ix.levels[j], note
    )


# -- many at once -----------------------------------------------------------------------------
Shared = tuple[Ranker, RelatedOptions, "Needs | None", Callable[[Sidebar], T]]


def _work(shared: Shared[T], keys: list[str]) -> list[T]:
    ranker, options, needs, shape = shared
    lists = ranker.related_many(keys, options)
    return [shape(build(ranker, key, options, lists[key], needs)) for key in keys]
