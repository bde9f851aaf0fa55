"""Reading large buffers beside the language server's event loop, and answering the
requests it cannot read.

Reading one buffer (parsing it, resolving its references) takes milliseconds for a note
of ordinary size, done on the loop as each request needs it. A note of megabytes takes
seconds (18 s a change for a 4.9 MB note, once): done on the loop, every request on
every other buffer would wait for it. So a buffer over :data:`LARGE` characters is read
in a worker thread, and the loop answers other buffers meanwhile; a request on that
buffer itself waits (without holding the loop) for its reading to end.

Per buffer, one reading runs at a time. Edits that arrive meanwhile are coalesced:
when it ends, only the latest version is read next, and every request that waited for
an older one gets that one (a version superseded before its reading started is never
read). A reading that has started runs to its end (a Python thread cannot be stopped);
its result is used only if it is still the buffer's version.

A request pygls cannot read as its type (a negative line or character: positions are
unsigned) was logged and dropped, the client waiting for an answer for ever;
:class:`Protocol` answers it with an InvalidParams error. A position past the end of
its buffer gets the same error from the request's handler (``lsp_features.request``);
a character past the end of its line is the end of the line, as the protocol says.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

#: Buffers longer than this (in characters) are read in a worker thread.
LARGE = 100_000
#: Large buffers read at once (the rest wait their turn; small ones never wait).
WORKERS = 2

T = TypeVar("T")


@dataclass
class _Buffer(Generic[T]):
    """What is wanted of one buffer: the latest key and how to read it, and who waits."""

    key: Hashable
    read: Callable[[], T]
    running: bool = False
    waiting: list[tuple[Hashable, asyncio.Future[T]]] = field(default_factory=list)


class Readings(Generic[T]):
    """Readings of large buffers in worker threads, the latest version of each only.

    ``done(name, key, value)`` is called on the loop for each reading that ended
    (the caller keeps it if ``key`` is still the buffer's, and publishes its problems).
    """

    def __init__(self, done: Callable[[str, Hashable, T], None]) -> None:
        self._done = done
        self._pool: ThreadPoolExecutor | None = None
        self._buffers: dict[str, _Buffer[T]] = {}
        self.started = 0
        """How many readings were started (superseded versions are not)."""

    def read(self, name: str, key: Hashable, read: Callable[[], T]) -> asyncio.Future[T]:
        """The reading of buffer ``name`` at ``key`` (its version and snapshot), started
        now or when the one running for that buffer ends; call on the loop."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        buffer = self._buffers.get(name)
        if buffer is None:
            buffer = self._buffers[name] = _Buffer(key, read)
        elif buffer.key != key:
            buffer.key, buffer.read = key, read  # what was wanted before is superseded
        buffer.waiting.append((key, waiter))
        if not buffer.running:
            self._start(name, buffer, loop)
        return waiter

    def forget(self, name: str) -> None:
        """The buffer was closed: nobody waits for it any more."""
        buffer = self._buffers.pop(name, None)
        for _key, waiter in buffer.waiting if buffer else ():
            waiter.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self, name: str, buffer: _Buffer[T], loop: asyncio.AbstractEventLoop) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="studykb-read")
        buffer.running = True
        self.started += 1
        key = buffer.key
        job = self._pool.submit(buffer.read)

        def ended(job: Future[T]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(self._ended, name, key, job, loop)

        job.add_done_callback(ended)

    def _ended(
        self, name: str, key: Hashable, job: Future[T], loop: asyncio.AbstractEventLoop
    ) -> None:
        buffer = self._buffers.get(name)
        if buffer is None or job.cancelled():
            return
        buffer.running = False
        error = job.exception()
        latest = buffer.key == key
        # those who waited for this key, and, when nothing newer is wanted, everyone
        served = [(k, w) for k, w in buffer.waiting if latest or k == key]
        buffer.waiting = [(k, w) for k, w in buffer.waiting if not (latest or k == key)]
        for _k, waiter in served:
            if waiter.done():
                continue
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(job.result())
        if error is None:
            self._done(name, key, job.result())
        if not latest:
            self._start(name, buffer, loop)
        elif not buffer.waiting:
            del self._buffers[name]


class _Unreadable:
    """A request that could not be read as its type (answered with an error)."""

    jsonrpc = "2.0"

    def __init__(self, msg_id: Any, method: str) -> None:
        self.id = msg_id
        self.method = method


def _negative(params: Any) -> bool:
    """Whether the ``position`` or ``range`` of a request's parameters holds a negative
    number (what pygls would fail to read)."""
    if not isinstance(params, dict):
        return False
    places = [params.get("position")]
    where = params.get("range")
    if isinstance(where, dict):
        places += [where.get("start"), where.get("end")]
    return any(
        isinstance(place, dict)
        and any(isinstance(place.get(k), int) and place[k] < 0 for k in ("line", "character"))
        for place in places
    )


class _Answered(logging.Filter):
    """Keeps out of the log the traceback pygls writes for each error it answers: a
    position past the end of a buffer is the client's mistake, said to the client."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, JsonRpcInvalidParams)


class Protocol(LanguageServerProtocol):
    """pygls's protocol, answering a request it cannot read instead of dropping it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pygls_log = logging.getLogger("pygls.protocol.json_rpc")
        if not any(isinstance(f, _Answered) for f in pygls_log.filters):
            pygls_log.addFilter(_Answered())

    def structure_message(self, data: dict[str, Any]) -> Any:
        request = "jsonrpc" in data and "id" in data and "method" in data
        if request and _negative(data.get("params")):  # said here, without pygls's traceback
            return _Unreadable(data["id"], str(data["method"]))
        try:
            return super().structure_message(data)
        except Exception:
            if request:
                return _Unreadable(data["id"], str(data["method"]))
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            error = JsonRpcInvalidParams(
                f"the parameters of {message.method} are not valid (a position is a line "
                "and a character, each 0 or more)"
            )
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)
