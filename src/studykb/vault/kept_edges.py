"""The graph edges a first build keeps for the readers after it in the same process
(:meth:`studykb.vault.Vault.graph_edges`), held as columns of numbers (a memory seam).

At 50k documents a first build resolves about half a million references; kept as a
tuple each (source, target key, kind, path, line, reason) they were about 60 MB of the
largest moment of the build, the write of the state. Here each is six 4-byte numbers,
its strings each held once (about 13 MB), and each edge is made a tuple again as it is
read: the same rows in the same order, for what they cost to make again (about 0.1 s at
50k, for a process that reads them at all)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from studykb.vault.state.rows import EdgeRow


class KeptEdges:
    """Graph edges in the order added; iterated as :data:`EdgeRow` tuples."""

    __slots__ = ("_strings", "_number", "_columns")

    def __init__(self) -> None:
        self._strings: list[str] = []
        self._number: dict[str, int] = {}
        self._columns = tuple(array("i") for _ in range(6))

    def add(self, source: str, key: str, kind: str, path: str, line: int, reason: str) -> None:
        number, strings = self._number, self._strings
        s, k, t, p, at, r = self._columns
        for column, text in ((s, source), (k, key), (t, kind), (p, path), (r, reason)):
            n = number.get(text)
            if n is None:
                n = number[text] = len(strings)
                strings.append(text)
            column.append(n)
        at.append(line)

    def done(self) -> KeptEdges:
        """Every edge is in: the table of strings to numbers is let go (itself; an edge
        added after is still read back right, its strings held again)."""
        self._number = {}
        return self

    def __len__(self) -> int:
        return len(self._columns[0])

    def __iter__(self) -> Iterator[EdgeRow]:
        strings = self._strings
        for s, k, t, p, line, r in zip(*self._columns, strict=True):
            yield (strings[s], strings[k], strings[t], strings[p], line, strings[r])
