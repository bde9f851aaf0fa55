"""Loading what a static site made again after an edit ranks with, in steps, while the
refresh runs beside this process (the site's seam for starting work before the state
is up to date: the cache only, never the state)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.vault import Vault


def site_lists_steps(vault: Vault) -> Iterator[None]:
    """Each step loads a part of what :func:`studykb.related.changes.to_rank` and the
    ranking need: numpy, scipy, the ranking code, the kept features and vectors, the
    kept engine (each read from the cache only; :meth:`Structures.get` takes them after
    updating them for what the refresh changed)."""
    import numpy  # noqa: F401

    yield
    import scipy.sparse  # noqa: F401

    yield
    from studykb.related import changes, rank  # noqa: F401 - loaded for to_rank
    from studykb.related.engine import ENGINE  # deferred: a step of its own (scipy)

    yield
    rank.warm(vault)
    yield
    vault.structures.preload(ENGINE)
