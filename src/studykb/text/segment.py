"""Cutting Chinese into words (the only module that imports rjieba), and the cuts
remembered between updates of the search index.

Only runs of Han characters are cut, by rjieba (the Rust port of jieba: same dictionary,
same words). A long word also yields, at its own position, the dictionary words inside
it (``数据并行`` gives ``并行``), and a word that is not in the dictionary yields its
two-character pieces (``时幻读`` gives ``幻读``), so short queries find longer words.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Protocol

from studykb.runtime import process


class Store(Protocol):
    """Where remembered cuts are kept (the vault's cache, :mod:`studykb.vault.cache`)."""

    def get(self, name: str, entry_key: str) -> Any: ...

    def put(self, name: str, entry_key: str, value: Any) -> None: ...


#: Han characters (CJK unified ideographs and their extensions, compatibility ideographs),
#: as ranges of code points.
HAN_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2EBEF),
    (0x30000, 0x3134F),
)
#: The same, as the inside of a regular expression's ``[...]``. Compiling a pattern that
#: holds it takes about 2.5 ms (every character of the range is visited), so a test of
#: one character uses :func:`is_han` instead.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f"
SEGMENTS_ENTRY = "search-segments"
#: Han runs remembered between incremental updates (about 60 bytes each on disk).
SEGMENTS_MAX = 50_000


def is_han(char: str) -> bool:
    """Whether ``char`` (one character) is a Han character (in :data:`HAN`)."""
    code = ord(char)
    return any(low <= code <= high for low, high in HAN_RANGES)


def has_han(text: str) -> bool:
    """Whether ``text`` holds a Han character."""
    return any(map(is_han, text))


def jieba() -> Any:
    """rjieba, imported on first use: its dictionary takes 0.1-0.2 s to load, which a
    query without Chinese (or a snippet) does not need to pay."""
    return process.once("rjieba", _import_rjieba)


def _import_rjieba() -> Any:
    # deferred: the segmenter loads only when Chinese text is cut
    import rjieba

    return rjieba


@process.memo(maxsize=None)
def in_dict(word: str) -> bool:
    """Whether ``word`` is in rjieba's dictionary (remembered for the process)."""
    return bool(jieba().has_word(word))


def pieces(word: str) -> list[tuple[str, int]]:
    """Shorter words inside a long Chinese word, indexed at the same position."""
    n = len(word)
    if n < 3:
        return []
    known = in_dict(word)
    out = []
    for size in (2, 3):
        if size >= n:
            break
        for i in range(n - size + 1):
            piece = word[i : i + size]
            if (not known and size == 2) or in_dict(piece):
                out.append((piece, i))
    return out


class Segments:
    """How rjieba cuts each run of Han characters, remembered (and kept on disk).

    Indexing an edited note cuts all of its Chinese again, and loading rjieba's
    dictionary for that takes ~0.1 s, more than the rest of the update. The runs cut
    by incremental updates are kept in the vault's cache (``search-segments``, the most
    recent :data:`SEGMENTS_MAX`), so the next update of the same note usually
    finds every run there and never loads the dictionary. The file is tied to this
    index version and to the installed rjieba, so a new dictionary starts afresh.
    """

    def __init__(self) -> None:
        self.runs: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
        self.fresh: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
        self.loaded: set[str] = set()
        self._pending: tuple[Store, str] | None = None
        self.keep = True
        """Whether to hold what was cut (a full build's index workers do not)."""

    def cut(self, run: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The words of ``run`` (with the shorter words indexed inside each), via rjieba."""
        if self._pending is not None:
            self._load_pending()
        known = self.runs.get(run)
        if known is not None:
            return known
        got = tuple(
            (word, tuple(piece for piece, _at in pieces(word)) if len(word) > 2 else ())
            for word in jieba().cut(run)
        )
        if not self.keep:
            return got
        if len(self.runs) > 4 * SEGMENTS_MAX:  # a long-lived process: bound the memory
            self.runs.clear()
        if len(self.fresh) > SEGMENTS_MAX:
            self.fresh.clear()
        self.runs[run] = self.fresh[run] = got
        return got

    def load(self, cache: Store, entry: str) -> None:
        """Add the runs remembered in ``cache`` under ``entry`` (once per process), when
        the first run is missing: an edit without new Chinese never reads them."""
        if entry not in self.loaded:
            self._pending = (cache, entry)

    def _load_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        cache, entry = pending
        self.loaded.add(entry)
        data = cache.get(SEGMENTS_ENTRY, entry)
        if not isinstance(data, dict):
            return
        for run, cut in data.items():
            self.runs.setdefault(run, tuple((word, tuple(pieces)) for word, pieces in cut))

    def save(self, cache: Store, entry: str) -> None:
        """Remember the runs cut since the last save (the newest :data:`SEGMENTS_MAX`)."""
        self._pending = None
        if not self.fresh:
            return
        data = cache.get(SEGMENTS_ENTRY, entry)
        runs: dict[str, Any] = {}
        if isinstance(data, dict):
            runs = {r: c for r, c in data.items() if r not in self.fresh}
        runs.update(self.fresh)
        self.fresh = {}
        if len(runs) > SEGMENTS_MAX:
            runs = dict(list(runs.items())[-SEGMENTS_MAX:])
        cache.put(SEGMENTS_ENTRY, entry, runs)


def stamp() -> list[Any]:
    """What the remembered cuts depend on besides this code: the installed rjieba."""
    spec = importlib.util.find_spec("rjieba")
    try:
        st = os.stat(spec.origin) if spec and spec.origin else None
    except OSError:
        st = None
    return [st.st_size if st else 0, st.st_mtime_ns if st else 0]


def segments() -> Segments:
    """The cuts remembered in this process (they depend on the installed rjieba alone)."""
    return process.once("segments", Segments)
