"""whoosh's pickles read with an unpickler that can only build the index's own objects.

whoosh (3.54, pinned) keeps its table of contents (the schema, the segment list), the
directory of a compound segment, posting block headers, inlined postings and stored
fields as pickles. The state folder they live in is trusted only when studykb provably
made it (:mod:`studykb.vault.statedir`); this is the second wall behind that one: should
a pickle planted by someone else ever be read, it cannot run code. Every place whoosh
unpickles from disk is given :func:`loads`/:func:`load` instead of :mod:`pickle`'s, which
resolve only the classes listed in :data:`ALLOWED` (what studykb's indexes hold: field
types, formats, the analyser, segments) and plain data; any other global (a function
such as ``os.system``, ``builtins.open`` or ``eval``) fails as :class:`pickle.UnpicklingError`,
which the index treats as damage: it is set aside and rebuilt. Old table-of-contents
formats (whoosh's legacy loaders, which unpickle freely) are not read at all.

:func:`install` is called once by :mod:`studykb.search.store` before any index is opened.
"""

from __future__ import annotations

import io
import pickle
from types import SimpleNamespace
from typing import Any

#: (module, name) of every global a studykb index's pickles name (found by recording a
#: build, searches and a parallel build): classes of the index's own objects, and three
#: functions that only make plain values (bytes, an object of a listed class, a regex).
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {
        # plain values: pickle protocol 2 writes bytes as _codecs.encode(str, "latin1")
        ("builtins", "int"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("_codecs", "encode"),
        ("collections", "defaultdict"),
        ("copyreg", "_reconstructor"),
        ("re", "_compile"),  # a tokenizer's pattern
        # the schema: fields, formats, columns, analysers
        ("whoosh.fields", "Schema"),
        ("whoosh.fields", "ID"),
        ("whoosh.fields", "IDLIST"),
        ("whoosh.fields", "STORED"),
        ("whoosh.fields", "KEYWORD"),
        ("whoosh.fields", "TEXT"),
        ("whoosh.fields", "NUMERIC"),
        ("whoosh.fields", "BOOLEAN"),
        ("whoosh.fields", "DATETIME"),
        ("whoosh.formats", "Existence"),
        ("whoosh.formats", "Frequency"),
        ("whoosh.formats", "Positions"),
        ("whoosh.columns", "VarBytesColumn"),
        ("whoosh.analysis.analyzers", "CompositeAnalyzer"),
        ("whoosh.analysis.tokenizers", "IDTokenizer"),
        ("whoosh.analysis.tokenizers", "RegexTokenizer"),
        ("whoosh.analysis.filters", "LowercaseFilter"),
        ("whoosh.analysis.filters", "StripFilter"),
        ("whoosh.analysis.filters", "StopFilter"),
        ("whoosh.analysis.morph", "StemFilter"),
        # the segment list
        ("whoosh.codec.whoosh3", "W3Codec"),
        ("whoosh.codec.whoosh3", "W3Segment"),
    }
)
#: Modules of studykb's own classes an index holds (the schema's tokenizer, positions
#: format, scoring): any class defined there, no function.
OWN_MODULES = ("studykb.search.schema", "studykb.search.coverage", "studykb.search.scoring")


class _Guarded(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        if module in OWN_MODULES:
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"the search index names {module}.{name}: not its own")


def load(file: Any) -> Any:
    """:func:`pickle.load` that builds only what :data:`ALLOWED` lists."""
    return _Guarded(file).load()


def loads(data: bytes) -> Any:
    """:func:`pickle.loads` that builds only what :data:`ALLOWED` lists."""
    return _Guarded(io.BytesIO(data)).load()


#: What the patched modules see as ``pickle``: this module's readers, pickle's writers.
_PICKLE = SimpleNamespace(
    loads=loads,
    load=load,
    dumps=pickle.dumps,
    dump=pickle.dump,
    PicklingError=pickle.PicklingError,
    UnpicklingError=pickle.UnpicklingError,
    HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL,
)


def install() -> None:
    """Give every reader of whoosh's pickles :func:`loads`/:func:`load` (idempotent)."""
    # deferred: whoosh loads in ~0.1 s; only searching needs it
    import whoosh.codec.whoosh3 as w3

    # deferred: whoosh loads in ~0.1 s; only searching needs it
    import whoosh.filedb.fileindex as fileindex

    # deferred: whoosh loads in ~0.1 s; only searching needs it
    import whoosh.filedb.structfile as structfile

    # deferred: whoosh loads in ~0.1 s; only searching needs it
    import whoosh.index as windex

    # (whoosh.filedb.misc and whoosh.filedb.pools, which also unpickle, do not import in
    # whoosh3 3.54: dead code that nothing can reach)
    structfile.load = load  # StructFile.read_pickle: TOC segments, compound directories,
    #                         posting block headers, column block lengths
    w3.loads = loads  # stored fields, inlined postings
    windex.pickle = fileindex.pickle = _PICKLE  # the TOC's schema
    windex.toc_loaders.clear()  # legacy formats, read with an unrestricted unpickler


__all__ = ["ALLOWED", "install", "load", "loads"]
