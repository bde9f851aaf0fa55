"""Work that runs beside the caller in a thread (SQLite's C code, without the GIL)."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def beside(work: Callable[[], object], name: str) -> Iterator[None]:
    """Run ``work`` in a thread while the block runs; its error, if any, is raised after."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            failed.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


class Later:
    """Threads that finish work after the caller went on; joined by :meth:`join`, or at
    the latest when the process exits (so a process never ends with the work half done)."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        _LATER.add(self)

    def start(self, work: Callable[[], None], name: str) -> threading.Thread:
        thread = threading.Thread(target=work, name=name, daemon=True)
        thread.start()
        if not self._threads:
            atexit.register(self.join, 120.0)
        self._threads.append(thread)
        return thread

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)
        if self._threads:
            atexit.unregister(self.join)
        self._threads = []


_LATER: weakref.WeakSet[Later] = weakref.WeakSet()
"""Every :class:`Later` of this process, for :func:`_before_fork`."""


def _before_fork() -> None:
    """A fork copies only the calling thread: a child forked while a finishing thread
    holds a lock (SQLite's memory mutex, the allocator's) would wait on it forever. So a
    fork of this process (worker pools, the refresh beside a command) first lets the
    work of every :class:`Later` finish; threads started by ``subprocess`` are not forks
    of this interpreter and do not wait."""
    me = threading.current_thread()
    for later in list(_LATER):
        for thread in list(later._threads):  # noqa: SLF001
            if thread is not me:
                thread.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)
