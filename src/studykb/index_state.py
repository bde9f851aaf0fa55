"""What the search index holds, known without opening it (and without importing whoosh).

:func:`studykb.index.sync` writes, beside each generation of the index it commits, a
small record of the vault state that generation reflects (``studykb-sync.json``) and
the signature of every file in it (``studykb-held.marshal``). A command that only
needs the index to be current (``studykb build`` with nothing changed) compares the
record with the state here, in a few milliseconds, and never loads whoosh.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .vault import Vault

#: Bumped whenever the analyzer or the schema changes; an index of another version is rebuilt.
INDEX_VERSION = 5
INDEX_DIR = "index"
#: whoosh's name for the index (``_MAIN_<generation>.toc`` holds each generation).
INDEX_NAME = "MAIN"
SYNC_FILE = "studykb-sync.json"
HELD_FILE = "studykb-held.marshal"
_TOC = re.compile(rf"^_{INDEX_NAME}_(\d+)\.toc$")

#: index folder -> the vault state the last sync in this process saw.
VERIFIED: dict[str, str] = {}


def index_dir(vault: Vault) -> Path:
    return Path(vault.config.state_dir) / INDEX_DIR


def fingerprint(vault: Vault) -> str:
    """Fingerprint of the vault state: every file's path and content hash (a few ms)."""
    row = vault.store.db.execute("SELECT group_concat(path || ':' || hash, '|') FROM files"
                                 ).fetchone()
    return hashlib.blake2b((row[0] or "").encode(), digest_size=16).hexdigest()


def latest_generation(folder: Path) -> int:
    """The newest committed generation in ``folder`` (-1 when there is none), read from
    the names of whoosh's table-of-contents files as whoosh itself does."""
    try:
        names = os.listdir(folder)
    except OSError:
        return -1
    gens = [int(m.group(1)) for m in map(_TOC.match, names) if m]
    return max(gens, default=-1)


def up_to_date(vault: Vault) -> dict[str, Any] | None:
    """The sync record when the index already reflects the vault state, else None."""
    folder = index_dir(vault)
    record = read_record(folder, latest_generation(folder))
    if record is None:
        return None
    state = fingerprint(vault)
    if record.get("state") != state:
        return None
    VERIFIED[str(folder)] = state
    return record


def read_record(folder: Path, generation: int) -> dict[str, Any] | None:
    """What the last sync wrote about generation ``generation`` (state fingerprints)."""
    if generation < 0:
        return None
    try:
        data = json.loads((folder / SYNC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(data, dict) or data.get("version") != INDEX_VERSION
            or data.get("generation") != generation):
        return None
    return data


def read_held(folder: Path, generation: int) -> dict[str, list[str]] | None:
    """path -> [file signature, topic fingerprint] in generation ``generation``, if known."""
    import marshal

    try:
        data = marshal.loads((folder / HELD_FILE).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if (not isinstance(data, dict) or data.get("version") != INDEX_VERSION
            or data.get("generation") != generation or not isinstance(data.get("held"), dict)):
        return None
    return data["held"]


def write_record(folder: Path, generation: int, held: dict[str, list[str]], state: str,
                 topics: str, documents: int) -> None:
    """Remember what generation ``generation`` holds, so the next command skips reading it.

    Two files: a small JSON one read by every command, and the per-file signatures
    (marshal: 10k entries load in 3 ms), read only when the vault changed. The small
    one is written last: it vouches for the other.
    """
    import marshal

    small = {"version": INDEX_VERSION, "generation": generation, "state": state,
             "topics": topics, "documents": documents}
    big = {"version": INDEX_VERSION, "generation": generation, "held": held}
    for name, data in ((HELD_FILE, marshal.dumps(big)),
                       (SYNC_FILE, json.dumps(small).encode())):
        tmp = folder / f"{name}.{os.getpid()}.tmp"
        try:
            tmp.write_bytes(data)
            os.replace(tmp, folder / name)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
