"""What the search index holds and should hold, known without opening it (no whoosh).

The search index is one derived structure (:class:`SearchIndex`, on the mechanism of
:mod:`studykb.vault.derived`): the vault's :class:`~studykb.vault.derived.Structures`
decide when it is out of date and hand its update the files that changed; its value,
kept in the vault's cache like every structure's, is a :class:`Held`: which generation
of the whoosh index in ``.studykb/index/`` it is and what that generation was made
with. The whoosh files are the structure's own bulk, written under whoosh's lock by
:func:`studykb.search.sync.sync_index`; the signature of every file they hold is kept
in the same cache (``search-held``, or as the changes since such a whole map). A
command that only needs the index to be current (``studykb build`` with nothing
changed) compares the value with the state, in a few milliseconds, and never loads
whoosh.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from studykb.vault.cache import modules_version
from studykb.vault.derived import Change, Snapshot
from studykb.vault.derived import code_version as derived_version
from studykb.vault.topics import TOPICS

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

#: The modules that decide what the index holds: how text is analysed and what goes in
#: (not how queries rank, beyond the searcher an edit's commit keeps open).
INDEX_MADE_BY = (
    "studykb.search.state",
    "studykb.search.store",
    "studykb.search.records",
    "studykb.search.sync",
    "studykb.search.segments",
    "studykb.search.parallel",
    "studykb.search.schema",
    "studykb.search.scoring",
    "studykb.search.unpickle",
    "studykb.text",
)
#: The version of the code that analyses text and fills the index; an index of another
#: version is rebuilt (it is stored with whoosh's schema, see ``schema.py``).
INDEX_VERSION = modules_version(INDEX_MADE_BY)
INDEX_DIR = "index"
#: whoosh's name for the index (``_MAIN_<generation>.toc`` holds each generation).
INDEX_NAME = "MAIN"
_TOC = re.compile(rf"^_{INDEX_NAME}_(\d+)\.toc$")

#: Re-index everything (both cores, several segments) when at least this many files changed
#: and they are most of the vault.
FULL_REBUILD_MIN = 400
#: A generation's per-file signatures are kept as the files changed since the last whole
#: map of them while at most this many did (see :func:`keep_held`).
HELD_CHANGES_MAX = 500


@dataclass
class SyncStats:
    """What one sync of the index did."""

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


@dataclass(frozen=True, slots=True)
class Held:
    """What one generation of the index holds: the search index's value."""

    ident: str
    """The generation's identity (see :func:`generation_id`): a value names one index."""
    generation: int
    topics: str
    """The digest of the topic table it was made with."""
    documents: int
    protected: tuple[str, ...]
    """The vault's words the stemmer left alone (:meth:`TopicTable.vocabulary`)."""
    held: str
    """The identity of the generation whose whole map of signatures is kept."""


class IndexBusy(Exception):
    """Another process holds the index's lock: queries answer from the last index."""


class SearchIndex:
    """The search index as a derived structure (see the module's docstring).

    One is made per use with what that use wants (how long to wait for another
    process's writer, the folder to check a written value against, the
    :class:`SyncStats` to say what it did in). :data:`SEARCH_INDEX`, the one the list
    of structures names, holds none of these.
    """

    name = "search-index"
    made_by = INDEX_MADE_BY
    inputs = (TOPICS,)
    #: its update writes whoosh's files: the value saying what they hold is written each time
    rewrite_after = 0
    #: cache entries it keeps besides its own (the per-file signatures)
    entries = ("search-held", "search-held-changes")

    def __init__(
        self, folder: Path | None = None, wait: float | None = None, stats: SyncStats | None = None
    ) -> None:
        self.folder = folder
        self.wait = wait
        self.stats = stats

    def build(self, vault: Snapshot) -> Held:
        return self._sync(vault, None, None)

    def update(self, value: Held, change: Change, vault: Snapshot) -> Held | None:
        return self._sync(vault, value, change)

    def _sync(self, vault: Snapshot, value: Held | None, change: Change | None) -> Held:
        # deferred: whoosh loads in ~0.1 s; an index that is current is never opened
        from studykb.search.sync import sync_index

        # the index writes its own files and reads the state's rows in bulk
        return sync_index(cast("Vault", vault), self, value, change)

    def stamp(self, value: Held) -> str | None:
        return value.ident or None

    def dump(self, value: Held) -> Any:
        return {
            "version": INDEX_VERSION,
            "ident": value.ident,
            "generation": value.generation,
            "topics": value.topics,
            "documents": value.documents,
            "protected": list(value.protected),
            "held": value.held,
        }

    def load(self, data: Any) -> Held:
        if data["version"] != INDEX_VERSION:
            raise ValueError("a value of another version of the index")
        value = Held(
            str(data["ident"]),
            int(data["generation"]),
            str(data["topics"]),
            int(data["documents"]),
            tuple(str(w) for w in data["protected"]),
            str(data["held"]),
        )
        if self.folder is not None and not self.names_index(value):
            raise ValueError("the index is not the one this value was made with")
        return value

    def names_index(self, value: Held) -> bool:
        """Whether ``value`` is what the index in :attr:`folder` holds now (its newest
        generation is the one the value names: another process's commit, a deleted or
        rebuilt index make it not)."""
        if self.folder is None:
            return False
        return generation_id(self.folder, latest_generation(self.folder)) == value.ident


#: The search index in the list of structures (``studykb.structures.ALL``).
SEARCH_INDEX = SearchIndex()


def held_key(name: str, ident: str) -> str:
    """The cache key of the signatures (``name``: an entry of :attr:`SearchIndex.entries`)
    kept for the generation ``ident``: made by this code, for that generation."""
    named = f"{derived_version(SEARCH_INDEX)}\x1f{name}\x1f{ident}"
    return hashlib.blake2b(named.encode(), digest_size=16).hexdigest()


def index_dir(vault: Vault) -> Path:
    return Path(vault.config.state_dir) / INDEX_DIR


def latest_generation(folder: Path) -> int:
    """The newest committed generation in ``folder`` (-1 when there is none), read from
    the names of whoosh's table-of-contents files as whoosh itself does."""
    try:
        names = os.listdir(folder)
    except OSError:
        return -1
    gens = [int(m.group(1)) for m in map(_TOC.match, names) if m]
    return max(gens, default=-1)


def generation_id(folder: Path, generation: int) -> str:
    """What tells generation ``generation`` of the index in ``folder`` from any other: its
    table of contents file's inode and mtime (a rebuilt index starts counting again)."""
    if generation < 0:
        return ""
    try:
        st = os.stat(folder / f"_{INDEX_NAME}_{generation}.toc")
    except OSError:
        return ""
    return f"{folder}:{generation}:{st.st_ino}:{st.st_mtime_ns}"


def read_held(vault: Vault, value: Held) -> dict[str, list[str]] | None:
    """path -> [file signature, topic fingerprint] in the generation ``value`` names, if
    known: kept whole, or as the files changed since a whole map (see :func:`keep_held`)."""
    whole = vault.cache.get("search-held", held_key("search-held", value.ident))
    if isinstance(whole, dict):
        return whole
    changes = vault.cache.get("search-held-changes", held_key("search-held-changes", value.ident))
    if not isinstance(changes, dict) or not isinstance(changes.get("files"), dict):
        return None
    base = vault.cache.get("search-held", held_key("search-held", str(changes.get("base"))))
    if not isinstance(base, dict):
        return None
    held = dict(base)
    for path, sig in changes["files"].items():
        if sig is None:
            held.pop(path, None)
        else:
            held[path] = sig
    return held


def keep_held(vault: Vault, ident: str, held: dict[str, list[str]], previous: Held | None) -> str:
    """Keep ``held`` for the generation ``ident``; the generation whose whole map it is
    kept against.

    An update changes a few files of thousands: writing their signatures again each time
    (about 0.8 MB at 10k notes) cost more than the rest of the update. While at most
    :data:`HELD_CHANGES_MAX` files differ from the whole map ``previous`` was kept
    against, only those are written (a removed file as None).
    """
    base_ident = previous.held if previous is not None else None
    if base_ident and base_ident != ident:
        base = vault.cache.get("search-held", held_key("search-held", base_ident))
        if isinstance(base, dict):
            files: dict[str, list[str] | None] = {
                path: sig for path, sig in held.items() if base.get(path) != sig
            }
            files.update((path, None) for path in base.keys() - held.keys())
            if len(files) <= HELD_CHANGES_MAX:
                key = held_key("search-held-changes", ident)
                vault.cache.put("search-held-changes", key, {"base": base_ident, "files": files})
                return base_ident
    vault.cache.put("search-held", held_key("search-held", ident), held)
    return ident


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


def may_differ(vault: Vault, change: Change, held: dict[str, list[str]]) -> set[str]:
    """The files that may differ from what the index holds: those the state's journal
    says changed since the index's value was made (``change``), and every file whose
    course may have changed without it (one naming a course, or held with one)."""
    in_course = {path for path, sig in held.items() if ":" in sig[0]}
    return set(change.paths) | vault.course_sources() | in_course


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
