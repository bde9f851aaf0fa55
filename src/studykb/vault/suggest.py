"""The "did you mean" of a reference that resolves to nothing (``[[zero-shardin]]``).

``check`` and the editor both phrase a ``dangling-ref`` with :func:`did_you_mean`, so
they suggest the same name: among the names a link may use (ids, aliases, file names),
those one edit away from the target (a letter missing, added or changed, or two
neighbours swapped), the most alike in spelling, then the first alphabetically (so the
answer never depends on the order of the name table).

Candidates are found through deletions: two strings one edit apart share a string
made by deleting at most one letter from each. :class:`Suggester` files every name
under its deletions (the editor builds one per snapshot, then asks it at each
keystroke); :func:`suggest_all` files the few targets of ``check`` under theirs and
streams the names past them once. Both keep only true one-edit candidates, so they
agree.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from studykb.vault.resolve import ALIAS, ID, STEM, fold

#: Name levels suggested: what people type inside ``[[ ]]`` (paths and titles are not).
LEVELS = (ID, ALIAS, STEM)
#: Names shorter than this are too close to everything to be suggested.
MIN_LENGTH = 4
MAX_LENGTH = 64
#: How alike (difflib's ratio) a suggestion must be.
CUTOFF = 0.75


def _keys(name: str) -> set[str]:
    """The name and every string made by deleting one of its letters."""
    return {name, *(name[:i] + name[i + 1 :] for i in range(len(name)))}


def _usable(name: str) -> bool:
    return MIN_LENGTH <= len(name) <= MAX_LENGTH


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one insertion, deletion, substitution or
    swap of two neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) != len(b):
        return a[i + (len(a) > len(b)) :] == b[i + (len(b) > len(a)) :]
    if a[i + 1 :] == b[i + 1 :]:
        return True  # one letter changed
    return (
        i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    )  # two neighbours swapped


def _best(query: str, found: Iterable[str]) -> str | None:
    scored = sorted(
        (-difflib.SequenceMatcher(None, query, name).ratio(), name)
        for name in found
        if one_edit(query, name)
    )
    if not scored or -scored[0][0] < CUTOFF:
        return None
    return scored[0][1]


class Suggester:
    """Every usable name filed under its deletions, ready to be asked many times."""

    def __init__(self, names: Iterable[str]) -> None:
        self.files: dict[str, list[str]] = {}
        for name in names:
            if _usable(name):
                for key in _keys(name):
                    self.files.setdefault(key, []).append(name)

    @classmethod
    def of(cls, table: Mapping[str, Iterable[tuple[int, str]]]) -> Suggester:
        """From a name table (folded name -> [(level, key)]) as resolution keeps it."""
        return cls(names_of_table(table))

    def suggest(self, target: str) -> str | None:
        """The closest name to ``target``, or None."""
        query = fold(target)
        if not _usable(query) and not _usable(query[:-1]):
            return None
        found: set[str] = set()
        for key in _keys(query):
            found.update(self.files.get(key, ()))
        return _best(query, found)


def names_of_table(table: Mapping[str, Iterable[tuple[int, str]]]) -> list[str]:
    """The names of a name table that may be suggested."""
    return [
        name for name, entries in table.items() if any(level in LEVELS for level, _key in entries)
    ]


def suggest_all(targets: Iterable[str], names: Iterable[str]) -> dict[str, str]:
    """target -> the closest name (for the targets that have one), streaming ``names``
    once: what :class:`Suggester` would answer, without filing every name."""
    wanted: dict[str, list[str]] = {}
    queries = {fold(t) for t in targets}
    for query in queries:
        if _usable(query) or _usable(query[:-1]):
            for key in _keys(query):
                wanted.setdefault(key, []).append(query)
    lengths = {len(q) + d for q in queries for d in (-1, 0, 1)}
    found: dict[str, set[str]] = {}
    for name in names:
        if len(name) not in lengths or not _usable(name):
            continue  # too long or too short to be one edit from any target
        for i in range(len(name) + 1):
            key = name[:i] + name[i + 1 :] if i < len(name) else name
            for query in wanted.get(key, ()):
                found.setdefault(query, set()).add(name)
    out = {}
    for target in targets:
        best = _best(fold(target), found.get(fold(target), ()))
        if best:
            out[target] = best
    return out


def did_you_mean(name: str | None) -> str:
    """`` (did you mean 'x'?)`` when there is a suggestion, else ``""``."""
    return f" (did you mean {name!r}?)" if name else ""


def suggestible(style: str) -> bool:
    """Whether a reference of this style gets a suggestion (names, not paths or URLs)."""
    return style == "name"
