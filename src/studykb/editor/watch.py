"""Keeping the state (and the search index) fresh while files change: ``studykb watch``.

Events only say *that* something changed; what changed is decided by
:meth:`Vault.refresh`, which compares the disk with the stored state. That makes
every editor's way of saving the same thing: write-to-temp-and-rename, swap files
(``.x.md.swp``, ``x.md~``, vim's ``4913`` probe), deletions, renames of files or
folders, and the burst of a ``git checkout`` (watchfiles groups changes until
``step_ms`` pass without a new one, at most ``debounce_ms``).

Nothing here prints: the caller gets a :class:`Change` per refresh and formats it.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from studykb.config import CONFIG_NAME
from studykb.errors import StudyError
from studykb.model import Problem
from studykb.vault import BuildStats, StateError, Vault

#: Names editors and tools write next to a note that are never notes themselves.
_NOISE = re.compile(r"(^\d+$)|(~$)|(\.sw[a-p]$)|(\.tmp$)|(___jb_\w+___$)|(^#.*#$)|"
                    r"(\.kate-swp$)|(\.crswap$)|(\.orig$)")
Sync = Callable[[Vault], object]


@dataclass(frozen=True)
class Change:
    """What one refresh after a change on disk did."""

    stats: BuildStats
    new: list[Problem] = field(default_factory=list)
    """Problems that were not there before the refresh."""
    fixed: list[Problem] = field(default_factory=list)
    """Problems that the refresh made disappear."""
    indexed: bool = False
    """Whether the search index was brought up to date too."""
    error: str | None = None
    """Why the refresh (or the index sync) failed; the watch goes on."""


def relevant(path: str, root: Path, exclude: Iterable[str] = ()) -> bool:
    """Whether a changed path can change the vault: a note, a folder, or studykb.toml."""
    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        return False
    if rel == CONFIG_NAME:
        return True
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return False  # hidden folders and files, including .studykb/ and .git/
    excluded = set(exclude)
    if any("/".join(parts[:i]) in excluded or parts[i - 1] in excluded
           for i in range(1, len(parts) + 1)):
        return False
    name = parts[-1]
    if name.lower().endswith(".md"):
        return True
    if _NOISE.search(name):
        return False
    # a folder created, renamed or deleted (git checkout, mv notes/a notes/b) moves notes
    # without an event per file; a folder that is gone has no extension, usually
    return os.path.isdir(path) or not posixpath.splitext(name)[1]


def index_sync() -> Sync | None:
    """``studykb.search.index.sync`` when the search index exists in this installation."""
    try:
        from studykb.search import index
    except ImportError as exc:
        if exc.name in (f"{__package__}.index", __package__):
            return None
        raise
    sync = getattr(index, "sync", None)
    return sync if callable(sync) else None


class Watcher:
    """Refreshes a vault (and its index) and diffs its problems; :meth:`run` loops on events."""

    def __init__(self, vault: Vault, sync: Sync | None = None, *, step_ms: int = 30,
                 debounce_ms: int = 1600) -> None:
        self.vault = vault
        self.sync = sync
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self._problems: Counter[tuple[str, str, str, str]] = Counter()
        self._latest: dict[tuple[str, str, str, str], Problem] = {}
        self._synced = False
        self.lock = threading.Lock()
        """Held while the watch refreshes and reports, and while it answers a command."""

    @property
    def root(self) -> Path:
        return self.vault.root

    def start(self) -> Change:
        """The first refresh; its problems are the baseline later changes are diffed with."""
        from studykb.runtime.memory import long_lived, settle

        long_lived()
        change = self.refresh(force=True)
        settle()  # what is loaded by now lives as long as the watch: never scan it again
        return Change(change.stats, [], [], change.indexed, change.error)

    def refresh(self, force: bool = False) -> Change:
        """Refresh now; the problems that appeared and disappeared since the last refresh.

        The search index is synced first (it is what a user waits for); the problems
        are listed again only when something changed, or with ``force``.
        """
        try:
            stats = self.vault.refresh()
        except (StateError, OSError, StudyError) as exc:
            return Change(BuildStats(), error=f"refresh failed: {exc}")
        indexed, error = False, None
        if self.sync is not None and (stats.changed or not self._synced):
            try:
                self.sync(self.vault)
                indexed = True
                self._synced = True
            except (StudyError, StateError, OSError) as exc:
                error = f"search index not updated: {exc}"
        if not (stats.changed or force):
            return Change(stats, [], [], indexed, error)
        try:
            problems = self.vault.problems()
        except (StateError, OSError) as exc:
            return Change(stats, indexed=indexed, error=f"refresh failed: {exc}")
        counted = Counter(_identity(p) for p in problems)
        latest = {_identity(p): p for p in problems}
        new = [latest[k] for k in sorted(counted - self._problems)]
        fixed = [self._latest[k] for k in sorted(self._problems - counted)]
        self._problems, self._latest = counted, latest
        return Change(stats, new, fixed, indexed, error)

    def reload_config(self) -> None:
        """studykb.toml changed: reopen the vault with the new settings."""
        old = self.vault
        self.vault = Vault.open(self.root)
        old.close()

    def run(self, on_change: Callable[[Change], None],
            stop: threading.Event | None = None,
            on_gone: Callable[[], None] | None = None,
            on_ready: Callable[[], None] | None = None) -> None:
        """Refresh after every batch of relevant changes until ``stop`` is set.

        ``on_ready`` is called once the folder is being watched (after a catch-up refresh
        for what changed while the watch was set up). Returns when the vault folder
        disappears (after calling ``on_gone``). Ctrl-C raises KeyboardInterrupt, for the
        caller to end quietly.
        """
        import watchfiles

        root = self.root
        exclude = self.vault.config.exclude

        def wanted(_change: object, path: str) -> bool:
            return relevant(path, root, exclude)

        try:
            for batch in watchfiles.watch(root, watch_filter=wanted, debounce=self.debounce_ms,
                                          step=self.step_ms, stop_event=stop, rust_timeout=500,
                                          yield_on_timeout=True, raise_interrupt=True):
                if not root.is_dir():
                    break
                if on_ready is not None:  # the first wake-up: the watch is in place
                    batch = batch or {(watchfiles.Change.modified, str(root))}
                if not batch:
                    continue
                settings = any(Path(p).name == CONFIG_NAME for _c, p in batch)
                with self.lock:
                    if settings:
                        try:
                            self.reload_config()
                        except StudyError as exc:
                            on_change(Change(BuildStats(), error=str(exc)))
                            continue
                        exclude = self.vault.config.exclude
                    change = self.refresh(force=settings)
                    if change.stats.changed or change.new or change.fixed or change.error:
                        on_change(change)
                if on_ready is not None:
                    on_ready()
                    on_ready = None
        except OSError:
            if root.is_dir():
                raise
        if not root.is_dir() and on_gone:
            on_gone()


def _identity(p: Problem) -> tuple[str, str, str, str]:
    """A problem's identity across edits: its line may move while it stays the same problem."""
    return (p.path, p.code, p.message, p.severity)
