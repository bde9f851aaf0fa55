"""Work that runs beside the caller in a thread (SQLite's C code, without the GIL)."""

from __future__ import annotations

import atexit
import contextlib
import threading
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
