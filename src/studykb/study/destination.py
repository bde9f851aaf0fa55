"""Where ``mv`` may put a note: a name studykb can show, in a place studykb reads.

Checked at the command's entry, before anything is planned: a note moved into a hidden
folder, an excluded one or a folder linked out of the vault would vanish from
everything studykb reads while every reference to it was rewritten to point there; a
name with a control character (ESC, a newline) would reach terminals and pages.
"""

from __future__ import annotations

import re

from studykb.config import Config
from studykb.errors import UsageError
from studykb.model import Document
from studykb.study.rename import target_path
from studykb.vault.scan import unread

#: Characters no new name may hold: C0 and C1 controls, DEL, and the invisible marks
#: that reorder or hide text (bidirectional overrides and isolates).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def check(config: Config, doc: Document, new: str) -> None:
    """UsageError (exit 2) when renaming ``doc`` to ``new`` would put it where studykb
    does not read, or give it a name holding a control character."""
    if _CONTROL.search(new):
        raise UsageError(
            f"{new!r} holds a control character; choose a name without one.",
            hint="Letters, digits, '-', '_' and '/' between folders make a safe name.",
        )
    path = target_path(doc, new)
    why = unread(config, path)
    if why is not None:
        raise UsageError(
            f"{path} is not a place studykb reads: {why}; not moving {doc.path} there.",
            hint="Choose a folder studykb reads (not hidden, not excluded, inside the vault).",
        )
