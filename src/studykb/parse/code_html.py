"""A source file as highlighted HTML, one line at a time (the web view's code pages).

Pygments reads the whole file (a string or a comment may span lines), and each line gets
its own spans, opened and closed on that line, so a page can show any lines of it, each
in a table row with its number and anchor. Everything is escaped; the classes are
Pygments' short ones, which ``web/static/pygments.css`` styles under ``.highlight``.
"""

from __future__ import annotations

from html import escape
from typing import Any

from studykb.runtime import process

#: Files longer than this (characters) are shown without highlighting.
HIGHLIGHT_MOST = 400_000


def code_lines(text: str, path: str) -> list[str]:
    """The HTML of each line of ``text`` (the file ``path``), highlighted by its name's
    language where Pygments knows it, else escaped only."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    lexer = _lexer_for(path) if len(text) <= HIGHLIGHT_MOST else None
    if lexer is None:
        return [escape(line, quote=False) for line in lines]
    out: list[str] = []
    current: list[str] = []
    for kind, value in lexer.get_tokens(text):
        css = _css(kind)
        parts = value.split("\n")
        for n, part in enumerate(parts):
            if n:
                out.append("".join(current))
                current = []
            if part:
                shown = escape(part, quote=False)
                current.append(f'<span class="{css}">{shown}</span>' if css else shown)
    if current:
        out.append("".join(current))
    # the lexer may add or drop a final newline: the file's own line count rules
    out = out[: len(lines)]
    out.extend(escape(line, quote=False) for line in lines[len(out) :])
    return out


@process.memo(maxsize=128)
def _lexer_for(path: str) -> Any:
    # deferred: pygments loads only to highlight code
    from pygments.lexers import get_lexer_for_filename

    # deferred: pygments loads only to highlight code
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(
            path.rsplit("/", 1)[-1], stripnl=False, stripall=False, ensurenl=False
        )
    except ClassNotFound:
        return None


def _css(kind: Any) -> str:
    # deferred: pygments loads only to highlight code
    from pygments.token import STANDARD_TYPES

    while kind is not None:
        found = STANDARD_TYPES.get(kind)
        if found is not None:
            return found
        kind = kind.parent
    return ""
