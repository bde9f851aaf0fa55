"""The rows of the state, named: what a parsed file adds (:class:`ParsedRows`), what the
tables give back (a file's stamp, a document's names, a reference with its resolution,
an edge), and a document or reference as a row and back.

The rows a parsing worker sends for each document and reference (:data:`DocRow`,
:data:`RefRow`, :data:`ProblemRow`, :data:`TextRow`) stay plain tuples: a first build of
10k notes sends ~100k of them between processes, and a named tuple costs ~0.2 s more to
pickle and ~0.2 s more to unpickle per 100k (measured). Only the state package takes
them apart (:mod:`studykb.vault.state.docs`, :mod:`~studykb.vault.state.refs`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import NamedTuple

from studykb.model import Document, Reference
from studykb.vault import damage
from studykb.vault.resolve import names_json

DOC_FIELDS = tuple(f.name for f in fields(Document))
REF_FIELDS = tuple(f.name for f in fields(Reference))
#: Document fields held as tuples (JSON gives lists back).
_TUPLE_FIELDS = tuple(
    i for i, f in enumerate(DOC_FIELDS) if f in ("aliases", "tags", "covers", "labels", "site_urls")
)

# -- the rows as a parsing worker makes them (positional: see the module's docstring) -------
#: ``files``: path, mtime_ns, size, content hash.
FileRow = tuple[str, int, int, str]
#: ``docs``: key, path, id, title, type, explicit id (0/1), aliases (JSON), url, every field
#: of the document (JSON).
DocRow = tuple[str, str, str, str, str, int, str, "str | None", str]
#: ``refs`` as parsed: source, path, line, kind, text, target, style, anchor, reason,
#: optional (0/1), lookup, second lookup (None when there is none).
RefRow = tuple[str, str, int, str, str, str, str, str, str, int, str, "str | None"]
#: ``problems`` as parsed: path, line, severity, code, message.
ProblemRow = tuple[str, int, str, str, str]
#: ``texts``: path, plain text of the body, headings (JSON), outline (JSON, see
#: ``parse.outline``).
TextRow = tuple[str, str, str, str]
#: A resolved reference as the graph reads it: source, target, kind, path, line, reason.
EdgeRow = tuple[str, str, str, str, int, str]
#: What resolving a reference gives: the target key or None, the state, a note.
Resolution = tuple["str | None", str, str]


class ParsedRows(NamedTuple):
    """One file parsed into the rows it adds to the state."""

    path: str
    mtime_ns: int
    size: int
    digest: str
    """The content hash (blake2b, 16 bytes, hex)."""
    docs: list[DocRow]
    refs: list[RefRow]
    problems: list[ProblemRow]
    text: TextRow


# -- the rows the tables give back ------------------------------------------------------------
class FileStamp(NamedTuple):
    """What the state knows of a file on disk (``files``)."""

    mtime_ns: int
    size: int
    hash: str


class StoredFile(NamedTuple):
    """A file as the derived structures compare it: path, mtime, content hash."""

    path: str
    mtime_ns: int
    hash: str


class DocNames(NamedTuple):
    """What a document answers to, as the name table is built from it (``docs``)."""

    key: str
    path: str
    id: str
    title: str
    type: str
    names: str
    """Aliases (and d2lbook labels, site URLs) as JSON."""
    url: str | None


class TopicRow(NamedTuple):
    """A topic document as the topic table is built from it."""

    key: str
    id: str
    title: str
    names: str
    """Aliases as JSON."""


class StoredProblem(NamedTuple):
    """A row of ``problems``: a problem and which step of a write found it."""

    path: str
    line: int
    severity: str
    code: str
    message: str
    origin: str
    """``scan``, ``parse``, ``vault`` (duplicate ids, loops) or ``attach``."""


class AnchorProblem(NamedTuple):
    """A row of ``anchors``: a ``[[note#heading]]`` whose note has no such heading."""

    path: str
    line: int
    message: str
    target: str
    """The path of the note the reference leads to."""


class Anchored(NamedTuple):
    """A reference to check for ``[[note#heading]]``."""

    path: str
    line: int
    text: str
    anchor: str
    target: str
    """The path of the note it resolves to."""


class Requires(NamedTuple):
    """A ``requires`` reference as the loop check reads it."""

    source: str
    target: str | None
    path: str
    line: int


class ToResolve(NamedTuple):
    """A reference as resolving it again reads it (``refs``)."""

    n: int
    source: str
    path: str
    target: str
    style: str
    anchor: str
    optional: int
    text: str
    kind: str
    target_key: str | None
    """What it resolved to before."""


class Edge(NamedTuple):
    """A resolved reference, as the graph and the features read it."""

    source: str
    """Key of the document holding the reference."""
    target: str
    """Key of the document it resolves to."""
    kind: str
    """``link``, ``ref``, ``requires``, ``related``, ``course`` or ``item``."""
    path: str
    """The file the reference is written in."""
    line: int
    reason: str
    """Why it is needed (``requires`` with a reason), else empty."""


@dataclass(frozen=True, slots=True)
class Link:
    """A reference together with what it resolved to."""

    ref: Reference
    target: str | None
    """Key of the target document, or None."""
    state: str
    """ok, ambiguous, dangling, external, outside or asset."""
    note: str = ""


@dataclass(frozen=True)
class AttachmentRef:
    """A reference to a file that is not a document, as stored."""

    path: str
    line: int
    text: str
    target: str
    style: str


# -- a document and a reference as rows --------------------------------------------------------
def doc_row(doc: Document) -> DocRow:
    """A document as a row of ``docs``; ``names`` holds its aliases (and d2lbook labels) as
    JSON, ``data`` every field as a JSON array."""
    data = json.dumps([getattr(doc, f) for f in DOC_FIELDS], ensure_ascii=False)
    return (
        doc.key,
        doc.path,
        doc.id,
        doc.title,
        doc.type,
        int(doc.explicit_id),
        names_json(doc.aliases, doc.labels, doc.site_urls),
        doc.url,
        data,
    )


def doc_names(row: DocRow) -> DocNames:
    """What the document of a ``docs`` row answers to."""
    key, path, did, title, dtype, _explicit, names, url, _data = row
    return DocNames(key, path, did, title, dtype, names, url)


def doc_from_blob(data: str | bytes) -> Document:
    """A document from the ``data`` column of ``docs`` (VaultError if it is not one)."""
    try:
        values = json.loads(data)
        for i in _TUPLE_FIELDS:
            values[i] = tuple(values[i])
        return Document(*values)
    except (ValueError, TypeError, IndexError, KeyError):
        raise damage.StateDamaged(
            "the state holds a row that is not a document; it was changed by "
            "something other than studykb.",
            "a row is not a document",
            hint="Delete the .studykb folder: it only holds what studykb can rebuild.",
        ) from None


def ref_row(ref: Reference, lookup: str, lookup2: str) -> RefRow:
    """A reference as a row of ``refs`` (a missing second lookup is NULL: left out of
    its index, nine rows in ten)."""
    return (
        ref.source,
        ref.path,
        ref.line,
        ref.kind,
        ref.text,
        ref.target,
        ref.style,
        ref.anchor,
        ref.reason,
        int(ref.optional),
        lookup,
        lookup2 or None,
    )


def problem_row(path: str, line: int, severity: str, code: str, message: str) -> ProblemRow:
    """A problem a parse found, as a row of ``problems``."""
    return (path, line, severity, code, message)
