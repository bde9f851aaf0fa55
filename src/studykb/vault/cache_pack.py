"""A cache entry packed (msgpack) a piece at a time, for entries too large to hold twice.

The cache stores each entry as ``msgpack.packb(value)``. At 50k documents the engine's
entry is 64 MB and the text vectors' 55 MB; packing one whole, then handing it to
SQLite, would hold it two or three times over beside the value itself. Here the same
bytes come as pieces: each large binary value (bytes, memoryviews of arrays) as it is,
never copied, and the small values between them packed into stretches of about
:data:`STRETCH` bytes (a memory seam of :meth:`studykb.vault.cache.Cache.put`):

* :func:`packed_size` walks the value once for the size of the packed entry;
* :func:`write_packed` walks it again, writing each stretch as it is made (into the
  row made with room for it), so that no more than one stretch is held at a time;
* :func:`packed_pieces` gives the pieces in a list (a small entry is their join).

Their concatenation is always ``msgpack.packb(value, use_bin_type=True)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

#: Binary values from this size up are pieces of their own (as msgpack's ``bin 32``).
BIG_BINARY = 1 << 16
#: About how many bytes of small values :func:`write_packed` packs before writing them.
STRETCH = 1 << 20

Write = Callable[[Any], object]


def _walk(value: Any, small: Write, big: Write) -> None:
    """The packed bytes of ``value`` in order: ``small(bytes)`` for each small value or
    header, ``big(view)`` for each large binary value (its header given to ``small``)."""
    packer = msgpack.Packer(use_bin_type=True)

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            small(packer.pack_map_header(len(v)))
            for key, item in v.items():
                walk(key)
                walk(item)
        elif isinstance(v, list | tuple):
            small(packer.pack_array_header(len(v)))
            for item in v:
                walk(item)
        elif isinstance(v, bytes | memoryview) and len(v) >= BIG_BINARY:
            view = memoryview(v).cast("B")
            small(b"\xc6" + view.nbytes.to_bytes(4, "big"))  # bin 32, as msgpack
            big(view)
        else:
            small(packer.pack(v))

    walk(value)


def packed_pieces(value: Any) -> list[Any]:
    """The pieces of the packed ``value``: the large binary values as they are, the
    small values between two of them joined."""
    pieces: list[Any] = []
    run: list[bytes] = []

    def big(view: memoryview) -> None:
        if run:
            pieces.append(b"".join(run))
            run.clear()
        pieces.append(view)

    _walk(value, run.append, big)
    if run:
        pieces.append(b"".join(run))
    return pieces


def packed_size(value: Any) -> int:
    """How many bytes the packed ``value`` takes (nothing of it held)."""
    total = 0

    def count(piece: Any) -> None:
        nonlocal total
        total += len(piece) if isinstance(piece, bytes) else memoryview(piece).nbytes

    _walk(value, count, count)
    return total


def write_packed(write: Write, value: Any) -> int:
    """Write the packed ``value`` through ``write``, a stretch of small values or a large
    binary value at a time; how many bytes were written."""
    run: list[bytes] = []
    held = written = 0

    def flush() -> None:
        nonlocal held, written
        if run:
            write(b"".join(run))
            written += held
            run.clear()
            held = 0

    def small(piece: bytes) -> None:
        nonlocal held
        run.append(piece)
        held += len(piece)
        if held >= STRETCH:
            flush()

    def big(view: memoryview) -> None:
        nonlocal written
        flush()
        write(view)
        written += view.nbytes

    _walk(value, small, big)
    flush()
    return written
