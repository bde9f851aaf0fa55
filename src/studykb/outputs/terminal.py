"""What may be printed on a terminal: text with its control characters made visible.

Titles, snippets and paths come from the user's files (or, for a command a running
watch answered, from another process): an escape sequence in them could recolour the
terminal, move the cursor, hide a line or set the window title. Every command's output
goes through :func:`safe` (via ``studykb.cli.app``), and so does an answer from the
vault's socket (``studykb.launch``). Imports nothing: the client that forwards
a command to a watch starts with nothing heavy loaded.
"""

from __future__ import annotations

import re

#: What is never printed raw on a terminal: C0 and C1 control characters (escape
#: sequences, bells, carriage returns) other than tab and newline, and the bidirectional
#: overrides that reorder what a line seems to say.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␛ for ESC
    return "\ufffd"


def safe(text: str) -> str:
    """``text`` with control characters made visible, one character for one (so offsets
    into it stay right): what every command prints from files, titles and snippets."""
    return _UNSAFE.sub(_picture, text)
