"""Finding a document by what a user types: a path, id, alias, title or URL."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from studykb.errors import NotFound
from studykb.model import Document
from studykb.parse.urls import normalize_url
from studykb.vault.resolve import fold

if TYPE_CHECKING:
    from studykb.vault import Vault


def find(vault: Vault, query: str) -> Document:
    """Resolve ``query`` like a reference (path, id, alias, title, URL); NotFound otherwise."""
    query = query.strip()
    names = vault.names()
    if query.lower().startswith(("http://", "https://")):
        key, _state, _note = names.resolve("", "", normalize_url(query), "url", "", False)
    else:
        key, _state, _note = names.resolve("", "", query, "name", "", False)
        if key is None and query.lower().endswith(".md"):
            key, _state, _note = names.resolve("", "", query, "path", "", False)
    doc = vault.document(key) if key else None
    if doc is None:
        raise NotFound(query, suggest(vault, query))
    return doc


def suggest(vault: Vault, query: str, limit: int = 5) -> list[str]:
    """Names close to ``query``: containing it, or similar in spelling."""
    q = fold(query)
    names = vault.names()
    picked: dict[str, None] = {}
    if q:
        for name, entries in names.table.items():
            if q in name:
                for _lvl, key in entries:
                    picked.setdefault(key, None)
            if len(picked) >= limit:
                break
    for name in difflib.get_close_matches(q, list(names.table), n=limit, cutoff=0.6):
        for _lvl, key in names.table[name]:
            picked.setdefault(key, None)
    docs = [vault.document(k) for k in list(picked)[:limit]]
    return [f"{d.id} ({d.title})" if d.title != d.id else d.id for d in docs if d]
