"""What the search index holds and should hold, known without opening it (no whoosh).

:func:`studykb.search.sync.sync` writes, beside each generation of the index it commits, a
small record of the vault state that generation reflects (``studykb-sync.json``), and
keeps the signature of every file in it in the vault's cache (``search-held``). A
command that only needs the index to be current (``studykb build`` with nothing
changed) compares the record with the state here, in a few milliseconds, and never
loads whoosh.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studykb.vault.cache import code_version
from studykb.vault.cache import key as cache_key

#: Text fields a query may also name (``title:``, ``aliases:``) without searching them by default.
TEXT_FIELDS = ("title", "aliases", "tags", "body")
#: Fields holding exact values (filters, and ``field:value`` in a query).
EXACT_FIELDS = (
    "type",
    "tag",
    "course",
    "status",
    "level",
    "kind",
    "date",
    "id",
    "path",
    "key",
    "exact",
)


if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault import Vault
    from studykb.vault.topics import TopicTable

#: The version of the code that analyses text and fills the index (see vault/cache.py);
#: an index of another version is rebuilt.
INDEX_VERSION = code_version("search-index")
INDEX_DIR = "index"
#: whoosh's name for the index (``_MAIN_<generation>.toc`` holds each generation).
INDEX_NAME = "MAIN"
SYNC_FILE = "studykb-sync.json"
_TOC = re.compile(rf"^_{INDEX_NAME}_(\d+)\.toc$")

#: Re-index everything (both cores, several segments) when at least this many files changed
#: and they are most of the vault.
FULL_REBUILD_MIN = 400
#: A generation's per-file signatures are kept as the files changed since the last whole
#: map of them while at most this many did (see :func:`write_record`).
HELD_CHANGES_MAX = 500


def index_dir(vault: Vault) -> Path:
    return Path(vault.config.state_dir) / INDEX_DIR


def fingerprint(vault: Vault) -> str:
    """Fingerprint of the vault state (see :meth:`Vault.fingerprint`)."""
    return vault.fingerprint()


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
    record, _state = check(vault)
    return record


def check(vault: Vault) -> tuple[dict[str, Any] | None, str]:
    """(the sync record if the index reflects the vault state, else None; that state)."""
    folder = index_dir(vault)
    state = fingerprint(vault)
    record = read_record(folder, latest_generation(folder))
    if record is None or record.get("state") != state:
        return None, state
    return record, state


def read_record(folder: Path, generation: int) -> dict[str, Any] | None:
    """What the last sync wrote about generation ``generation`` (state fingerprints)."""
    if generation < 0:
        return None
    try:
        data = json.loads((folder / SYNC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("version") != INDEX_VERSION
        or data.get("generation") != generation
    ):
        return None
    return data


def _generation_id(folder: Path, generation: int) -> str:
    """What tells generation ``generation`` of the index in ``folder`` from any other: its
    table of contents file's inode and mtime (a rebuilt index starts counting again)."""
    try:
        st = os.stat(folder / f"_{INDEX_NAME}_{generation}.toc")
    except OSError:
        return ""
    return f"{folder}:{generation}:{st.st_ino}:{st.st_mtime_ns}"


def read_held(vault: Vault, folder: Path, generation: int) -> dict[str, list[str]] | None:
    """path -> [file signature, topic fingerprint] in generation ``generation``, if known:
    kept whole, or as the files changed since a whole map (see :func:`write_record`)."""
    ident = _generation_id(folder, generation)
    if not ident:
        return None
    whole = vault.cache.get("search-held", cache_key("search-held", ident))
    if isinstance(whole, dict):
        return whole
    changes = vault.cache.get("search-held-changes", cache_key("search-held-changes", ident))
    if not isinstance(changes, dict) or not isinstance(changes.get("files"), dict):
        return None
    base = vault.cache.get("search-held", cache_key("search-held", str(changes.get("base"))))
    if not isinstance(base, dict):
        return None
    held = dict(base)
    for path, sig in changes["files"].items():
        if sig is None:
            held.pop(path, None)
        else:
            held[path] = sig
    return held


def _keep_held(
    vault: Vault, ident: str, held: dict[str, list[str]], previous: dict[str, Any] | None
) -> str:
    """Keep ``held`` for the generation ``ident``; the generation whose whole map it is
    kept against.

    An update changes a few files of thousands: writing their signatures again each time
    (about 0.8 MB at 10k notes) cost more than the rest of the record. While at most
    :data:`HELD_CHANGES_MAX` files differ from the whole map the last record was kept
    against, only those are written (a removed file as None).
    """
    base_ident = previous.get("held") if previous is not None else None
    if isinstance(base_ident, str) and base_ident != ident:
        base = vault.cache.get("search-held", cache_key("search-held", base_ident))
        if isinstance(base, dict):
            files: dict[str, list[str] | None] = {
                path: sig for path, sig in held.items() if base.get(path) != sig
            }
            files.update((path, None) for path in base.keys() - held.keys())
            if len(files) <= HELD_CHANGES_MAX:
                key = cache_key("search-held-changes", ident)
                vault.cache.put("search-held-changes", key, {"base": base_ident, "files": files})
                return base_ident
    vault.cache.put("search-held", cache_key("search-held", ident), held)
    return ident


def write_record(
    vault: Vault,
    folder: Path,
    generation: int,
    held: dict[str, list[str]],
    state: str,
    topics: str,
    documents: int,
    protected: list[str],
    previous: dict[str, Any] | None = None,
    state_at: tuple[str, int] | None = None,
) -> None:
    """Remember what generation ``generation`` holds, so the next command skips reading it.

    The per-file signatures go to the vault's cache, read only when the vault changed
    (kept as the changes since ``previous``'s whole map when they are few); the small
    JSON record beside the index, read by every command, is written last: it vouches for
    the other. ``protected``: the vault's words the stemmer left alone (see
    :meth:`studykb.vault.topics.TopicTable.vocabulary`). ``previous``: the record of the
    generation the sync started from. ``state_at``: the state's name and write count
    ``state`` was read at (see :func:`may_differ`).
    """
    ident = _generation_id(folder, generation)
    small: dict[str, Any] = {
        "version": INDEX_VERSION,
        "generation": generation,
        "state": state,
        "topics": topics,
        "documents": documents,
        "protected": protected,
    }
    if state_at is not None:
        small["state_instance"], small["state_generation"] = state_at
    if ident:
        small["held"] = _keep_held(vault, ident, held, previous)
    tmp = folder / f"{SYNC_FILE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(small), encoding="utf-8")
        os.replace(tmp, folder / SYNC_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass
class SyncStats:
    """What one :func:`sync` did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    documents: int = 0
    rebuilt: bool = False
    """The whole index was written again (first build, many changes, or a damaged index)."""
    stale: bool = False
    """Another process held the index; queries answer from the last complete index."""
    seconds: float = 0.0
    notice: str | None = None
    paths: list[str] = field(default_factory=list)
    """Files re-indexed or removed."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


# -- what the index should hold -------------------------------------------------------


def wanted_signatures(vault: Vault, paths: set[str] | None = None) -> dict[str, str]:
    """path -> signature of the file as the index should hold it (content and course),
    for every file, or for those of ``paths`` that exist."""
    courses: dict[str, set[str]] = {}
    for source, named in vault.course_links(paths).items():
        courses.setdefault(source.split("#", 1)[0], set()).update(named)
    out = vault.file_hashes(paths)
    for path, extra in courses.items():
        if path in out:
            out[path] = f"{out[path]}:{','.join(sorted(extra))}"
    return out


def topic_signatures(vault: Vault, topics: TopicTable) -> dict[str, str]:
    """path -> topic fingerprint of every file (reads every document: when topics changed)."""
    by_path: dict[str, list[Document]] = {}
    for doc in vault.documents().values():
        by_path.setdefault(doc.path, []).append(doc)
    return {path: topics.sig(docs) for path, docs in by_path.items()}


def may_differ(
    vault: Vault, record: dict[str, Any] | None, held: dict[str, list[str]]
) -> set[str] | None:
    """The files that may differ from what the index holds, when the state's journal
    can say: those written since the state ``record`` says the index caught up with,
    and every file whose course may have changed without it (one naming a course, or
    held with one). None when it cannot (another state, a write that read the whole
    vault, a journal that does not go back that far): then every file."""
    instance, now = vault.generation()
    since = record.get("state_generation") if record is not None else None
    if record is None or record.get("state_instance") != instance or not isinstance(since, int):
        return None
    written = vault.changed_since(since, now)
    if written is None:
        return None
    in_course = {path for path, sig in held.items() if ":" in sig[0]}
    return written | vault.course_sources() | in_course


def diff_held(
    held: dict[str, list[str]],
    wanted: dict[str, str],
    tsigs: dict[str, str] | None,
    paths: set[str] | None = None,
) -> tuple[list[str], list[str]]:
    """(files to (re-)index, files to drop); ``tsigs`` also compares topic fingerprints.
    ``paths``: only these files may differ (``wanted`` holds those of them that exist)."""
    if paths is not None:
        return [p for p in sorted(paths) if p in wanted and _stale(held.get(p), wanted[p])], [
            p for p in sorted(paths) if p in held and p not in wanted
        ]
    changed = []
    for path, sig in wanted.items():
        have = held.get(path)
        if have is None or have[0] != sig or (tsigs is not None and have[1] != tsigs.get(path, "")):
            changed.append(path)
    return changed, [p for p in held if p not in wanted]


def _stale(have: list[str] | None, sig: str) -> bool:
    return have is None or have[0] != sig


def rebuild_whole(held: dict[str, list[str]], changed: list[str], files: int) -> bool:
    """Whether to write the index again from scratch rather than patch it (``files``:
    how many the vault has)."""
    return not held or (len(changed) >= FULL_REBUILD_MIN and len(changed) * 2 >= files)
