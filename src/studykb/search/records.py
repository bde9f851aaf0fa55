"""What the search index holds of each document, read from the vault state.

Each file becomes one whoosh document (and each course unit one more, keyed
``path#unit``) whose stored ``sig`` says which version of the file and of the topics it
is tagged with it reflects; :func:`records` makes them, :func:`held_in` reads the
signatures back. The text is read with the topic table's analyser (its one-word topic
names protected from the stemmer: :meth:`~studykb.vault.topics.TopicTable.analyser`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from studykb.text.analysis import fold_name
from studykb.vault.topics import TopicTable

if TYPE_CHECKING:
    from studykb.model import Document
    from studykb.vault.state import Store

#: Words are looked up in ``body``, which also holds a document's names and tags, each
#: occurrence there counting this many times (one posting list per word keeps queries fast).
NAME_WEIGHT = 5.0
TAG_WEIGHT = 2.0


def held_in(reader: Any) -> dict[str, list[str]]:
    """path -> [file signature, topic fingerprint], from the stored fields of the index."""
    out = {}
    with reader:
        for fields in reader.all_stored_fields():
            sig = fields.get("sig") or ["", ""]
            out[fields["path"]] = list(sig)
    return out


def records(
    store: Store,
    paths: list[str],
    wanted: dict[str, str],
    topics: TopicTable,
    done: dict[str, list[str]],
) -> Iterator[dict[str, Any]]:
    """The whoosh documents of the files in ``paths`` (a course's units included), read
    from the state. Empty fields are left out (they cost time).

    ``done`` receives path -> [file signature, topic fingerprint] of what was written.
    """
    for chunk in _chunks(sorted(paths)):
        texts = {path: body for path, (body, _headings) in store.texts.of(chunk).items()}
        courses = store.refs.course_links(chunk)
        by_path = store.docs.in_files(chunk)
        for path, docs in by_path.items():
            sig = [wanted.get(path, ""), topics.sig(docs)]
            done[path] = sig
            body = texts.get(path) or ""
            for doc in docs:
                record = _record(doc, body, courses.get(doc.key, set()), topics, sig)
                yield {k: v for k, v in record.items() if v}


def _record(
    doc: Document, body: str, courses: set[str], topics: TopicTable, sig: list[str]
) -> dict[str, Any]:
    if doc.type == "unit":
        body = ""
        courses = {doc.parent or doc.path}
    else:
        if doc.type == "course":
            courses = courses | {doc.key}
    covered = topics.about(doc)
    tags = list(dict.fromkeys((*doc.tags, *doc.covers)))
    return {
        "key": doc.key,
        "path": doc.path,
        "sig": sig,
        "id": doc.id,
        "type": doc.type,
        "exact": ",".join(dict.fromkeys(fold_name(n) for n in (doc.title, *doc.aliases, doc.id))),
        "title": doc.title,
        "aliases": "\n".join(doc.aliases),
        "tags": "\n".join((*tags, *(topics.texts[k] for k in covered))),
        "body": _weighted_body(doc, body, topics),
        "tag": ",".join(
            t.replace(",", " ").casefold()
            for t in dict.fromkeys((*tags, *(topics.ids[k] for k in covered)))
        ),
        "course": ",".join(sorted(courses)),
        "status": doc.status or "",
        "level": str(doc.level) if doc.level else "",
        "kind": doc.kind or "",
        "date": str(doc.date or ""),
    }


def _weighted_body(doc: Document, body: str, topics: TopicTable) -> tuple[tuple[str, float], ...]:
    """The ``body`` field's parts and their weights (see :class:`FastPositions`)."""
    tags = dict.fromkeys((*doc.tags, *doc.covers))
    named = (topics.texts[k] for k in topics.about(doc))
    return (
        ("\n".join((doc.title, *doc.aliases, doc.id)), NAME_WEIGHT),
        ("\n".join((*tags, *named)), TAG_WEIGHT),
        ("\n".join((body, _meta_text(doc.meta))), 1.0),
    )


def body_text(doc: Document, body: str, topics: TopicTable) -> str:
    """What the ``body`` field holds: names, tags and covered topics' names, the body, and
    every other front-matter value (unknown keys are searchable too)."""
    tags = dict.fromkeys((*doc.tags, *doc.covers))
    named = (topics.texts[k] for k in topics.about(doc))
    return "\n".join((doc.title, *doc.aliases, *tags, *named, body, _meta_text(doc.meta)))


#: Front-matter keys indexed in fields of their own, or naming other documents.
_OWN_KEYS = frozenset(
    {
        "id",
        "title",
        "aliases",
        "tags",
        "covers",
        "type",
        "status",
        "level",
        "date",
        "units",
        "requires",
        "refs",
        "related",
        "items",
        "course",
        "kind",
    }
)


def _meta_text(meta: dict[str, Any]) -> str:
    """Every other front-matter value as text: unknown keys are searchable too."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for key, value in (meta or {}).items():
        if key not in _OWN_KEYS:
            walk(value)
    return "\n".join(out)


def _chunks(items: list[str], size: int = 400) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
