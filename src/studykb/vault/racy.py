"""Files stored "racily clean" by a first build, confirmed before it ends.

A refresh reads again every file whose stored mtime is within :data:`RACY_NS` of the
scan that stored it (git's racily clean entries: a rewrite in the same mtime tick would
keep its mtime and size). After a first build of a folder just cloned or copied, that is
most of the vault, and the first command after the build paid for reading them all
again. :func:`settle` reads them at the end of the build instead, and moves the mark the
next refresh measures from to when it started reading, only when every one of them
still holds what was stored: a file changed in between keeps the mark where it was, so
the next refresh reads it as before.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.vault import files as vault_files
from studykb.vault.outside import is_outside

if TYPE_CHECKING:
    from studykb.vault.state import Store

#: The clock of the confirmation (named, so that a test can move it).
clock = time.time_ns


def settle(store: Store, root: Path, racy_ns: int) -> int:
    """Read again the files a first build stored within ``racy_ns`` of its scan; when all
    read as stored, the state's ``scanned_ns`` becomes when this reading began. Returns
    how many were confirmed (0: the mark was left as it was)."""
    mark = store.meta.get("scanned_ns")
    if not mark or not mark.isdigit():
        return 0
    since = int(mark) - racy_ns
    stamps = store.files.stamps()
    suspects = [p for p, st in stamps.items() if not is_outside(st.hash) and st[0] >= since]
    if not suspects:
        return 0
    began = clock()
    if began <= int(mark):
        return 0
    for path in suspects:
        stored = stamps[path]
        try:
            raw, st = vault_files.read_note(root / path)
        except OSError:
            return 0
        if (st.st_mtime_ns, st.st_size) != stored[:2]:
            return 0
        if hashlib.blake2b(raw, digest_size=16).hexdigest() != stored.hash:
            return 0
    with store.transaction() as state:
        if state.meta.get("scanned_ns") != mark:  # another refresh wrote meanwhile
            return 0
        state.meta.put({"scanned_ns": str(began)})
    return len(suspects)
