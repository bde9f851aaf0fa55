"""Every derived structure of a vault, in one list.

Each entry is a :class:`studykb.vault.derived.Derived` defined in its own module; adding
one is that module plus one line here (``docs/design/architecture.md`` walks through it).
The list is what the declarations are checked by (``tests/test_declarations.py``: each
structure's ``made_by`` covers the studykb modules its code imports, and every entry the
cache holds is named here or in :data:`studykb.vault.cache.MADE_BY`), and what
:meth:`studykb.vault.cache.Cache.prune` keeps.

Importing this module loads every structure's code (numpy and scipy among it): the query
paths import the one structure they read, never this list.
"""

from __future__ import annotations

from typing import Any

from studykb.related.engine import ENGINE
from studykb.related.features import FEATURES
from studykb.related.row_graph import ROW_GRAPH
from studykb.related.vectorcache import VECTORS
from studykb.search.names import SEARCH_NAMES
from studykb.search.state import SEARCH_INDEX
from studykb.study.plans import TABLES
from studykb.vault.derived import Derived
from studykb.vault.topics import TOPICS

ALL: tuple[Derived[Any], ...] = (
    TOPICS,
    TABLES,
    FEATURES,
    VECTORS,
    ENGINE,
    ROW_GRAPH,
    SEARCH_NAMES,
    SEARCH_INDEX,
)


def names() -> frozenset[str]:
    """The cache names of every derived structure, with the entries a structure keeps
    besides its own (its ``entries``, as the search index's per-file signatures)."""
    return frozenset(name for spec in ALL for name in (spec.name, *getattr(spec, "entries", ())))


__all__ = ["ALL", "names"]
