"""``studykb mark``: set a document's status in its file, and nothing else.

The file is read whole and stable (:func:`studykb.vault.files.read_for_edit`), its
front matter edited and checked (:mod:`studykb.parse.fm_edit`: only ``status``, and
``done`` with the date when it becomes done, may change), and the new bytes replace it
only if it still holds what was read (:func:`studykb.vault.files.replace`).
"""

from __future__ import annotations

import datetime as dt

from studykb.errors import StudyError
from studykb.model import Document
from studykb.parse.fm_edit import EditError, set_values
from studykb.vault import Vault, files

STATUSES = ("todo", "reading", "done")


def set_status(
    raw: bytes, status: str, unit: str | None = None, today: dt.date | None = None
) -> bytes:
    """``raw`` with its (or its unit's) status set, every other byte kept.

    Becoming ``done`` records the date in ``done``; any other status removes it. A file
    already in that status comes back unchanged. Raises EditError, UnicodeDecodeError.
    """
    if status not in STATUSES:
        raise StudyError(f"status must be one of {', '.join(STATUSES)}")
    new = set_values(raw, {"status": status}, unit)
    if new == raw:
        return raw
    done: dt.date | None = (today or dt.date.today()) if status == "done" else None
    return set_values(raw, {"status": status, "done": done}, unit)


def mark(vault: Vault, doc: Document, status: str, today: dt.date | None = None) -> bool:
    """Set ``doc``'s status in its file (or its course unit's); False when already set."""
    read = files.read_for_edit(vault.root, doc.path)
    unit = doc.key.split("#", 1)[1] if doc.type == "unit" else None
    try:
        new = set_status(read.data, status, unit, today)
    except UnicodeDecodeError:
        raise StudyError(f"{doc.path} is not valid UTF-8; not changed") from None
    except EditError as exc:
        raise StudyError(f"{doc.path}: {exc}; not changed") from None
    if new == read.data:
        return False
    files.replace(read, new)
    return True
