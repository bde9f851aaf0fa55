"""Live pages: the keys of changed documents, from the watch's refresh to every open page.

The seam is one callable, a :data:`Source`: ``source(publish, stop)`` runs until ``stop``
is set and calls ``publish(keys)`` after each refresh that changed something. The web
app runs it in a thread beside the server and hands each batch to every open
``/api/events`` stream through a :class:`Hub`. :func:`watch_source` is the source
``studykb serve`` uses: :class:`studykb.editor.watch.Watcher` on the app's own vault,
so the pages and the watch share one refresh (no second indexer).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from studykb.editor.serve import _answers
from studykb.launch import SOCKET_NAME

if TYPE_CHECKING:
    from studykb.api import Session

Publish = Callable[[list[str]], None]
Source = Callable[[Publish, threading.Event], None]


class Hub:
    """Hands each published batch of keys to every subscriber (thread-safe publish)."""

    def __init__(self) -> None:
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[list[str] | None]]]
        self._subscribers = set()
        self._lock = threading.Lock()

    def publish(self, keys: list[str]) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            with contextlib.suppress(RuntimeError):  # that loop is closed
                loop.call_soon_threadsafe(queue.put_nowait, list(keys))

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, None)

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._subscribers)

    async def batches(self, heartbeat: float = 15.0) -> AsyncIterator[list[str]]:
        """Batches of changed keys as they come; an empty batch every ``heartbeat``
        seconds (so a closed connection is noticed); ends when the hub closes."""
        queue: asyncio.Queue[list[str] | None] = asyncio.Queue()
        entry = (asyncio.get_running_loop(), queue)
        with self._lock:
            self._subscribers.add(entry)
        try:
            while True:
                try:
                    keys = await asyncio.wait_for(queue.get(), heartbeat)
                except TimeoutError:
                    keys = []
                if keys is None:
                    return
                yield keys
        finally:
            with self._lock:
                self._subscribers.discard(entry)


def watch_source(kb: Session, lock: threading.Lock, *, index: bool = True) -> Source:
    """A source that watches ``kb``'s vault folder and refreshes ``kb`` (and, with
    ``index``, its search index) after each change, holding ``lock`` while it does."""

    def run(publish: Publish, stop: threading.Event) -> None:
        # deferred: loads frontmatter, msgpack, yaml
        from studykb.editor.watch import Change, Watcher, index_sync

        watcher = Watcher(kb, index_sync() if index else None)  # (reopens kb, under lock)
        watcher.lock = lock

        def changed(change: Change) -> None:
            stats = change.stats
            keys = [*stats.added, *stats.modified, *stats.removed]
            if keys or change.new or change.fixed:
                publish(keys or ["studykb.toml"])

        watcher.run(changed, stop=stop, on_ready=lambda: None)  # catch up first

    return run


def watch_owned(kb: Session) -> bool:
    """Whether a ``studykb watch`` already keeps this vault's search index."""
    return _answers(kb.config.state_dir / SOCKET_NAME)
