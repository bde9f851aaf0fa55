"""Per-node rows of small integers packed into bytes (int32 arrays), unpacked on first
read: what the feature index is made of, so the cache loads in milliseconds."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any


def pack(values: Iterable[int]) -> bytes:
    return array("i", values).tobytes()


def unpack(data: bytes) -> tuple[int, ...]:
    flat = array("i")
    flat.frombytes(data)
    return tuple(flat)


class Packed:
    """Rows of ``{node: kind bits}`` kept as packed int32 pairs, unpacked on first read."""

    __slots__ = ("data", "_cache")

    def __init__(self, rows: Sequence[dict[int, int]]) -> None:
        self.data = [pack(x for pair in row.items() for x in pair) for row in rows]
        self._cache: dict[int, dict[int, int]] = {}

    @classmethod
    def from_data(cls, data: list[bytes]) -> Packed:
        packed = cls([])
        packed.data = list(data)
        return packed

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, n: int) -> dict[int, int]:
        got = self._cache.get(n)
        if got is None:
            flat = unpack(self.data[n])
            got = self._cache[n] = dict(zip(flat[::2], flat[1::2], strict=True))
        return got

    def __setitem__(self, n: int, row: dict[int, int]) -> None:
        self._cache[n] = row
        self.data[n] = pack(x for pair in row.items() for x in pair)

    def size(self, n: int) -> int:
        """How many entries row ``n`` has, without unpacking it."""
        return len(self.data[n]) // 8

    def let_go(self) -> None:
        """Drop the rows unpacked so far (read again from the packed bytes on next use)."""
        self._cache = {}


class Rows:
    """Rows of node numbers (tuples) kept packed, unpacked on first read."""

    __slots__ = ("data", "_cache")

    def __init__(self, rows: Iterable[Iterable[int]] = ()) -> None:
        self.data = [pack(row) for row in rows]
        self._cache: dict[int, tuple[int, ...]] = {}

    @classmethod
    def from_data(cls, data: list[bytes]) -> Rows:
        rows = cls()
        rows.data = list(data)
        return rows

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, n: int) -> tuple[int, ...]:
        got = self._cache.get(n)
        if got is None:
            got = self._cache[n] = unpack(self.data[n])
        return got

    def __setitem__(self, n: int, row: Iterable[int]) -> None:
        values = tuple(row)
        self._cache[n] = values
        self.data[n] = pack(values)

    def let_go(self) -> None:
        """Drop the rows unpacked so far (read again from the packed bytes on next use)."""
        self._cache = {}


class Groups:
    """Group -> the nodes in it (a topic's coverers, a tag's documents, a course's members),
    packed; a missing group is empty."""

    __slots__ = ("data", "_cache")

    def __init__(self, groups: dict[Any, list[int]] | None = None) -> None:
        self.data: dict[Any, bytes] = {g: pack(ns) for g, ns in (groups or {}).items()}
        self._cache: dict[Any, tuple[int, ...]] = {}

    def get(self, group: Any, default: Sequence[int] = ()) -> Sequence[int]:
        data = self.data.get(group)
        if data is None:
            return default
        got = self._cache.get(group)
        if got is None:
            got = self._cache[group] = unpack(data)
        return got

    def size(self, group: Any) -> int:
        return len(self.data.get(group, b"")) // 4

    def add(self, group: Any, node: int) -> None:
        now = self.get(group)
        if node not in now:
            self._set(group, (*now, node))

    def remove(self, group: Any, node: int) -> None:
        now = self.get(group)
        if node in now:
            self._set(group, tuple(n for n in now if n != node))

    def _set(self, group: Any, nodes: tuple[int, ...]) -> None:
        self._cache[group] = nodes
        self.data[group] = pack(nodes)

    def let_go(self) -> None:
        """Drop the rows unpacked so far (read again from the packed bytes on next use)."""
        self._cache = {}
