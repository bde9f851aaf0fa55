"""The generated sidebar region of a note, between two marker comments.

``<!-- studykb:sidebar -->`` ... ``<!-- /studykb:sidebar -->``

``studykb sidebar --write`` owns what lies between the two marker comments. The parser
skips that region (its links, text and headings), so writing a sidebar never changes the
graph or the text it was ranked from, and a second run changes no byte.

A marker counts only as a top-level HTML comment on a line of its own (not inside code,
a list or a quote). The region exists only when there is exactly one start marker
followed by exactly one end marker; anything else is reported by :func:`find_markers`
and left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SIDEBAR_START = "<!-- studykb:sidebar -->"
SIDEBAR_END = "<!-- /studykb:sidebar -->"


@dataclass(frozen=True)
class Markers:
    """Where the sidebar markers are in a file (0-based line numbers of the whole file)."""

    starts: tuple[int, ...]
    """Lines holding the start marker."""
    ends: tuple[int, ...]
    """Lines holding the end marker."""

    @property
    def region(self) -> tuple[int, int] | None:
        """(start line, end line) of a well-formed region, else None."""
        if len(self.starts) == 1 and len(self.ends) == 1 and self.starts[0] < self.ends[0]:
            return self.starts[0], self.ends[0]
        return None

    @property
    def absent(self) -> bool:
        return not self.starts and not self.ends


def marker_lines(tokens: Sequence) -> Markers:  # type: ignore[type-arg]
    """Marker lines among markdown-it block ``tokens`` (lines relative to the parsed text)."""
    starts: list[int] = []
    ends: list[int] = []
    for tok in tokens:
        if tok.type != "html_block" or tok.level != 0 or not tok.map:
            continue
        if "studykb:sidebar" not in tok.content:
            continue
        for offset, line in enumerate(tok.content.split("\n")):
            text = line.strip()
            if text == SIDEBAR_START:
                starts.append(tok.map[0] + offset)
            elif text == SIDEBAR_END:
                ends.append(tok.map[0] + offset)
    return Markers(tuple(starts), tuple(ends))


def find_markers(text: str) -> Markers:
    """The sidebar markers of a whole file's text (BOM removed, any line ends).

    Line numbers count ``\\r\\n``, ``\\r`` and ``\\n`` each as one line end.
    """
    # deferred: loads frontmatter, yaml
    from studykb.parse.frontmatter import split

    # deferred: loads markdown_it, mdit_py_plugins
    from studykb.parse.markdown import markdown

    parts = split(text)
    found = marker_lines(markdown().parse(parts.body))
    shift = parts.body_line - 1
    return Markers(tuple(n + shift for n in found.starts), tuple(n + shift for n in found.ends))
