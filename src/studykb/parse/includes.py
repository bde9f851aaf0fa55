"""Files a page pastes into itself, as written: Hugo's ``include`` and ``readfile``
shortcodes and pymdownx.snippets' ``--8<--`` lines.

Only recorded here (parsing has no disk access); ``vault/includes.py`` finds the files and
counts their headings as anchors of the page.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from studykb.parse.outline import Include

#: Shortcode name -> the named argument holding the path (else the first positional one).
#: ``include`` is Hugo's documented pattern (``.Page.RenderShortcodes`` of a content page);
#: ``readfile`` is the one Hugo's docs and Docsy ship.
SHORTCODES = MappingProxyType({"include": "path", "readfile": "file"})

# pymdownx.snippets' own patterns (SnippetPreprocessor.RE_ALL_SNIPPETS, RE_SNIPPET_FILE):
# an inline marker with a quoted path, or a bare marker that opens or closes a block of paths
_MARKER = re.compile(
    r"""^[ \t]*(?P<escape>;*)(?:-+8<-+[ \t]+(?P<path>"(?:\\"|[^"\n\r])+?"|'(?:\\'|[^'\n\r])+?')"""
    r"""|(?P<block>-+8<-+))[ \t]*\r?$"""
)
_RANGE = re.compile(
    r"(?i)(.*?)(?:(?::-?[0-9]*){1,2}(?:,-?[0-9]*(?::-?[0-9]*)?)*|:[a-z][-_0-9a-z]*)?$"
)


def shortcode_include(meta: dict[str, Any], markup: str, line: int) -> Include | None:
    """The include a ``shortcode`` / ``shortcode_inline`` token makes, or None."""
    name = meta.get("name", "")
    if name not in SHORTCODES or meta.get("closing"):
        return None
    params = meta.get("params") or {}
    named = params.get("named") or {}
    positional = params.get("positional") or []
    target = named.get(SHORTCODES[name]) or (positional[0] if positional else "")
    if not isinstance(target, str) or not target.strip():
        return None
    return Include(name, target.strip(), line, markup)


def _snippet_path(written: str) -> str:
    found = _RANGE.match(written.strip())
    return (found.group(1) if found else written).strip()


def snippet_includes(body: str, first_line: int) -> list[Include]:
    """Every file ``--8<--`` lines of ``body`` (starting on ``first_line``) paste in, as
    pymdownx.snippets reads them: before Markdown, so also inside code blocks; ``;`` escapes
    a marker; URLs are not files."""
    out: list[Include] = []
    block = False
    for n, text in enumerate(body.split("\n")):
        found = _MARKER.match(text)
        if found is not None and found.group("escape"):
            continue
        if found is not None and found.group("block"):
            block = not block
            continue
        if found is not None:
            path = _snippet_path(found.group("path")[1:-1])
        elif block:
            path = _snippet_path(text) if not text.strip().startswith(";") else ""
        else:
            continue
        if path and not path.lower().startswith(("http://", "https://")):
            out.append(Include("snippet", path, first_line + n, text.strip()))
    return out
