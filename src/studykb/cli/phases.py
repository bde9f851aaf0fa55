"""What a long command is doing, shown on a terminal (:class:`Phases`)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


class Phases:
    """What a long build is doing, on standard error: a bar while files are parsed
    (from 200 files), then a spinner naming each later step (resolving the references
    and writing the state, building the search index) with the seconds it has taken.
    A step done in under half a second shows nothing."""

    DELAY = 0.5

    def __init__(self, console: Any) -> None:
        # deferred: only this path starts threads
        import threading

        self.console = console
        self.bar: Any = None
        self.task: Any = None
        self.spinner: Any = None
        self.current: str | None = None
        """The step under way (a late timer for an ended step shows nothing)."""
        self.lock = threading.Lock()

    @classmethod
    def on_terminal(cls) -> Phases | None:
        if not sys.stderr.isatty() or os.environ.get("CI"):
            return None
        # deferred: rich loads in ~0.1 s; only terminal output needs it
        from rich.console import Console

        return cls(Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR"))))

    def tick(self, done: int, total: int) -> None:
        """Progress of the parse; when it ends, the writing of the state begins."""
        if total < 200:
            return
        if self.bar is None:
            # deferred: rich loads in ~0.1 s; only terminal output needs it
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("parsing"),
                BarColumn(),
                MofNCompleteColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("parse", total=total)
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.bar.stop()
            self.bar = None
            self._spin("resolving references and writing the state")

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Show ``name`` while the block runs (once it has run for :attr:`DELAY`)."""
        # deferred: only this path starts threads
        import threading

        self.stop()
        self.current = name
        timer = threading.Timer(self.DELAY, self._spin, (name,))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            self.stop()

    def _spin(self, name: str) -> None:
        # deferred: rich loads in ~0.1 s; only terminal output needs it
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self.lock:
            if self.current not in (name, None) or self.spinner is not None:
                return
            self.current = name
            self.spinner = Progress(
                SpinnerColumn(),
                TextColumn(name),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.spinner.add_task(name, total=None)
            self.spinner.start()

    def stop(self) -> None:
        with self.lock:
            for shown in (self.bar, self.spinner):
                if shown is not None:
                    shown.stop()
            self.bar = self.spinner = None
            self.current = None
