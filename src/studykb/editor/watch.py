"""Keeping the state (and the search index) fresh while files change: ``studykb watch``.

Events only say *that* something changed; what changed is decided by
:meth:`Session.refresh <studykb.session.Session.refresh>`, which compares the disk with
the stored state. That makes every editor's way of saving the same thing:
write-to-temp-and-rename, swap files (``.x.md.swp``, ``x.md~``, vim's ``4913`` probe),
deletions, renames of files or folders, and the burst of a ``git checkout`` (watchfiles
groups changes until ``step_ms`` pass without a new one, at most ``debounce_ms``).

One live state per vault: the first process to run a :class:`Watcher` (``studykb
watch``, ``studykb lsp``, the web view) owns the refresh and the vault's socket
(:mod:`studykb.editor.serve`); a later one follows it, refreshing when the owner says
the state changed, and takes over when the owner stops. Whoever refreshed, each
process diffs the state against what it saw last (the files' hashes and the
problems), so no change is lost to another process having written it first.

Nothing here prints: the caller gets a :class:`Change` per refresh and formats it;
:meth:`Watcher.subscribe` hands the same changes to any number of listeners.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from studykb.api import CONFIG_NAME, BuildStats, Session, StateError
from studykb.editor.serve import REFUSED, STOPPED, CommandServer, Owner, follow
from studykb.errors import StudyError
from studykb.model import Problem
from studykb.runtime.memory import long_lived, settle

#: Names editors and tools write next to a note that are never notes themselves.
_NOISE = re.compile(
    r"(^\d+$)|(~$)|(\.sw[a-p]$)|(\.tmp$)|(___jb_\w+___$)|(^#.*#$)|"
    r"(\.kate-swp$)|(\.crswap$)|(\.orig$)"
)
#: Brings a session's search index in step with its state, after each refresh.
Sync = Callable[[Session], object]


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
    config: bool = False
    """Whether studykb.toml was read again (settings may have changed)."""


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
    if any(
        "/".join(parts[:i]) in excluded or parts[i - 1] in excluded
        for i in range(1, len(parts) + 1)
    ):
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
    """What keeps the search index fresh beside the state (:meth:`Session.sync_search`,
    shown as no phase: a watch's syncs come and go)."""
    return _sync_search


def _sync_search(kb: Session) -> object:
    return kb.sync_search(shown=False)


#: Called with each change, in the thread that refreshed, under :attr:`Watcher.lock`.
Listener = Callable[[Change], None]
#: Makes the vault's socket server: (state folder, the session now, the lock) -> server.
ServerFactory = Callable[[Path, Callable[[], Session], threading.Lock], CommandServer]
#: Seconds a follower keeps trying to reach an owner that holds the lock but does not
#: answer (still starting, or unable to listen) before it refreshes on its own.
FOLLOW_PATIENCE = 10.0


class Watcher:
    """Refreshes a session's vault (and its index) and diffs its problems; :meth:`run`
    owns the refresh or follows the process that does."""

    def __init__(
        self,
        kb: Session,
        sync: Sync | None = None,
        *,
        step_ms: int = 30,
        debounce_ms: int = 1600,
        role: str = "watch",
        serve: ServerFactory | None = None,
    ) -> None:
        self.kb = Session.of(kb)  # (a Vault, from a script written before, is wrapped)
        """The session kept fresh (reopened here, when another process wrote or the
        settings changed: whoever holds it sees the vault as it is)."""
        self.sync = sync
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.role = role
        """How this process introduces itself to followers: ``watch``, ``lsp``, ``web``."""
        self.serve = serve
        """Makes the socket server that also answers commands (None: followers only)."""
        self.server: CommandServer | None = None
        self.owner: Owner | None = None
        """The process followed, while following one."""
        self._problems: Counter[tuple[str, str, str, str]] = Counter()
        self._latest: dict[tuple[str, str, str, str], Problem] = {}
        self._files: dict[str, str] | None = None
        """What the state held at the last look: path -> content hash."""
        self._synced = False
        self._listeners: list[Listener] = []
        self.lock = threading.Lock()
        """Held while the watch refreshes and reports, and while it answers a command."""

    @property
    def root(self) -> Path:
        return Path(self.kb.root)

    @property
    def serving(self) -> bool:
        """Whether this process owns the vault's socket and answers commands on it."""
        return bool(self.server and self.server.listening and self.server.serves_commands)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every change from now on; returns the unsubscribe call."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def start(self) -> Change:
        """The first refresh; its problems are the baseline later changes are diffed with."""
        long_lived()
        change = self.refresh(force=True)
        settle()  # what is loaded by now lives as long as the watch: never scan it again
        return Change(change.stats, [], [], change.indexed, change.error)

    def refresh(self, force: bool = False, config: bool = False) -> Change:
        """Refresh now; what changed in the state since the last look, whoever wrote it.

        The search index is synced first (it is what a user waits for); the problems
        are listed again only when something changed, or with ``force``.
        """
        try:
            own = self.kb.refresh()
            stats = self._look(own)
        except (StateError, OSError, StudyError) as exc:
            return Change(BuildStats(), error=f"refresh failed: {exc}", config=config)
        indexed, error = False, None
        if self.sync is not None and (stats.changed or not self._synced):
            try:
                self.sync(self.kb)
                indexed = True
                self._synced = True
            except (StudyError, StateError, OSError) as exc:
                error = f"search index not updated: {exc}"
        if not (stats.changed or force):
            return Change(stats, [], [], indexed, error, config)
        try:
            problems = self.kb.problems()
        except (StateError, OSError) as exc:
            return Change(stats, indexed=indexed, error=f"refresh failed: {exc}", config=config)
        counted = Counter(_identity(p) for p in problems)
        latest = {_identity(p): p for p in problems}
        new = [latest[k] for k in sorted(counted - self._problems)]
        fixed = [self._latest[k] for k in sorted(self._problems - counted)]
        self._problems, self._latest = counted, latest
        return Change(stats, new, fixed, indexed, error, config)

    def _look(self, own: BuildStats) -> BuildStats:
        """``own`` (what this process's refresh did) with the files that changed in the
        state since the last look, whoever changed them."""
        files = self.kb.file_hashes()
        before, self._files = self._files, files
        if before is None:
            return own
        added = sorted(files.keys() - before.keys())
        removed = sorted(before.keys() - files.keys())
        modified = sorted(p for p in files.keys() & before.keys() if files[p] != before[p])
        if (added or removed or modified) and not own.changed:
            self.kb.reopen()  # another process wrote: what this one keeps in memory is old
        return BuildStats(
            added,
            modified,
            removed,
            own.documents,
            own.links,
            own.problems,
            own.errors,
            own.seconds,
            own.notice,
        )

    def _settings_changed(self) -> bool:
        """Whether studykb.toml says something else than when the vault was opened (it
        changed before the folder was watched)."""
        return self.kb.settings_changed()

    def reload_config(self) -> None:
        """studykb.toml changed: reopen the vault with the new settings."""
        self.kb.reopen()

    # -- running -------------------------------------------------------------------------
    def run(
        self,
        on_change: Listener | None = None,
        stop: threading.Event | None = None,
        on_gone: Callable[[], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        on_follow: Callable[[Owner | None], None] | None = None,
    ) -> None:
        """Keep the state fresh until ``stop`` is set: own the refresh, or follow the
        process that owns it (taking over when it stops).

        ``on_ready`` is called once the process is live (the folder watched, or the owner
        followed, after a catch-up refresh); ``on_follow`` with the owner when this
        process starts following one, and with None when it takes over. Returns when the
        vault folder disappears (after calling ``on_gone``). Ctrl-C raises
        KeyboardInterrupt, for the caller to end quietly.
        """
        stop = stop or threading.Event()
        unsubscribe = self.subscribe(on_change) if on_change is not None else None
        ready = _Once(on_ready)
        try:
            self._run(stop, ready, on_gone, on_follow)
        finally:
            if unsubscribe is not None:
                unsubscribe()
            if self.server is not None:
                self.server.stop()
                self.server = None

    def _run(
        self,
        stop: threading.Event,
        ready: _Once,
        on_gone: Callable[[], None] | None,
        on_follow: Callable[[Owner | None], None] | None,
    ) -> None:
        waited = 0.0
        while not stop.is_set():
            if not self.root.is_dir():
                if on_gone:
                    on_gone()
                return
            server = self.server = self._server()  # (stopped by run() however it ends)
            if server is None or server.start() or server.own():
                if self.owner is not None and on_follow:
                    on_follow(None)  # the owner stopped: this process takes over
                self.owner = None
                self._own(stop, ready, on_gone)
                return
            self.server = None
            followed = self.owner
            ended = follow(
                self.kb.config.state_dir,
                stop,
                lambda owner: self._followed(owner, ready, on_follow),
                self._event,
            )
            if ended == STOPPED:
                return
            if ended == REFUSED or waited > FOLLOW_PATIENCE:
                self.owner = None
                self._own(stop, ready, on_gone)  # cannot follow it: refresh on its own
                return
            subscribed = self.owner is not None and self.owner is not followed
            waited = 0.0 if subscribed else waited + 0.2
            stop.wait(0.05 if subscribed else 0.2)

    def _server(self) -> CommandServer | None:
        if not hasattr(socket, "AF_UNIX"):
            return None
        if self.serve is not None:
            server = self.serve(self.kb.config.state_dir, lambda: self.kb, self.lock)
            server.role = self.role
            return server
        return CommandServer(self.kb.config.state_dir, lock=self.lock, role=self.role)

    def _followed(
        self, owner: Owner, ready: _Once, on_follow: Callable[[Owner | None], None] | None
    ) -> None:
        """Subscribed to ``owner``: catch up, then say so."""
        self.owner = owner
        if on_follow:
            on_follow(owner)
        self._event({"event": "changed", "paths": [], "config": self._settings_changed()})
        ready()

    def _event(self, event: dict[str, object]) -> None:
        """(follower) The owner changed the state: look at it."""
        with self.lock:
            config = bool(event.get("config"))
            if config:
                try:
                    self.reload_config()
                except StudyError as exc:
                    self._emit(Change(BuildStats(), error=str(exc), config=True))
                    return
            change = self.refresh(force=config, config=config)
            if _worth_telling(change):
                self._emit(change)

    def _emit(self, change: Change) -> None:
        for listener in list(self._listeners):
            listener(change)

    def _own(self, stop: threading.Event, ready: _Once, on_gone: Callable[[], None] | None) -> None:
        """Watch the folder and refresh after every batch of relevant changes."""
        # deferred: watchfiles loads only for watching
        import watchfiles

        root = self.root

        def wanted(_change: object, path: str) -> bool:
            return relevant(path, root, self.kb.config.exclude)  # as studykb.toml says now

        first = True
        try:
            for batch in watchfiles.watch(
                root,
                watch_filter=wanted,
                debounce=self.debounce_ms,
                step=self.step_ms,
                stop_event=stop,
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=True,
            ):
                if not root.is_dir():
                    break
                if first:  # the first wake-up: the watch is in place; catch up
                    batch = batch or {(watchfiles.Change.modified, str(root))}
                if batch and self._take(batch, first) and first:
                    first = False
                    ready()
        except OSError:
            if root.is_dir():
                raise
        if not root.is_dir() and on_gone:
            on_gone()

    def _take(self, batch: Iterable[tuple[object, str]], first: bool) -> bool:
        """Refresh after one batch of changes (the settings too when studykb.toml is in
        it), tell the listeners and the followers; False when the new settings could not
        be read (nothing refreshed)."""
        settings = any(Path(p).name == CONFIG_NAME for _c, p in batch) or (
            first and self._settings_changed()
        )
        with self.lock:
            if settings:
                try:
                    self.reload_config()
                except StudyError as exc:
                    self._emit(Change(BuildStats(), error=str(exc), config=True))
                    return False
            change = self.refresh(force=settings, config=settings)
            if _worth_telling(change):
                self._emit(change)
            server = self.server
            if server is not None and server.listening and (change.stats.changed or settings):
                st = change.stats
                server.broadcast([*st.added, *st.modified, *st.removed], settings)
        return True


class _Once:
    """A callback run at most once."""

    def __init__(self, func: Callable[[], None] | None) -> None:
        self.func = func

    def __call__(self) -> None:
        func, self.func = self.func, None
        if func is not None:
            func()


def _worth_telling(change: Change) -> bool:
    """Whether listeners hear of a refresh: something changed, or the settings did."""
    return bool(change.stats.changed or change.new or change.fixed or change.error or change.config)


def _identity(p: Problem) -> tuple[str, str, str, str]:
    """A problem's identity across edits: its line may move while it stays the same problem."""
    return (p.path, p.code, p.message, p.severity)
