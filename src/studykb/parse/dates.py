"""Front-matter dates: ISO text, or a number only when it is a timestamp.

YAML reads ``date: 20240101`` as the number 20,240,101; taken for seconds since 1970 it
would be 1970-08-23. A number is a timestamp only from :data:`EPOCH_SECONDS_FROM` on
(epoch seconds from 2001, or Dendron's epoch milliseconds); any other number is
reported, and read as the date its digits spell when they spell one.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

#: Numbers from here on are timestamps (2001-09-09 in epoch seconds); below, no date.
EPOCH_SECONDS_FROM = 1_000_000_000
#: Epoch milliseconds (Dendron's ``created``) from here on.
EPOCH_MS_FROM = 100_000_000_000
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def date_of(value: Any) -> tuple[str | None, str | None]:
    """(the date as ISO text or free text, why the value is not a date or None)."""
    if value is None or value == "" or isinstance(value, bool):
        return None, None
    if isinstance(value, (int, float)):
        if value >= EPOCH_SECONDS_FROM:
            seconds = value / 1000 if value >= EPOCH_MS_FROM else value
            try:
                return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat(), None
            except (OverflowError, OSError, ValueError):
                return None, None
        written = _compact(value)
        fix = f"read as {written}; write {written}" if written else "write e.g. 2024-01-31"
        return written, f"{value!r} is a number, not an ISO date ({fix})"
    text = str(value).strip()
    match = _ISO_DATE.match(text)
    return (match.group(0) if match else text), None


def _compact(value: float) -> str | None:
    """``20240131`` -> ``2024-01-31`` when the digits make a real date, else None."""
    if value != int(value) or value < 0:
        return None
    try:
        return dt.datetime.strptime(f"{int(value):08d}", "%Y%m%d").date().isoformat()
    except ValueError:
        return None
