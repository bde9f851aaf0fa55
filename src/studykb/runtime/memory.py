"""The garbage collector and the interpreter's scheduling: the one place studykb tunes them.

* :func:`paused_gc` runs a block that allocates a large structure (the first build's
  rows, the graph, the documents) with the cyclic collector off;
* :func:`settle` moves what a long-lived process (watch, language server) has loaded for
  good into the collector's permanent generation, so no collection walks it again;
* :func:`long_lived` tells this module the process lives on: :func:`paused_gc` then
  never freezes (that would keep whatever garbage exists at that moment for good);
* :func:`give_back` hands back to the system what the C allocator keeps free (after a
  first build has let go of what it held);
* :func:`responsive` makes a thread that serves requests get the interpreter back
  quickly while another thread works (the language server's background refresh).
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator

_state = {"freeze": True}


def long_lived() -> None:
    """Say that this process lives on: :func:`paused_gc` no longer freezes."""
    _state["freeze"] = False


@contextlib.contextmanager
def paused_gc(freeze: bool = False) -> Iterator[None]:
    """Run the block with the cyclic collector off (it is switched back on after).

    Building the graph of a 10k-note vault allocates about half a million dicts and
    lists that all stay alive; each allocation burst makes the collector walk every
    object again, which cost a third of the build's CPU time. Reference counting still
    frees what the block drops; only the collection of cycles waits until the end.

    ``freeze``: after a successful block of a short-lived command, move every object
    alive to the permanent generation (:func:`gc.freeze`), so no later collection walks
    them again, nor the one at interpreter exit (0.13 s for a 10k-note graph).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze and _state["freeze"]:
            gc.freeze()
    finally:
        if was:
            gc.enable()


def settle() -> None:
    """A long-lived process has loaded what it keeps: never scan it again."""
    gc.freeze()


def collector_on() -> None:
    """Switch the collector on (a worker forked while the parent had paused it)."""
    gc.enable()


def responsive() -> None:
    """Hand the interpreter between threads every millisecond (default: 5 ms), so a
    thread answering requests is not kept waiting by one refreshing in the background."""
    sys.setswitchinterval(0.001)


def give_back() -> None:
    """Hand back to the system the memory the C allocator keeps free (glibc's
    ``malloc_trim``; nothing on other C libraries). Strings over 512 bytes (a first
    build's stored documents and packed references) live in the C heap, where the
    small objects made after (each from the interpreter's own arenas) never reuse them:
    once a build has let go of them, the room stays counted unless given back."""
    if not sys.platform.startswith("linux"):
        return
    # deferred: ctypes only for this
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this interpreter uses
    except (OSError, AttributeError):  # not glibc
        return
    trim(0)
