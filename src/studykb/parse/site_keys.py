"""Which front-matter keys hold a document's resource address and other names, per site.

studykb's own keys are ``link`` (the address of the article, talk or course an entry is
about) and ``names`` (other names, such as the title in another language), read in every
vault. ``url`` and ``aliases`` mean the same in a plain folder of notes, Obsidian, Dendron,
Quartz, Jekyll and GitHub, but Hugo and Zola own them: ``url`` is the page's own URL (Hugo
fails on one with ``http://``), ``aliases`` the old URLs it writes redirect pages for. There
they keep the generator's meaning (``parse/site_urls.py``), and :func:`clashes` says which
of a note's values would make the generator fail or write pages nobody wants.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: Generators whose front matter owns ``url`` and ``aliases``.
OWNERS = ("hugo", "zola")


def owns_keys(generator: str) -> bool:
    """Whether ``url``/``aliases`` are the generator's (so studykb reads ``link``/``names``)."""
    return generator in OWNERS


def link(meta: Mapping[str, Any], generator: str) -> str | None:
    """The resource address: ``link``, else (outside Hugo and Zola) ``url``."""
    keys = ("link",) if owns_keys(generator) else ("link", "url")
    for key in keys:
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def name_values(meta: Mapping[str, Any], generator: str) -> list[Any]:
    """The values that hold other names: ``names``, and outside Hugo and Zola ``aliases``
    (or ``alias``)."""
    values = [meta.get("names")]
    if not owns_keys(generator):
        values.append(meta.get("aliases", meta.get("alias")))
    return [v for v in values if v not in (None, "")]


def clashes(meta: Mapping[str, Any], generator: str) -> Iterator[tuple[str, str]]:
    """(key, message) for each value that the generator reads otherwise than the note
    means: Hugo fails on a ``url`` with a scheme; an alias that is a name rather than a
    path makes Hugo and Zola write a redirect page at ``/that-name/``."""
    if not owns_keys(generator):
        return
    url = meta.get("url")
    # Zola has no ``url`` key: parse/zola_keys.py says what it does with one
    if generator == "hugo" and isinstance(url, str) and "://" in url:
        yield (
            "url",
            f"{generator} reads url as the page's own URL and fails on one with a scheme "
            f"({url.strip()!r}); write the resource's address as link:",
        )
    aliases = meta.get("aliases")
    items = aliases if isinstance(aliases, list) else [aliases] if aliases else []
    for item in items:
        if isinstance(item, str) and item.strip() and "/" not in item:
            yield (
                "aliases",
                f"{generator} makes a redirect page for each of aliases ({item.strip()!r} "
                "is not an old URL of the page); write other names as names:",
            )
            break
