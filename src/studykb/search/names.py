"""The topic names as queries compare them, a derived structure of the topic table.

A query is read against every name of every topic (:func:`studykb.search.understand.names_of`:
normalised name -> topic key); making that table costs more than reading it, so it is
kept in the vault's cache like every other derived structure, and made again only when
the topic table changes.
"""

from __future__ import annotations

from typing import Any

from studykb.search.understand import names_of
from studykb.vault.derived import Change, Derived, Snapshot
from studykb.vault.topics import TOPICS, Topics


class SearchNames:
    """Normalised topic name -> topic key, for reading queries."""

    name = "search-names"
    made_by = ("studykb.search.understand", "studykb.search.names")
    inputs: tuple[Topics] = (TOPICS,)

    def build(self, vault: Snapshot) -> dict[str, str]:
        return names_of(vault.derived(TOPICS))

    def update(
        self, value: dict[str, str], change: Change, vault: Snapshot
    ) -> dict[str, str] | None:
        return None if change.inputs else value  # the same topic table: the same names

    def stamp(self, value: dict[str, str]) -> str | None:
        return None

    def dump(self, value: dict[str, str]) -> dict[str, str]:
        return value

    def load(self, data: Any) -> dict[str, str]:
        if not isinstance(data, dict):
            raise TypeError("search names: not a mapping")
        return {str(k): str(v) for k, v in data.items()}


SEARCH_NAMES: Derived[dict[str, str]] = SearchNames()
