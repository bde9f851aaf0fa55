"""The state database's tables (their SQL) and the rows that cross module boundaries:
what a parsed file adds (:class:`ParsedRows`), a resolved reference as an edge
(:class:`Edge`), and a document or reference as a row and back."""

from __future__ import annotations

import json
from dataclasses import fields
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

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS journal(generation INTEGER PRIMARY KEY, paths TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS docs(
    key TEXT PRIMARY KEY, path TEXT, id TEXT, title TEXT, type TEXT, explicit INTEGER,
    names TEXT, url TEXT, data BLOB);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_ids ON docs(lower(id), path) WHERE explicit = 1 AND type != 'unit';
CREATE INDEX IF NOT EXISTS docs_topics ON docs(key, id, title, names) WHERE type = 'topic';
CREATE INDEX IF NOT EXISTS docs_type ON docs(type, key);
CREATE TABLE IF NOT EXISTS refs(
    n INTEGER PRIMARY KEY, source TEXT, path TEXT, line INTEGER, kind TEXT, text TEXT,
    target TEXT, style TEXT, anchor TEXT, reason TEXT, optional INTEGER,
    lookup TEXT, lookup2 TEXT, target_key TEXT, state TEXT, note TEXT);
CREATE INDEX IF NOT EXISTS refs_path ON refs(path);
CREATE INDEX IF NOT EXISTS refs_target ON refs(target_key);
CREATE INDEX IF NOT EXISTS refs_lookup ON refs(lookup);
CREATE INDEX IF NOT EXISTS refs_lookup2 ON refs(lookup2) WHERE lookup2 IS NOT NULL;
CREATE INDEX IF NOT EXISTS refs_bad ON refs(state) WHERE state IN ('dangling', 'ambiguous');
CREATE INDEX IF NOT EXISTS refs_requires ON refs(source, target_key, path, line)
    WHERE kind = 'requires';
CREATE INDEX IF NOT EXISTS refs_course ON refs(path, target_key) WHERE kind = 'course';
CREATE TABLE IF NOT EXISTS problems(
    path TEXT, line INTEGER, severity TEXT, code TEXT, message TEXT, origin TEXT);
CREATE INDEX IF NOT EXISTS problems_path ON problems(path);
CREATE TABLE IF NOT EXISTS texts(path TEXT PRIMARY KEY, headings TEXT, body TEXT, outline TEXT);
CREATE TABLE IF NOT EXISTS anchors(path TEXT, line INTEGER, message TEXT, target TEXT);
CREATE INDEX IF NOT EXISTS anchors_path ON anchors(path);
CREATE INDEX IF NOT EXISTS anchors_target ON anchors(target);
CREATE TABLE IF NOT EXISTS names(name TEXT, level INTEGER, key TEXT, path TEXT);
CREATE INDEX IF NOT EXISTS names_name ON names(name);
CREATE INDEX IF NOT EXISTS names_path ON names(path);
"""


def secondary_indexes() -> list[tuple[str, str]]:
    """(name, CREATE statement) of every index in the schema (a bulk load drops them)."""
    out = []
    for statement in SCHEMA.split(";"):
        statement = statement.strip()
        if statement.startswith("CREATE INDEX"):
            name = statement.split("EXISTS", 1)[1].split()[0]
            out.append((name, statement))
    return out


# -- the rows of the state, as they are inserted (positional: SQLite takes tuples) ----------
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


#: Connections a forked process inherited (see :meth:`Store.reconnect`), never closed.
