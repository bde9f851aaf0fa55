"""The values every layer of studykb passes around: documents, references, problems.

Everything here is a frozen dataclass built from plain data, so it can be pickled
between processes, stored in the state database and compared in tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Document types. ``unit`` is a lecture or assignment inside a course's ``units``.
DOC_TYPES = ("note", "entry", "topic", "course", "list", "unit")

#: Kinds of reference, which are also the kinds of edge in the graph.
REF_KINDS = ("link", "ref", "requires", "related", "course", "item")
#: Edge kinds the graph adds beyond references.
EDGE_KINDS = REF_KINDS + ("covers", "about")

ERROR = "error"
WARNING = "warning"

#: The folder of daily notes (``studykb new note --today`` writes ``journal/DATE.md``).
JOURNAL = "journal"


def is_daily(path: str) -> bool:
    """Whether the file at vault path ``path`` is a daily note: a log of the day, never
    something to read next nor a page to put a related-documents sidebar in."""
    return path.startswith(JOURNAL + "/")


@dataclass(frozen=True, slots=True)
class Reference:
    """One place where a document names another."""

    source: str
    """Key of the document that holds the reference (a path, or ``path#unit``)."""
    path: str
    """Vault-relative path of the file the reference is written in."""
    line: int
    """1-based line in that file."""
    kind: str
    """``link`` (body), or the front-matter key: ``ref``, ``requires``, ``related``,
    ``course``, ``item``."""
    text: str
    """The reference as written, e.g. ``[[fsdp2|FSDP]]`` or ``requires: ddp``."""
    target: str
    """The name to resolve: a name, a vault path or a URL (already normalised)."""
    style: str
    """How to resolve ``target``: ``name``, ``path``, ``url``, ``unit`` (a unit of the
    same course) or ``code`` (a link into a tracked repository's code, ``target`` naming
    the repository)."""
    anchor: str = ""
    """The heading or block after ``#`` in the reference, if any."""
    reason: str = ""
    """Why it is needed (``requires`` items written as ``{ref, reason}``)."""
    optional: bool = False
    """A link whose failure to resolve is not a problem (site-absolute URLs without ``.md``)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in the vault, pointing at a file and line."""

    path: str
    """Vault-relative path of the file (empty for vault-wide problems)."""
    line: int
    """1-based line, 0 when the problem is not on one line."""
    severity: str
    """``error`` or ``warning``."""
    code: str
    """Stable code, e.g. ``dangling-ref`` (see the README)."""
    message: str
    """One sentence for people."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Document:
    """One document of the vault: a Markdown file, or a unit inside a course."""

    key: str
    """Unique key: the vault-relative path, or ``path#unit-id`` for a course unit."""
    path: str
    """Vault-relative path of the file, with ``/``."""
    id: str
    """Front-matter ``id``, else the file name without ``.md`` (``course#unit`` for units)."""
    title: str
    """Front-matter ``title``, else the first level-1 heading, else the file name."""
    type: str
    """One of :data:`DOC_TYPES`."""
    line: int = 1
    """Line where the document starts (for a unit, the line of its entry in ``units``)."""
    aliases: tuple[str, ...] = ()
    """Other names, e.g. the title in another language."""
    tags: tuple[str, ...] = ()
    """Labels; a tag naming a topic means the document covers it."""
    covers: tuple[str, ...] = ()
    """Topics the document teaches (same meaning as tags that name topics)."""
    date: str | None = None
    """ISO date."""
    level: int | None = None
    """1 (intro) to 5 (advanced)."""
    status: str | None = None
    """``todo``, ``reading`` or ``done``."""
    done: str | None = None
    """ISO date it became done (front matter ``done``, which ``mark`` writes)."""
    url: str | None = None
    """Address of the resource (entries and courses)."""
    kind: str | None = None
    """Kind of an entry: article, tutorial, talk, ..."""
    minutes: int | None = None
    """Estimated reading time, where given."""
    summary: str = ""
    """The first lines of the body (or the unit's title), for hovers and sidebars."""
    explicit_id: bool = False
    """Whether ``id`` was written in the front matter."""
    parent: str | None = None
    """For a unit: the key of its course."""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """The whole front matter, made JSON-safe; unknown keys are kept here."""
    labels: tuple[str, ...] = ()
    """Labels the body defines (d2lbook ``:label:``), which ``:numref:`` and ``:ref:`` name."""
    site_urls: tuple[str, ...] = ()
    """Site paths the generator serves the page at (Hugo: its URL, then its ``aliases``),
    as site-absolute links are compared (``/posts/a-post``); empty elsewhere."""

    @property
    def known_status(self) -> bool:
        return self.status == "done"

    def brief(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "title": self.title, "type": self.type}


@dataclass(frozen=True, slots=True)
class Parsed:
    """What parsing one file yields; stored per file so an edit re-parses only that file."""

    path: str
    documents: tuple[Document, ...]
    references: tuple[Reference, ...]
    problems: tuple[Problem, ...]
    text: str
    """Plain text of the body, for the full-text index."""
    headings: tuple[str, ...] = ()
    """Headings of the body, for ``[[doc#heading]]`` checks and completion."""
    outline: str = ""
    """Headings as written and labels, with their lines, as JSON (``parse.outline.Outline``):
    what ``#anchor`` links are checked against."""


def fold(name: str) -> str:
    """A name as names are compared: trimmed and case-folded."""
    return name.strip().casefold()
