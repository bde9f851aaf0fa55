"""A speed seam of the refresh: the answers of :meth:`Vault.any_saying` kept for one refresh.

A refresh asks the state whether a course or an entry says ``notes`` (does a tracked
repository's Markdown come in? :mod:`studykb.repos.notes`) before its write, and again
after it when the vault's own files changed (:meth:`Refresh._follow`). Each answer is a
scan of every course's and entry's fields (about 9 ms at 10k documents). After a write
the answer is known without the state when it was no before: the documents now stored
are those that did not say it and those the write inserted, so it is whether one of the
inserted ones says it. A yes is asked of the state again (a document that said it may
have gone). The answers live only while the refresh runs (:func:`kept`): another
process may write the state between two refreshes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.vault import Vault
    from studykb.vault.state.rows import ParsedRows

Ask = Callable[[tuple[str, ...], str], bool]
#: Where a document row (``DocRow``) holds its type and its fields (JSON).
_TYPE, _DATA = 4, 8


class Saying:
    """What the state answered, or would answer now, to ``any_saying(types, word)``."""

    def __init__(self) -> None:
        self._known: dict[tuple[tuple[str, ...], str], bool] = {}

    def answer(self, ask: Ask, types: tuple[str, ...], word: str) -> bool:
        """The answer kept, else ``ask(types, word)`` (the state's), kept."""
        key = (types, word)
        if key not in self._known:
            self._known[key] = ask(types, word)
        return self._known[key]

    def written(self, parsed: Iterable[ParsedRows] | None) -> None:
        """The write replaced files' rows with those of ``parsed`` (None: it wrote a whole
        new state): a no becomes whether an inserted document says the word; a yes, and
        everything after a whole new state, is asked again."""
        if parsed is None:
            self._known.clear()
            return
        rows = [row for one in parsed for row in one.docs]
        self._known = {
            key: any(row[_TYPE] in key[0] and key[1] in str(row[_DATA]) for row in rows)
            for key, said in self._known.items()
            if not said
        }


@contextmanager
def kept(vault: Vault) -> Iterator[None]:
    """Keep the answers while the block runs (a refresh; one inside it shares them)."""
    if vault.saying is not None:
        yield
        return
    vault.saying = Saying()
    try:
        yield
    finally:
        vault.saying = None


def written(vault: Vault, parsed: Iterable[ParsedRows] | None) -> None:
    """:meth:`Saying.written` of the answers kept, if any."""
    if vault.saying is not None:
        vault.saying.written(parsed)
