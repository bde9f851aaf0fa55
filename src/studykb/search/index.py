"""The full-text index: what other packages use of it, in one place.

One whoosh index in ``<vault>/.studykb/index/`` holds every document (and every course
unit, as its own document keyed ``path#unit``). It is a cache of the vault state, kept
in line by :func:`sync`. The search package is the only code that imports whoosh; its
parts are:

* ``store.py``     the index on disk: opening, creating, trusting it; the searchers kept open
* ``records.py``   what the index holds of each document, read from the state
* ``sync.py``      keeping the index in line with the state (re-indexing what changed)
* ``segments.py``  how an edit's commit lays out segments (folding small ones)
* ``parallel.py``  a full build of a large index in worker interpreters
* ``searcher.py``  running queries, and documents like a given one
* ``state.py``     what the index holds and should hold, known without whoosh
* ``schema.py``    the schema and the positions format; the analysis is in :mod:`studykb.text`
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studykb.search.records import NAME_WEIGHT, TAG_WEIGHT
from studykb.search.schema import MixedTokenizer, bind, make_schema
from studykb.search.searcher import (
    QUERY_HELP,
    RERANK,
    SIMILAR_TERMS,
    Answer,
    Found,
    parse_query,
    query,
    run,
    similar,
)
from studykb.search.segments import SMALL_SEGMENT
from studykb.search.state import INDEX_DIR, INDEX_NAME, INDEX_VERSION, SyncStats
from studykb.search.store import FIELD_B, POOL_MB, close
from studykb.search.sync import (
    BUILD_LOCK_WAIT,
    PARALLEL_MIN,
    QUERY_LOCK_WAIT,
    rebuild,
    sync,
    warm,
)

if TYPE_CHECKING:
    from studykb.vault import Vault


class IndexText:
    """The index's more-like-this, for related documents' ``--text index``."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def similar(self, key: str, limit: int = 20) -> list[tuple[str, float, list[str]]]:
        return list(similar(self.vault, key, limit))


__all__ = [
    "BUILD_LOCK_WAIT",
    "FIELD_B",
    "IndexText",
    "INDEX_DIR",
    "INDEX_NAME",
    "INDEX_VERSION",
    "NAME_WEIGHT",
    "PARALLEL_MIN",
    "POOL_MB",
    "QUERY_HELP",
    "QUERY_LOCK_WAIT",
    "RERANK",
    "SIMILAR_TERMS",
    "SMALL_SEGMENT",
    "TAG_WEIGHT",
    "Answer",
    "Found",
    "MixedTokenizer",
    "SyncStats",
    "bind",
    "close",
    "make_schema",
    "parse_query",
    "query",
    "rebuild",
    "run",
    "similar",
    "sync",
    "warm",
]
