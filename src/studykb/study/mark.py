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
from studykb.parse.frontmatter import split
from studykb.parse.zola_keys import EXTRA
from studykb.vault import Vault, files
from studykb.vault.outside import refuse

STATUSES = ("todo", "reading", "done")


def set_status(
    raw: bytes,
    status: str,
    unit: str | None = None,
    today: dt.date | None = None,
    zola: bool = False,
) -> bytes:
    """``raw`` with its (or its unit's) status set, every other byte kept.

    Becoming ``done`` records the date in ``done``; any other status removes it. A file
    already in that status comes back unchanged. ``zola``: the keys go under ``[extra]``
    (Zola refuses them at the top of a section and drops them from a page), and a
    top-level ``status``/``done`` written before moves there; course units stay where the
    file keeps them. Raises EditError, UnicodeDecodeError.
    """
    if status not in STATUSES:
        raise StudyError(f"status must be one of {', '.join(STATUSES)}")
    table = _table(raw, unit) if zola else None
    stale: dict[str, str | dt.date | None] = {}
    if table is not None and unit is None:
        top = split(raw.decode("utf-8-sig")).meta
        stale = {key: None for key in ("status", "done") if key in top}
    new = set_values(raw, {"status": status}, unit, table)
    if new == raw and not stale:
        return raw
    done: dt.date | None = (today or dt.date.today()) if status == "done" else None
    if stale:
        raw = set_values(raw, stale)
    return set_values(raw, {"status": status, "done": done}, unit, table)


def _table(raw: bytes, unit: str | None) -> str | None:
    """Where a Zola file's status goes: ``extra``, but a unit's where its course keeps
    ``units`` (a list at the top written before stays there)."""
    meta = split(raw.decode("utf-8-sig")).meta
    if unit is not None and "units" in meta and "units" not in (meta.get(EXTRA) or {}):
        return None
    return EXTRA


def mark(vault: Vault, doc: Document, status: str, today: dt.date | None = None) -> bool:
    """Set ``doc``'s status in its file (or its course unit's); False when already set."""
    refuse(vault, doc.path, "mark")
    read = files.read_for_edit(vault.root, doc.path)
    unit = doc.key.split("#", 1)[1] if doc.type == "unit" else None
    try:
        new = set_status(read.data, status, unit, today, vault.reading.generator == "zola")
    except UnicodeDecodeError:
        raise StudyError(f"{doc.path} is not valid UTF-8; not changed") from None
    except EditError as exc:
        raise StudyError(f"{doc.path}: {exc}; not changed") from None
    if new == read.data:
        return False
    files.replace(read, new)
    return True
