"""Pausing Python's cyclic garbage collector while a large structure is built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: False in a process that lives on (watch, language server): there, freezing would keep
#: whatever cyclic garbage exists at that moment for good.
FREEZE = True


def long_lived() -> None:
    """Say that this process lives on: :func:`paused_gc` no longer freezes."""
    global FREEZE
    FREEZE = False


@contextlib.contextmanager
def paused_gc(freeze: bool = False) -> Iterator[None]:
    """Run the block with the cyclic collector off (it is switched back on after).

    Building the graph of a 10k-note vault allocates about half a million dicts and
    lists that all stay alive; each allocation burst makes the collector walk every
    object again, which cost a third of the build's CPU time. Reference counting still
    frees what the block drops; only the collection of cycles waits until the end.

    ``freeze``: after a successful block, move every object alive to the collector's
    permanent generation (:func:`gc.freeze`), so no later collection walks them again,
    nor the one at interpreter exit (0.13 s for a 10k-note graph). The graph and the
    documents hold no reference cycles, so dropping them still frees them.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze and FREEZE:
            gc.freeze()
    finally:
        if was:
            gc.enable()
