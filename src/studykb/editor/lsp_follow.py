"""The language server's watcher thread: it keeps the vault's state fresh with its own
connection (or follows the process that does) and hands each new buffer view to the
server's loop, which never waits for a refresh."""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t

from studykb.api import StateError
from studykb.editor.serve import Owner
from studykb.editor.watch import Change, Watcher
from studykb.errors import StudyError

if TYPE_CHECKING:
    from studykb.editor.lsp import StudyServer

log = logging.getLogger("studykb.editor.lsp")  # the server's own log


class Follower:
    """Runs in the watcher thread of one :class:`~studykb.editor.lsp.StudyServer`."""

    def __init__(self, server: StudyServer) -> None:
        self.server = server

    def run(self) -> None:
        """Watcher thread: keep the state fresh with its own connection (or follow the
        process that does), hand each new snapshot to the loop.

        The loop thread never waits for a refresh, so completion stays fast while a
        large vault is being brought up to date.
        """
        root = self.server.root
        assert root is not None
        while not self.server.stop.is_set():
            watcher = self.new_watcher()
            if watcher is None or not self.follow(watcher, root) or self.server.stop.is_set():
                return
            self.server.call_soon(self.server.vault_gone)
            while not root.is_dir() and not self.server.stop.wait(1.0):
                pass
            time.sleep(0.2)
            self.server.call_soon(self.server.vault_back)

    def new_watcher(self) -> Watcher | None:
        """(watcher thread) A watcher of the vault; None when the vault cannot be opened
        (said, and saves then refresh it on the loop thread)."""
        try:
            watcher = Watcher(self.server.open_vault(), role="lsp", serve=self.server.serve)
            self.server.watcher = watcher
        except (StudyError, StateError, OSError) as exc:
            self.server.call_soon(
                functools.partial(self.server.message, f"studykb: {exc}", t.MessageType.Error)
            )
            self.server.watching = False
            self.server.call_soon(functools.partial(self.server.refresh, True))
            return None
        return watcher

    def follow(self, watcher: Watcher, root: Path) -> bool:
        """(watcher thread) Install a first snapshot, then follow the changes until the
        watcher stops; False when it failed with the vault still there (said: watching
        is over), True when it stopped or the vault folder went away."""
        try:
            with watcher.lock:
                self.changed(watcher, watcher.start(), full=True)
            watcher.run(
                functools.partial(self.changed, watcher),
                stop=self.server.stop,
                on_follow=self.following,
            )
        except Exception as exc:  # noqa: BLE001 - a dead watcher must not kill the server
            if root.is_dir():
                self.server.call_soon(
                    functools.partial(
                        self.server.message,
                        f"studykb: file watching stopped: {exc}",
                        t.MessageType.Warning,
                    )
                )
                self.server.watching = False
                return False
        finally:
            with contextlib.suppress(Exception):
                watcher.kb.close()
        return True

    def changed(self, watcher: Watcher, change: Change, full: bool = False) -> None:
        """(watcher thread) The state changed: build the new snapshot, install it."""
        if change.error:
            self.server.call_soon(
                functools.partial(
                    self.server.message, f"studykb: {change.error}", t.MessageType.Warning
                )
            )
        kb = watcher.kb
        try:
            if full or change.config or self.server.base_view is None:
                snap = kb.buffer_view()
            elif change.stats.changed or change.new or change.fixed:
                snap = kb.buffer_view(self.server.base_view, change.stats)
            else:
                return
            self.server.base_view = snap
        except (StateError, OSError, StudyError) as exc:
            self.server.call_soon(
                functools.partial(
                    self.server.message,
                    f"studykb: could not refresh the vault: {exc}",
                    t.MessageType.Warning,
                )
            )
            return
        if change.config:
            self.server.call_soon(self.server.settings_changed)
        self.server.call_soon(functools.partial(self.server.install, snap))

    def following(self, owner: Owner | None) -> None:
        """(watcher thread) Say once whom the live state comes from."""
        self.server.following = owner
        if owner is not None:
            log.info("following %s", owner.describe())
