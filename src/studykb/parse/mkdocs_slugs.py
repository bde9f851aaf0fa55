"""Heading ids as mkdocs makes them: Python-Markdown's ``toc`` extension and its slugifiers.

mkdocs always runs ``toc``; its ``slugify`` option names a function in ``mkdocs.yml``
(``!!python/name:pymdownx.slugs.uslugify``, ``!!python/object/apply:pymdownx.slugs.slugify
{kwds: {case: lower}}``). studykb never imports what a configuration names: it maps the
known slugifiers to these re-implementations of their rules (``vault/mkdocs_site.py``):

- ``default``: ``markdown.extensions.toc.slugify``: NFKD to ASCII, ``[^\\w\\s-]`` dropped,
  lower case, runs of spaces and separators one separator;
- ``unicode``: ``toc.slugify_unicode``: the same, keeping non-ASCII letters;
- ``pymdownx``: ``pymdownx.slugs.slugify(case=..., normalize=..., percent_encode=...)``:
  tags dropped, ``case`` (``none``, ``lower``, ``lower-ascii``, ``fold``), ``[^\\w\\- ]``
  dropped, each space one separator (``A & B`` is ``A--B``).

A repeated id gets ``_1``, ``_2`` (``toc.unique``); an empty one is ``_1``.
"""

from __future__ import annotations

import re
import unicodedata
from types import MappingProxyType
from typing import Literal, cast
from urllib.parse import quote

#: The slugifiers studykb knows, by the name ``mkdocs.yml`` gives them.
SLUGIFIERS = MappingProxyType(
    {
        "markdown.extensions.toc.slugify": "default",
        "markdown.extensions.toc.slugify_unicode": "unicode",
        "pymdownx.slugs.slugify": "pymdownx",
        "pymdownx.slugs.uslugify": "pymdownx:lower",
        "pymdownx.slugs.uslugify_encoded": "pymdownx:lower:encoded",
        "pymdownx.slugs.uslugify_cased": "pymdownx",
        "pymdownx.slugs.uslugify_cased_encoded": "pymdownx::encoded",
        "pymdownx.slugs.gfm": "pymdownx:lower-ascii",
        "pymdownx.slugs.gfm_encoded": "pymdownx:lower-ascii:encoded",
    }
)
CASES = ("none", "lower", "lower-ascii", "fold")
NORMAL_FORMS = ("NFC", "NFD", "NFKC", "NFKD")

_TAGS = re.compile(r"</?[^>]*>")
_INVALID = re.compile(r"[^\w\- ]")
_ASCII_UPPER = re.compile(r"[A-Z]")
_TOC_INVALID = re.compile(r"[^\w\s-]")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\]")
_COUNTED = re.compile(r"^(.*)_([0-9]+)$")


def without_footnote_refs(text: str) -> str:
    """A heading's text less its footnote references (``toc`` removes them first)."""
    return _FOOTNOTE_REF.sub("", text) if "[^" in text else text


def toc_slug(text: str, separator: str = "-", unicode: bool = False) -> str:
    """``markdown.extensions.toc.slugify`` (``unicode``: ``slugify_unicode``)."""
    if not unicode:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = _TOC_INVALID.sub("", text).strip().lower()
    return re.sub(rf"[{re.escape(separator)}\s]+", separator, text)


def pymdownx_slug(
    text: str,
    separator: str = "-",
    case: str = "none",
    normalize: str = "NFC",
    percent_encode: bool = False,
) -> str:
    """``pymdownx.slugs.slugify(case=..., normalize=..., percent_encode=...)``."""
    form = cast(Literal["NFC", "NFD", "NFKC", "NFKD"], normalize)
    if form not in NORMAL_FORMS:
        form = "NFC"
    slug = _TAGS.sub("", unicodedata.normalize(form, text)).strip()
    if case == "lower":
        slug = slug.lower()
    elif case == "lower-ascii":
        slug = _ASCII_UPPER.sub(lambda m: m.group(0).lower(), slug)
    elif case == "fold":
        slug = slug.casefold()
    slug = _INVALID.sub("", slug).replace(" ", separator)
    return quote(slug.encode("utf-8")) if percent_encode else slug


def mkdocs_slug(text: str, opts: dict[str, object]) -> str:
    """The id ``toc`` gives a heading whose visible text is ``text``."""
    separator = str(opts.get("separator") or "-")
    kind = str(opts.get("slugify") or "default")
    if kind == "pymdownx":
        return pymdownx_slug(
            text,
            separator,
            str(opts.get("case") or "none"),
            str(opts.get("normalize") or "NFC"),
            opts.get("percent_encode") is True,
        )
    return toc_slug(text, separator, unicode=kind == "unicode")


def unique(anchor: str, taken: set[str]) -> str:
    """``markdown.extensions.toc.unique``: ``x``, ``x_1``, ``x_2``; ``""`` is ``_1``."""
    while anchor in taken or not anchor:
        found = _COUNTED.match(anchor)
        anchor = f"{found.group(1)}_{int(found.group(2)) + 1}" if found else f"{anchor}_1"
    return anchor
