"""Running the app with uvicorn on a socket already bound to 127.0.0.1."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

from studykb.web.live import Hub

HOST = "127.0.0.1"


class Server(uvicorn.Server):
    """uvicorn, ending the open event streams first when it stops (so a page's live
    connection does not hold the shutdown)."""

    def __init__(self, app: Any, hub: Hub) -> None:
        super().__init__(
            uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
        )
        self.hub = hub

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.hub.close()
        await super().shutdown(sockets)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (any free port for 0); OSError when taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock
