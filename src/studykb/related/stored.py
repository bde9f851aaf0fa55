"""The engine's matrices kept in the vault's cache, so a process loads them instead of
making them again.

The entry (``related-engine``) is plain data: each numpy array is its raw bytes, its
dtype (one of :data:`DTYPES`, numbers only, so nothing can be an object) and its shape;
each sparse matrix is its three CSR arrays and its shape, checked by scipy when it is
made again. Loading can never run code (no pickle anywhere).

The engine is kept while what it is made of is the same: the stamps of its two inputs
name exactly that (each document's references, topics, tags, course and type from the
graph features; its text vector and mentions from the text vectors). After an edit that
changes them the matrices are made again from the updated inputs and kept (the engine's
products mix every document's degrees and frequencies, so updating some rows in place
would not be cheaper than making them: about 0.1 s at 1,000 documents).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from studykb.related.sparse import Csr

#: ``build`` makes the engine (and its inputs) when it read at least this many files,
#: or when none is kept yet (:meth:`studykb.session.Session.prepare_related`).
PREPARE_MIN = 64
#: The dtypes an array may be stored with (little-endian numbers and booleans).
DTYPES = frozenset({"<f8", "<f4", "<i8", "<i4", "|b1", "|u1"})


def pack_array(a: NDArray[Any]) -> dict[str, object]:
    """An array as plain data: its dtype, shape and raw bytes."""
    a = np.ascontiguousarray(a)
    dtype = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
    if dtype.str not in DTYPES:
        raise TypeError(f"cannot store an array of {a.dtype}")
    # a view of the array's bytes, not a copy: the cache writes them out (at 50k
    # documents the engine's arrays are 64 MB, and a copy of each was held while the
    # whole entry was packed)
    raw = memoryview(np.ascontiguousarray(a.astype(dtype, copy=False))).cast("B")  # type: ignore[arg-type]
    return {"dtype": dtype.str, "shape": list(a.shape), "bytes": raw}


def unpack_array(data: Any) -> NDArray[Any]:
    """The array :func:`pack_array` stored (a ``ValueError`` when it is not one)."""
    if not isinstance(data, dict) or data.get("dtype") not in DTYPES:
        raise ValueError("not a stored array")
    shape = tuple(int(n) for n in data["shape"])
    raw = data["bytes"]
    if not isinstance(raw, bytes | memoryview):
        raise ValueError("not a stored array")
    a = np.frombuffer(raw, dtype=np.dtype(data["dtype"]))
    if a.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError("a stored array of the wrong size")
    return a.reshape(shape)


def pack_csr(m: Csr) -> dict[str, object]:
    return {
        "shape": list(m.shape),
        "data": pack_array(m.data),
        "indices": pack_array(m.indices),
        "indptr": pack_array(m.indptr),
    }


def unpack_csr(data: Any) -> Csr:
    """The matrix :func:`pack_csr` stored; scipy checks that its arrays agree."""
    if not isinstance(data, dict):
        raise ValueError("not a stored matrix")
    rows, cols = (int(n) for n in data["shape"])
    parts = (unpack_array(data[k]) for k in ("data", "indices", "indptr"))
    return sp.csr_matrix(tuple(parts), shape=(rows, cols))
