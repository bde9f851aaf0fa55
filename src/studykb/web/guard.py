"""The guard in front of ``studykb serve``: only this machine may ask.

Requests whose ``Host`` is not ``localhost``/``127.0.0.1``/``[::1]`` are refused (a web
page elsewhere cannot reach the server through DNS rebinding), the development files
are never served, and every response carries a strict Content-Security-Policy (no inline
script, nothing from elsewhere), ``nosniff``, ``same-origin`` referrers and the time the
app took (``Server-Timing``).
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; worker-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)
LOCAL_HOSTS = frozenset(("localhost", "127.0.0.1", "[::1]", "::1"))

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGI = Callable[[Scope, Receive, Send], Awaitable[None]]


def guard(app: ASGI) -> ASGI:
    """Refuses foreign hosts and the development files; adds the security headers and
    ``Server-Timing`` (milliseconds from the request to the response's start)."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if not local_host(host):
            await _refuse(
                send, 403, f"studykb answers only on this machine; Host {host!r} refused."
            )
            return
        if development(scope["path"]):
            await _refuse(send, 404, "Not found.")
            return

        started = time.perf_counter()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                spent = f"app;dur={(time.perf_counter() - started) * 1000:.2f}".encode()
                message["headers"] = [
                    *(message.get("headers") or []),
                    *HEADERS,
                    (b"server-timing", spent),
                ]
            await send(message)

        await app(scope, receive, with_headers)

    return guarded


def development(path: str) -> bool:
    """Whether ``path`` names a development file (``/static/dev/``) however it is spelt:
    the static files app reads ``/static//dev/x`` and ``/static/a/../dev/x`` as
    ``dev/x`` too, so the path is judged as it will be read."""
    normal = posixpath.normpath("/" + path.lstrip("/"))
    return normal == "/static/dev" or normal.startswith("/static/dev/")


def local_host(host: str) -> bool:
    """Whether a Host header names this machine (any port)."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[: host.find("]") + 1] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in LOCAL_HOSTS


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
