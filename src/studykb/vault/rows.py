"""Turning one parsed file into the rows of the state database (runs in worker processes)."""

from __future__ import annotations

import json
import traceback

from studykb import parse
from studykb.model import ERROR, Document, Parsed
from studykb.parse.reading import Reading
from studykb.vault.outside import is_outside, parse_outside
from studykb.vault.resolve import lookups
from studykb.vault.state.rows import ParsedRows, ProblemRow, doc_row, ref_row

#: The content hash stored for a file that could not be read (never a blake2b hex
#: digest); its mtime and size are stored as -1, so every refresh tries it again (a
#: ``chmod`` that makes it readable changes neither).
UNREAD = "unreadable"


def unread_rows(path: str, why: str) -> ParsedRows:
    """The rows of a note the scan found but that cannot be read (permission denied, an
    I/O error): an ``unreadable`` error on it, and its document by file name, so links to
    it still resolve and nothing it held is kept from an earlier read."""
    name = path.rsplit("/", 1)[-1][:-3]
    doc = Document(key=path, path=path, id=name, title=name, type="note")
    problem: ProblemRow = (path, 0, ERROR, "unreadable", f"cannot read: {why}")
    return ParsedRows(path, -1, -1, UNREAD, [doc_row(doc)], [], [problem], (path, "", "[]", ""))


def parse_file(path: str, raw: bytes, reading: Reading) -> Parsed:
    """:func:`studykb.parse.parse_file`, loaded on first use: a command whose refresh
    parses nothing never loads markdown-it, YAML and python-frontmatter."""
    return parse.parse_file(path, raw, reading)


def parse_rows(item: tuple[str, bytes, str, int, int, Reading]) -> ParsedRows:
    """(path, raw bytes, content hash, mtime, size, reading rules) -> the rows the file adds
    to the state.

    Never raises: a parser bug becomes an ``unreadable`` problem on that file, so one
    broken note never stops a build.
    """
    path, raw, digest, mtime, size, reading = item
    try:
        if is_outside(digest):  # a tracked repository's note, ``NAME:path``
            parsed = parse_outside(path, raw, reading, parse_file)
        else:
            parsed = parse_file(path, raw, reading)
    except Exception as exc:  # noqa: BLE001 - a build must survive any one file
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        problem: ProblemRow = (path, 1, ERROR, "unreadable", f"could not be parsed: {detail}")
        doc = Document(
            key=path,
            path=path,
            id=path.rsplit("/", 1)[-1][:-3],
            title=path.rsplit("/", 1)[-1][:-3],
            type="note",
        )
        return ParsedRows(
            path, mtime, size, digest, [doc_row(doc)], [], [problem], (path, "", "[]", "")
        )
    docs = [doc_row(d) for d in parsed.documents]
    refs = [
        ref_row(r, *lookups(r.source, r.path, r.target, r.style, r.text)) for r in parsed.references
    ]
    problems = [(p.path, p.line, p.severity, p.code, p.message) for p in parsed.problems]
    text = (path, parsed.text, json.dumps(parsed.headings, ensure_ascii=False), parsed.outline)
    return ParsedRows(path, mtime, size, digest, docs, refs, problems, text)
