"""The search index on disk: opening, creating and trusting it, and the searchers kept open.

One whoosh index in ``<vault>/.studykb/index/`` holds every document (and every course
unit, as its own document keyed ``path#unit``). Only recognised damage of its files (see
:data:`_DAMAGE`), or a table of contents written by another studykb version, makes it be
replaced; anything else is an error to report. A process keeps one searcher open per
index while its generation is the latest (:func:`current`).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import sys
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from whoosh import index as windex
from whoosh.filedb.filestore import FileStorage

from studykb.runtime import process
from studykb.search import unpickle
from studykb.search.schema import FIELD_NAMES, MixedTokenizer, make_schema
from studykb.search.state import INDEX_VERSION, index_dir, latest_generation

unpickle.install()  # before any index is read: whoosh's pickles build only its own objects

if TYPE_CHECKING:
    from studykb.vault import Vault

#: Memory (MB) each writer process may use for postings before spilling them to disk.
POOL_MB = 256
#: BM25 length normalisation per field: a topic with many aliases is not penalised for them.
FIELD_B = MappingProxyType({"body_B": 0.5, "tags_B": 0.3, "title_B": 0.5})

#: What whoosh raises when the files of an index are damaged: a table of contents that is
#: not one (whoosh's own IndexError, a pickle cut short), a segment file cut short,
#: missing or overwritten (EOFError, struct.error, zlib.error, OSError ENOENT/EINVAL).
#: These, and only these, make studykb rebuild the index; anything else is a bug or an
#: error to report, and never destroys it.
_DAMAGE = (
    windex.IndexError,
    EOFError,
    __import__("pickle").UnpicklingError,
    __import__("struct").error,
    __import__("zlib").error,
    OSError,
)
_DAMAGE_ERRNOS = frozenset({errno.ENOENT, errno.EINVAL, errno.ENOTDIR, errno.EISDIR})


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` shows damage of the index files (see :data:`_DAMAGE`)."""
    if not isinstance(exc, _DAMAGE):
        return False
    if isinstance(exc, OSError) and not isinstance(exc, EOFError):
        return exc.errno in _DAMAGE_ERRNOS
    return True


def _foreign(exc: BaseException) -> bool:
    """Whether opening the index failed because its table of contents names classes of
    another studykb version (a module since moved or renamed): that index is replaced."""
    if isinstance(exc, ImportError):
        return (exc.name or "").split(".")[0] == "studykb"
    return isinstance(exc, AttributeError) and "studykb" in str(exc)


def notify(message: str) -> None:
    """One line on stderr (the contract: a rebuilt or stale index is said once, briefly)."""
    print(f"studykb: {message}", file=sys.stderr)


def compatible(ix: Any) -> bool:
    """Whether ``ix`` was made by this studykb (the same fields, this analysis)."""
    schema = ix.schema
    if tuple(sorted(schema.names())) != FIELD_NAMES:
        return False
    analyzer = getattr(schema["body"], "analyzer", None)
    return isinstance(analyzer, MixedTokenizer) and getattr(analyzer, "version", 0) == INDEX_VERSION


#: The lock file (in the index folder) held while an index is created.
CREATE_LOCK = "CREATE_LOCK"


def _storage(folder: Path) -> Any:
    # Plain file reads, not memory maps: with a map, whoosh copies every part of a
    # compound segment into memory when it opens it (~35 ms per search at 10k notes,
    # against ~8 ms); queries on an open searcher are ~10 % slower without one.
    return FileStorage(str(folder), supports_mmap=False)


def create(folder: Path) -> Any:
    """A new empty index in ``folder`` (its schema pickled unbound: see
    :mod:`studykb.search.schema`)."""
    if folder.exists() and not folder.is_dir():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    storage = _storage(folder)
    # Two processes that both found no index must not both create one: whoosh's create
    # deletes the files of the index a faster process has just started writing, and its
    # table of contents refuses a name that exists. Under this lock the second one opens
    # what the first created.
    lock = storage.lock(CREATE_LOCK)
    lock.acquire(blocking=True)
    try:
        if any(folder.glob("*.toc")):
            return storage.open_index()
        _forget_searcher(folder)  # a new index counts its generations from the start again
        return storage.create_index(make_schema())
    finally:
        lock.release()


def open_dir(folder: Path) -> Any:
    return _storage(folder).open_index()


def open_index(folder: Path) -> tuple[Any, str | None]:
    """Open the index, creating it; a damaged or foreign one is replaced (with a notice)."""
    if not folder.exists() or (folder.is_dir() and not any(folder.glob("*.toc"))):
        return create(folder), None
    try:  # damage inside the segments shows when they are read: see _retrying
        ix = open_dir(folder)
        if compatible(ix):
            return ix, None
        reason = "made by another studykb version"
    except Exception as exc:
        if _foreign(exc):
            reason = "made by another studykb version"
        elif damaged(exc):
            reason = f"damaged ({type(exc).__name__})"
        else:
            raise
    discard(folder)
    return create(folder), (
        f"search index was {reason}; rebuilding {folder.parent.name}/{folder.name}/"
    )


def discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():  # a file where the folder should be, or undeletable leftovers
        with contextlib.suppress(OSError):
            folder.unlink()


def doc_count(ix: Any) -> int:
    """Documents in the latest generation, from its table of contents (no segment opened)."""
    return sum(seg.doc_count() for seg in ix._segments())  # noqa: SLF001


# -- the searchers kept open -------------------------------------------------------------


def searchers() -> dict[str, Any]:
    """The searcher this process keeps open on each index folder (see :func:`current`)."""
    return process.once("search.searchers", dict)


def _forget_searcher(folder: Path) -> None:
    """Close the searcher kept on ``folder``: its index is being replaced."""
    searcher = searchers().pop(str(folder), None)
    if searcher is not None:
        with contextlib.suppress(Exception):
            searcher.close()


def current(folder: str) -> Any:
    """The searcher kept open on ``folder`` if it still shows the latest generation.

    Not ``Searcher.refresh()``: in whoosh3 3.54 it reuses the open segment readers
    (with their old deletions) and keeps segments the new generation merged away, so
    an edited note could be found in its old version, or twice.
    """
    kept = searchers()
    searcher = kept.get(folder)
    if searcher is None:
        return None
    try:
        if searcher.reader().generation() == latest_generation(Path(folder)):
            return searcher
    except Exception as exc:
        if not damaged(exc):
            raise
    del kept[folder]
    with contextlib.suppress(Exception):
        searcher.close()
    return None


def close(vault: Vault | None = None) -> None:
    """Close the searchers kept open by the queries (all of them without ``vault``)."""
    kept = searchers()
    folders = [str(index_dir(vault))] if vault is not None else list(kept)
    for folder in folders:
        searcher = kept.pop(folder, None)
        if searcher is not None:
            with contextlib.suppress(Exception):
                searcher.close()
