"""A small JSON-RPC client that speaks LSP to ``studykb lsp`` in a subprocess (tests, benchmarks).

Every wait is bounded: a request that gets no answer in ``timeout`` seconds raises
TimeoutError, and :meth:`close` kills the server if it does not exit by itself.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class LspClient:
    """``with LspClient(vault) as lsp: lsp.initialize(); lsp.request(...)``."""

    def __init__(
        self,
        vault: Path | None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ) -> None:
        cmd = [sys.executable, "-m", "studykb"]
        if vault is not None:
            cmd += ["--vault", str(vault)]
        cmd += args or ["lsp"]
        full_env = {**os.environ, **(env or {})}
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=full_env,
        )
        self._next = 0
        self._responses: dict[int, queue.Queue] = {}
        self._methods: dict[int, str] = {}
        self._lock = threading.Lock()
        self.notifications: list[dict] = []
        self.initialized: dict = {}
        """The answer to :meth:`initialize` (empty before it)."""
        self.order: list[tuple[str, Any]] = []
        """Every message from the server, in the order it came: ("response", id) or
        (method, params)."""
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()

    # -- wire ------------------------------------------------------------------------------
    def _send(self, message: dict) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(out.read(length))
            if "id" in message and "method" not in message:
                with self._lock:
                    self.order.append(("response", message["id"]))
                    box = self._responses.get(message["id"])
                if box is not None:
                    box.put(message)
            elif "id" in message:  # a request from the server: answer it
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                self._note(message)
            else:
                self._note(message)

    def _note(self, message: dict) -> None:
        message["_at"] = time.perf_counter()
        with self._lock:
            self.order.append((message.get("method", ""), message.get("params")))
        with self._cond:
            self.notifications.append(message)
            self._cond.notify_all()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", errors="replace")

    # -- API -------------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        return self.answer(self.send(method, params), timeout)

    def send(self, method: str, params: Any) -> int:
        """Send a request without waiting; :meth:`answer` waits for its answer."""
        with self._lock:
            self._next += 1
            n = self._next
            self._responses[n] = queue.Queue()
            self._methods[n] = method
        self._send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        return n

    def answer(self, n: int, timeout: float = 60) -> Any:
        """The result of request ``n``; RuntimeError with the error when it failed."""
        with self._lock:
            box = self._responses[n]
        try:
            message = box.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(
                f"no answer to {self._methods[n]} in {timeout}s; stderr:\n{self.stderr}"
            ) from None
        if "error" in message:
            raise RuntimeError(f"{self._methods[n]} failed: {message['error']}")
        return message.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(
        self,
        method: str,
        where: Callable[[dict], bool] = lambda p: True,
        timeout: float = 60,
        since: int = 0,
    ) -> dict:
        """The first notification ``method`` (from index ``since``) whose params match."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for message in self.notifications[since:]:
                    if message.get("method") == method and where(message.get("params") or {}):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no {method} in {timeout}s; stderr:\n{self.stderr}")
                self._cond.wait(min(left, 0.5))

    def initialize(self, root: Path | None = None) -> dict:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri() if root else None,
                "capabilities": {
                    "textDocument": {"completion": {"completionItem": {"snippetSupport": False}}}
                },
            },
            timeout=120,
        )
        self.notify("initialized", {})
        self.initialized = result
        return result

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        uri = path.as_uri()
        if text is None:
            text = path.read_text(encoding="utf-8")
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": version,
                    "text": text,
                }
            },
        )
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def diagnostics(
        self, uri: str, version: int | None = None, timeout: float = 60, since: int = 0
    ) -> list[dict]:
        message = self.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p.get("uri") == uri and (version is None or p.get("version") == version),
            timeout,
            since,
        )
        return message["params"]["diagnostics"]

    def at(self, uri: str, line: int, character: int) -> dict:
        return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}

    def close(self) -> int | None:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=5)
                self.notify("exit", None)
                self.proc.wait(timeout=5)
            except (TimeoutError, OSError, RuntimeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=5)
        return self.proc.returncode

    def __enter__(self) -> LspClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
