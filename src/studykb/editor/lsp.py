"""The language server's state: ``studykb lsp`` (with ``lsp_features.py``, the only
modules that import pygls and lsprotocol).

It keeps a :class:`~studykb.session.Session` open, its state refreshed by a file watcher
(see :mod:`studykb.editor.watch`), and an immutable :class:`~studykb.vault.buffers.BufferView`
of names for completion and resolution. Each open buffer is parsed as typed
(:func:`studykb.vault.buffers.analyse`), so its problems show before it is saved. Every
call to the session happens on the event-loop thread
(SQLite connections belong to one thread); the watcher thread only signals, and a
large buffer is parsed in a worker thread (``lsp_work.py``), so that the loop answers the
other buffers meanwhile. The requests it answers (completion, definition, hover...) are
in ``lsp_features.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from studykb import __version__
from studykb.api import (
    Analysis,
    BufferView,
    Config,
    Session,
    StateError,
    analyse,
    anchor_line,
    neighbours,
)
from studykb.editor import positions
from studykb.editor.lsp_follow import Follower
from studykb.editor.lsp_work import LARGE, Protocol, Readings
from studykb.editor.serve import Owner
from studykb.editor.watch import ServerFactory, Watcher
from studykb.errors import StudyError
from studykb.model import Problem

log = logging.getLogger(__name__)


class StudyServer(LanguageServer):
    """A pygls server with the session, the buffer view and the analyses of open buffers."""

    def __init__(self, vault_dir: str | None, serve: ServerFactory | None = None) -> None:
        super().__init__("studykb", __version__, protocol_cls=Protocol)
        self.vault_dir = vault_dir
        self.serve = serve
        """Makes the vault's socket server when this process owns the live state (the
        command line's, so commands are answered here too); None: followers only."""
        self.kb: Session | None = None
        """The vault, open on the loop thread."""
        self.root: Path | None = None
        self.explicit = True
        self.loose = False
        """No vault found from the workspace (yet): see :meth:`adopt`."""
        self._near: dict[Path, BufferView] = {}
        self.following: Owner | None = None
        self.watcher: Watcher | None = None
        self.snap = BufferView.empty(Config(root=Path.cwd()))
        self.analyses: dict[str, tuple[int | None, Analysis]] = {}
        self.code_facts: dict[Any, Any] = {}
        """What each file of a tracked repository says (by blob id): see repos.buffer."""
        self.stop = threading.Event()
        self.watching = False
        self.ready = False
        """Whether a snapshot of the vault is installed."""
        self.gone = False
        self.on_disk: set[str] = set()
        """Open buffers whose file exists (to notice a deletion)."""
        self._pending: set[str] = set()
        self._headings: dict[str, str | None] = {}
        self._loop: Any = None
        self.base_view: BufferView | None = None
        """(watcher thread) The last snapshot it built, the base of the next one."""
        self.generation = 0
        """Which snapshot is installed (a buffer read against an older one is read again)."""
        self.readings: Readings[Analysis] = Readings(self._read)
        """Large buffers, read in worker threads."""

    # -- the vault ---------------------------------------------------------------------
    def open_vault(self) -> Session:
        """The vault: --vault, $STUDYKB_VAULT, else the nearest folder with studykb.toml
        (or a trusted ``.studykb/``) at or above the workspace folder."""
        if self.root is not None:
            return Session.at(self.root, self.explicit)
        workspace = self.workspace.root_path
        folders = list(self.workspace.folders.values())
        if not workspace and folders:
            workspace = to_fs_path(folders[0].uri)
        cwd = Path(workspace) if workspace else None
        root, self.explicit = Session.locate(self.vault_dir, cwd=cwd)
        self.root = root
        return Session.at(root, self.explicit)

    def _marked(self) -> bool:
        """Whether the vault is named or marked at or above the workspace folder. A folder
        taken only because it looks like notes (a folder above several vaults, a home
        folder) is not: each file's vault is then found from the file (:meth:`adopt`)."""
        if self.vault_dir or os.environ.get("STUDYKB_VAULT"):
            return True
        workspace = self.workspace.root_path
        folders = list(self.workspace.folders.values())
        if not workspace and folders:
            workspace = to_fs_path(folders[0].uri)
        try:
            _root, explicit = Session.locate(None, cwd=Path(workspace) if workspace else None)
        except StudyError:
            return False
        return explicit

    def adopt(self, uri: str) -> None:
        """No vault yet: the nearest studykb.toml at or above the opened file is the
        vault, as on the command line; without one the file is checked against the files
        beside it (:meth:`snapshot_of`), and nothing is indexed or written."""
        self._near.clear()  # the files beside a buffer outside any vault: read again
        fs = to_fs_path(uri)
        if self.root is not None or self.kb is not None or not fs or not self.loose:
            return
        try:
            root, explicit = Session.locate(None, cwd=Path(os.path.realpath(fs)).parent)
        except StudyError:
            return
        if not explicit:
            return
        self.root, self.explicit, self.loose = root, True, False
        self.ready = False  # until the vault's first snapshot is installed
        self.load()

    def snapshot_of(self, uri: str) -> BufferView:
        """What a buffer is checked against: the vault's snapshot, or, with no vault, the
        Markdown files beside it (read again when a buffer there is opened or saved)."""
        fs = to_fs_path(uri)
        if not self.loose or not fs:
            return self.snap
        folder = Path(os.path.realpath(fs)).parent
        if folder not in self._near:
            self._near[folder] = neighbours(folder)
        return self._near[folder]

    def load(self) -> None:
        """Open the vault and start keeping it fresh (or following the process that does)."""
        self._loop = asyncio.get_event_loop()
        if self.root is None and not self._marked():
            self.loose = True  # each buffer finds its vault when it is opened
            self.install(self.snap)
            return
        try:
            self.kb = self.open_vault()
        except StudyError as exc:
            self.message(f"studykb: {exc}", t.MessageType.Error)
            self.install(self.snap)  # no vault: buffers still get their own problems
            return
        for line, warning in self.kb.config.warnings:
            self.message(f"studykb: studykb.toml:{line}: {warning}", t.MessageType.Warning)
        # the first refresh (a full build when there is no state yet) runs in the watcher
        # thread; buffers are checked once its snapshot is installed
        self.start_watching()

    def refresh(self, first: bool = False) -> None:
        """Refresh on the loop thread (saves, when nothing watches)."""
        if self.kb is None or self.gone:
            return
        try:
            stats = self.kb.refresh()
            if not (first or stats.changed):
                return
            snap = self.kb.buffer_view()
        except (StateError, OSError, StudyError) as exc:
            self.message(f"studykb: could not refresh the vault: {exc}", t.MessageType.Warning)
            return
        self.install(snap)

    def install(self, snap: BufferView) -> None:
        """A new snapshot: re-check every open buffer against it."""
        self.snap = snap
        self.generation += 1
        self.ready = True
        # the snapshot lives until the next one: keep the collector from walking it again
        # and again (a full collection of a 10k-note snapshot stalls every request)
        from studykb.runtime.memory import settle

        settle()
        self.analyses.clear()
        self._headings.clear()
        self.check_deleted()
        for uri in list(self.workspace.text_documents):
            self._safe(functools.partial(self.lint, uri))

    def check_deleted(self) -> None:
        """Tell once about an open buffer whose file was deleted on disk."""
        for uri in list(self.workspace.text_documents):
            fs = to_fs_path(uri)
            if not fs:
                continue
            if os.path.exists(fs):
                self.on_disk.add(uri)
            elif uri in self.on_disk:
                self.on_disk.discard(uri)
                self.message(
                    f"studykb: {self.path_of(uri)} was deleted on disk; its buffer is "
                    "still open (save it to keep it).",
                    t.MessageType.Warning,
                )

    def start_watching(self) -> None:
        if self.root is None or self.watching:
            return
        self.watching = True
        follower = Follower(self)
        thread = threading.Thread(target=follower.run, name="studykb-watch", daemon=True)
        thread.start()

    def settings_changed(self) -> None:
        """studykb.toml changed: read from a vault opened with the new settings."""
        old = self.kb
        try:
            self.kb = self.open_vault()
        except StudyError as exc:
            self.message(f"studykb: {exc}", t.MessageType.Error)
            return
        if old is not None:
            with contextlib.suppress(Exception):
                old.close()
        for line, warning in self.kb.config.warnings:
            self.message(f"studykb: studykb.toml:{line}: {warning}", t.MessageType.Warning)

    def call_soon(self, func: Callable[[], None]) -> None:
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._safe, func)

    def _safe(self, func: Callable[[], None]) -> None:
        try:
            func()
        except Exception:  # noqa: BLE001
            self.report(traceback.format_exc())

    def vault_gone(self) -> None:
        if self.gone:
            return
        self.gone = True
        self.message(
            f"studykb: the vault folder {self.root} disappeared; answers come from the "
            "last known state until it is back.",
            t.MessageType.Error,
        )

    def vault_back(self) -> None:
        if not self.gone or self.root is None or not self.root.is_dir():
            return
        self.gone = False
        old = self.kb
        try:
            self.kb = self.open_vault()
        except StudyError as exc:
            self.message(f"studykb: {exc}", t.MessageType.Error)
            return
        if old is not None:
            with contextlib.suppress(Exception):
                old.close()
        self.message(f"studykb: the vault folder {self.root} is back.", t.MessageType.Info)

    def close(self) -> None:
        self.stop.set()
        watcher = self.watcher
        if watcher is not None and watcher.server is not None:
            with contextlib.suppress(Exception):
                watcher.server.stop()  # the socket goes now, not when the thread ends
        if self.kb is not None:
            with contextlib.suppress(Exception):
                self.kb.close()
        self.readings.close()

    # -- buffers -----------------------------------------------------------------------
    def path_of(self, uri: str) -> str:
        """Vault path of a buffer; its file name when it lies outside the vault."""
        fs = to_fs_path(uri)
        if fs and self.root is not None:
            real = Path(os.path.realpath(fs))
            if real.is_relative_to(self.root):
                return real.relative_to(self.root).as_posix()
        name = Path(fs or uri.rsplit("/", 1)[-1]).name or "untitled.md"
        return name if name.lower().endswith(".md") else name + ".md"

    def analysis(self, uri: str) -> Analysis:
        doc = self.workspace.get_text_document(uri)
        cached = self.analyses.get(uri)
        if cached is not None and cached[0] == doc.version and doc.version is not None:
            return cached[1]
        try:
            text = doc.source
        except OSError:
            text = ""
        result = self.read(self.snapshot_of(uri), self.path_of(uri), text, self.headings)
        self.analyses[uri] = (doc.version, result)
        return result

    def headings(self, path: str) -> str | None:
        """The stored outline of the file at vault path ``path`` (kept per snapshot)."""
        if self.kb is None:
            return None
        if path not in self._headings:
            try:
                self._headings[path] = self.kb.stored_outline(path)
            except (StateError, OSError):
                return None
        return self._headings[path]

    def schedule_lint(self, uri: str) -> None:
        """Lint after the messages already queued, so a burst of edits is linted once."""
        if not self._pending:
            asyncio.get_event_loop().call_soon(self._flush)
        self._pending.add(uri)

    def _flush(self) -> None:
        pending, self._pending = self._pending, set()
        for uri in pending:
            if uri in self.workspace.text_documents:
                self._safe(functools.partial(self.lint, uri))

    def lint(self, uri: str) -> None:
        if not self.ready:
            return  # the vault is still being read: every link would look dangling
        doc = self.workspace.get_text_document(uri)
        cached = self.analyses.get(uri)
        if not (cached is not None and cached[0] == doc.version) and self._large(uri):
            self._read_large(uri).add_done_callback(_retrieved)  # published when read
            return
        self.publish(uri, self.analysis(uri))

    def publish(self, uri: str, analysis: Analysis) -> None:
        version = self.workspace.get_text_document(uri).version
        diagnostics = [self.diagnostic(analysis, p) for p in analysis.problems]
        self.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    async def settled(self, uri: str) -> Analysis:
        """The analysis of the buffer as it is now; a large one is read in a worker thread
        while the loop answers other requests."""
        doc = self.workspace.get_text_document(uri)
        cached = self.analyses.get(uri)
        if cached is not None and cached[0] == doc.version and doc.version is not None:
            return cached[1]
        if not self._large(uri):
            return self.analysis(uri)
        version = doc.version
        result = await self._read_large(uri)
        if self.workspace.get_text_document(uri).version == version:
            self.analyses[uri] = (version, result)
        return result

    def _large(self, uri: str) -> bool:
        if uri not in self.workspace.text_documents:
            return False
        try:
            return len(self.workspace.get_text_document(uri).source) > LARGE
        except OSError:
            return False

    def _read_large(self, uri: str) -> asyncio.Future[Analysis]:
        """The reading of a large open buffer, in a worker thread (see ``lsp_work``)."""
        doc = self.workspace.get_text_document(uri)
        snap, path, text = self.snapshot_of(uri), self.path_of(uri), doc.source
        loop = asyncio.get_running_loop()

        def headings(other: str) -> str | None:  # (worker thread) the vault is the loop's
            async def on_loop() -> str | None:
                return self.headings(other)

            return asyncio.run_coroutine_threadsafe(on_loop(), loop).result(timeout=120)

        return self.readings.read(
            uri, (doc.version, self.generation), lambda: self.read(snap, path, text, headings)
        )

    def read(
        self, snap: BufferView, path: str, text: str, headings: Callable[[str], str | None]
    ) -> Analysis:
        """The analysis of a buffer with the problems of its code links, judged as ``check``
        judges them (only a buffer that has some: the others never read a clone)."""
        result = analyse(snap, path, text, headings)
        if any(span.ref.style == "code" for span in result.spans):
            # deferred: git and tree-sitter load only for a buffer with code links
            from studykb.api import code_problems

            config = snap.config
            found = code_problems(config.root, config, snap.docs.values(), result, self.code_facts)
            result.problems.extend(found)
        return result

    def _read(self, uri: str, key: Any, analysis: Analysis) -> None:
        """A large buffer was read: keep it and publish its problems, if it is still the
        buffer as it is and the snapshot it was read against."""
        if uri not in self.workspace.text_documents:
            return
        version = self.workspace.get_text_document(uri).version
        if key == (version, self.generation):
            self.analyses[uri] = (version, analysis)
            self.publish(uri, analysis)

    def check_position(self, analysis: Analysis, position: t.Position) -> None:
        """A line past the end of the buffer is an error, said to the client. A character
        past the end of its line is the end of the line, as the protocol says."""
        lines = analysis.lines
        if position.line >= len(lines):
            raise JsonRpcInvalidParams(
                f"line {position.line} is past the end of {analysis.path} ({len(lines)} lines)"
            )

    def diagnostic(self, analysis: Analysis, p: Problem) -> t.Diagnostic:
        return positions.diagnostic(analysis, p, self.encoding)

    # -- positions (the client counts UTF-16 units unless it chose otherwise) ---------------
    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or "utf-16")

    def range(self, text: str, line: int, start: int, end: int) -> t.Range:
        return positions.text_range(text, line, start, end, self.encoding)

    def column(self, text: str, character: int) -> int:
        """Client position -> code-point column in ``text``."""
        return positions.column(text, character, self.encoding)

    def cursor(self, uri: str, position: t.Position) -> tuple[Analysis, int, int]:
        analysis = self.analysis(uri)
        line = position.line
        text = analysis.lines[line] if line < len(analysis.lines) else ""
        return analysis, line, self.column(text, position.character)

    def location(self, key: str, anchor: str = "") -> t.Location | None:
        doc = self.snap.docs.get(key)
        if doc is None or self.root is None:
            return None
        file = self.file_of(doc.path)
        line = doc.line - 1 if doc.type == "unit" else 0
        if anchor and doc.type != "unit":
            line = anchor_line(self.file_lines(file), anchor, self.snap.reading, doc.path)
        return t.Location(
            uri=from_fs_path(str(file)) or file.as_uri(),
            range=t.Range(t.Position(line, 0), t.Position(line, 0)),
        )

    def file_of(self, path: str) -> Path:
        """The file of vault path ``path`` (a repository's note: in its clone)."""
        assert self.root is not None
        if self.kb is None or ":" not in path:
            return self.root / path
        return self.kb.files_of([path])[path]

    def file_lines(self, file: Path) -> list[str]:
        uri = from_fs_path(str(file))
        if uri and uri in self.workspace.text_documents:
            return self.workspace.get_text_document(uri).source.splitlines()
        try:
            return file.read_text(encoding="utf-8-sig", errors="replace").splitlines()
        except OSError:
            return []

    # -- messages ----------------------------------------------------------------------
    def message(self, text: str, kind: t.MessageType = t.MessageType.Info) -> None:
        log.info(text)
        with contextlib.suppress(Exception):
            self.window_show_message(t.ShowMessageParams(type=kind, message=text))

    def report(self, text: str) -> None:
        with contextlib.suppress(Exception):
            self.window_log_message(t.LogMessageParams(type=t.MessageType.Error, message=text))


def _retrieved(future: Any) -> None:
    """A reading nobody awaits: its failure was said by the request that met it."""
    if not future.cancelled():
        future.exception()
