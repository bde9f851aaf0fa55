"""One file in, its documents, references and problems out. Pure: no disk, no vault."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from studykb.model import ERROR, WARNING, Document, Parsed, Problem, Reference
from studykb.parse import site_keys, zola_keys
from studykb.parse.body import Body, is_attachment, read_body
from studykb.parse.dates import date_of
from studykb.parse.front_refs import REF_KEYS as REF_KEYS
from studykb.parse.front_refs import FrontMatter, front_refs
from studykb.parse.frontmatter import Split, split
from studykb.parse.links import RawRef
from studykb.parse.markdown import MAX_PIECES, pieces
from studykb.parse.outline import Outline, Pending, checkable
from studykb.parse.reading import GITHUB, Reading
from studykb.parse.site_urls import of_page
from studykb.parse.urls import normalize_url

LEVEL_WORDS = MappingProxyType(
    {
        "intro": 1,
        "beginner": 1,
        "入门": 1,
        "basic": 1,
        "intermediate": 3,
        "进阶": 3,
        "advanced": 5,
        "高级": 5,
        "expert": 5,
    }
)
STATUS_WORDS = MappingProxyType(
    {
        "todo": "todo",
        "reading": "reading",
        "done": "done",
        "read": "done",
        "learned": "done",
        "doing": "reading",
        "in-progress": "reading",
        "wip": "reading",
        "to-read": "todo",
        "unread": "todo",
    }
)
FOLDER_TYPES = MappingProxyType({"entries": "entry", "topics": "topic", "lists": "list"})
TYPES = ("note", "entry", "topic", "course", "list")
_SCHEME = re.compile(r"^https?://", re.I)


def parse_file(path: str, raw: bytes, reading: Reading = GITHUB) -> Parsed:
    """Parse the bytes of the file at vault-relative ``path``, by ``reading``'s rules."""
    problems: list[Problem] = []
    parts = split(_text(path, raw, problems))
    if parts.error:
        problems.append(Problem(path, parts.error[0], ERROR, "bad-front-matter", parts.error[1]))
    elif parts.warning:
        problems.append(
            Problem(path, parts.warning[0], WARNING, "bad-front-matter", parts.warning[1])
        )
    meta = zola_keys.view(parts.meta) if reading.generator == "zola" else parts.meta
    page_url, site_urls = of_page(path, meta, reading) if reading.site_urls else ("", [])
    body = _body(path, parts, reading, problems, page_url)
    ctx = FrontMatter(path, parts.fm_text, parts.fm_line, problems, reading)
    doc, refs = _document(ctx, meta, body)
    if reading.generator == "zola":
        shape = zola_keys.fence_problem(parts.fm_format)
        if shape and not parts.error:
            ctx.warn(0, "site-clash", shape)
        for key, message in zola_keys.clashes(parts.meta, path):
            ctx.warn(ctx.key_line(key), "site-clash", message)
    if site_urls:
        doc = replace(doc, site_urls=tuple(site_urls))
    docs = [doc]
    for raw_ref in body.refs:
        refs.append(_body_ref(doc.key, path, raw_ref, problems))
    outline = _check_fragments(path, body, body.the_outline(), reading, problems)
    if doc.type == "course" and "units" in meta:
        for unit, unit_refs in _units(ctx, doc, meta["units"]):
            docs.append(unit)
            refs.extend(unit_refs)
    return Parsed(
        path,
        tuple(docs),
        tuple(refs),
        tuple(problems),
        body.text,
        tuple(body.headings),
        outline.to_json(),
    )


def _text(path: str, raw: bytes, problems: list[Problem]) -> str:
    """The text of ``raw`` (UTF-8, a BOM dropped); bytes that are not UTF-8 and NULs are
    replaced, and an undecodable or empty file is said in ``problems``."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(
            Problem(
                path,
                line,
                ERROR,
                "unreadable",
                f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                f"{exc.start}); read with replacement characters",
            )
        )
        text = raw.decode("utf-8-sig", errors="replace")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if not text.strip():
        problems.append(Problem(path, 1, WARNING, "empty-file", "the file is empty"))
    return text


def _body(
    path: str, parts: Split, reading: Reading, problems: list[Problem], page_url: str = ""
) -> Body:
    """The Markdown body after the front matter, read; a body too large for the
    Markdown parser (see ``markdown.MAX_PIECES``) is not read, and paragraphs too
    complex to parse are read as plain text, each said in ``problems``."""
    size = pieces(parts.body)
    if size > MAX_PIECES:
        problems.append(
            Problem(
                path,
                parts.body_line,
                WARNING,
                "too-complex",
                f"too complex to read: about {size:,} pieces of Markdown (lines, headings, "
                f"list items, table cells, links), more than {MAX_PIECES:,}; its links, "
                "headings and text were left out",
            )
        )
        return Body(too_complex=True)
    body = read_body(parts.body, parts.body_line, path, reading, page_url)
    if body.too_complex:
        problems.append(
            Problem(
                path,
                parts.body_line,
                WARNING,
                "too-complex",
                "some paragraphs are too complex to parse in time (thousands "
                "of [ or * in one paragraph); they were read as plain text",
            )
        )
    return body


def _check_fragments(
    path: str, body: Body, outline: Outline, reading: Reading, problems: list[Problem]
) -> Outline:
    """Say in ``problems`` which links to ``#anchor`` of this page name no heading of it;
    on a page with includes they may name an included heading: the outline returned keeps
    them for the vault to check (:class:`~studykb.parse.outline.Pending`)."""
    pending = []
    for fragment in body.fragments:
        if not checkable(fragment.anchor) or outline.find(fragment.anchor, reading) is not None:
            continue
        if outline.includes:
            pending.append(Pending(fragment.text, fragment.anchor, fragment.line))
        else:
            problems.append(
                Problem(
                    path,
                    fragment.line,
                    WARNING,
                    "dangling-anchor",
                    f"{fragment.text!r}: this page has no heading {fragment.anchor!r}",
                )
            )
    return replace(outline, pending=tuple(pending)) if pending else outline


def _document(
    ctx: FrontMatter, meta: dict[str, Any], body: Body
) -> tuple[Document, list[Reference]]:
    path = ctx.path
    stem = _stem(path)
    raw_id = meta.get("id")
    explicit = isinstance(raw_id, (str, int)) and str(raw_id).strip() != ""
    doc_id = str(raw_id).strip() if explicit else stem
    dtype = _type(ctx, meta.get("type"), path)
    title = meta.get("title")
    # Obsidian names a note by its file name, whatever its first heading says
    first = None if ctx.reading.generator == "obsidian" else body.title
    title = (
        str(title).strip()
        if isinstance(title, (str, int, float)) and str(title).strip()
        else (first or stem)
    )
    if ctx.reading.nav_titles:  # mkdocs: a page's title in nav wins
        title = dict(ctx.reading.nav_titles).get(path, title)
    text_summary = (
        meta.get("summary") or meta.get("description") or meta.get("desc") or body.summary
    )
    tags = _tags(meta.get("tags", _taxonomy(meta, "tags")))
    doc = Document(
        key=path,
        path=path,
        id=doc_id,
        title=title,
        type=dtype,
        line=1,
        aliases=_names(meta, ctx.reading.generator),
        tags=_merged(tags, body.tags),
        covers=_tags(meta.get("covers")),
        date=_date(ctx, meta, "date" if "date" in meta else "created"),
        level=_level(ctx, meta.get("level")),
        status=_status(ctx, meta.get("status")),
        done=_date(ctx, meta, "done"),
        url=site_keys.link(meta, ctx.reading.generator),
        kind=str(meta["kind"]) if isinstance(meta.get("kind"), str) else None,
        minutes=_minutes(meta.get("minutes")),
        summary=_clip(str(text_summary)),
        explicit_id=explicit,
        meta=meta,
        labels=tuple(dict.fromkeys(label.name for label in body.labels)),
    )
    # a Zola file's [extra] is read through its keys, lifted to the top (zola_keys.view)
    skip = ("units", zola_keys.EXTRA) if ctx.reading.generator == "zola" else ("units",)
    refs = front_refs(ctx, doc.key, meta, skip=skip)
    for key, message in site_keys.clashes(meta, ctx.reading.generator):
        ctx.warn(ctx.key_line(key), "site-clash", message)
    return doc, refs


def _names(meta: dict[str, Any], generator: str) -> tuple[str, ...]:
    """Other names of the document (``names``; ``aliases`` where the site does not own it)."""
    out: list[str] = []
    for value in site_keys.name_values(meta, generator):
        out.extend(_strings(value))
    return tuple(dict.fromkeys(out))


def _units(
    ctx: FrontMatter, course: Document, units: Any
) -> Iterator[tuple[Document, list[Reference]]]:
    """The units listed under ``units:`` of ``course``, each with its references; a unit
    that is not a mapping (or an id) is skipped, a repeated id reported."""
    if not isinstance(units, list):
        ctx.warn(ctx.key_line("units"), "bad-field", "'units' should be a list of {id, title}")
        return
    start = ctx.key_line("units")
    seen: set[str] = set()
    for n, unit in enumerate(units, 1):
        if isinstance(unit, str):
            unit = {"id": unit}
        if not isinstance(unit, dict):
            ctx.warn(start, "bad-field", f"unit {n} of 'units' is not a mapping")
            continue
        written = str(unit.get("id") or "").strip()
        uid = written or _slug(str(unit.get("title") or f"unit-{n}"))
        needle = written or str(unit.get("title") or "").strip()[:40]
        index = ctx.find_next(needle, start) if n > 1 else ctx.find(needle, start)
        start = index
        if uid in seen:
            ctx.problems.append(
                Problem(
                    ctx.path,
                    ctx.line(index),
                    ERROR,
                    "duplicate-id",
                    f"unit id {uid!r} appears twice in this course",
                )
            )
            continue
        seen.add(uid)
        doc = _unit(ctx, course, uid, unit, index)
        yield doc, front_refs(ctx, doc.key, unit, start=index, unit_scope=True)


def _unit(
    ctx: FrontMatter, course: Document, uid: str, unit: dict[str, Any], index: int
) -> Document:
    """The document of unit ``uid`` of ``course``, written at front-matter line ``index``."""
    title = str(unit.get("title") or uid)
    return Document(
        key=f"{course.key}#{uid}",
        path=course.path,
        id=f"{course.id}#{uid}",
        title=title,
        type="unit",
        line=ctx.line(index),
        aliases=_strings([*_strings(unit.get("names")), *_strings(unit.get("aliases"))]),
        tags=_tags(unit.get("tags")),
        covers=_tags(unit.get("covers")),
        date=_date(ctx, unit, "date", index),
        level=_level(ctx, unit.get("level"), index),
        status=_status(ctx, unit.get("status"), index),
        done=_date(ctx, unit, "done", index),
        url=site_keys.link(unit, "github"),
        kind=str(unit.get("kind")) if unit.get("kind") else None,
        minutes=_minutes(unit.get("minutes")),
        summary=_clip(str(unit.get("summary") or title)),
        explicit_id=True,
        parent=course.key,
        meta=unit,
    )


def _body_ref(source: str, path: str, ref: RawRef, problems: list[Problem]) -> Reference:
    if ref.outside:
        problems.append(
            Problem(
                path, ref.line, ERROR, "outside-vault", f"link {ref.text!r} climbs out of the vault"
            )
        )
    target = normalize_url(ref.target) if ref.style == "url" else ref.target
    optional = (
        ref.optional or ref.outside or ref.style == "url" or ref.attachment or is_attachment(target)
    )
    return Reference(
        source, path, ref.line, "link", ref.text, target, ref.style, ref.anchor, optional=optional
    )


def _taxonomy(meta: dict[str, Any], name: str) -> Any:
    """Zola keeps tags under ``[taxonomies]``."""
    taxonomies = meta.get("taxonomies")
    return taxonomies.get(name) if isinstance(taxonomies, dict) else None


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    stem = name[:-3] if name.lower().endswith(".md") else name
    if stem.lower() in ("index", "_index", "readme") and "/" in path:
        return posixpath.basename(posixpath.dirname(path))  # Hugo/Zola page bundles
    return stem


def _type(ctx: FrontMatter, value: Any, path: str) -> str:
    if isinstance(value, str) and value.strip().lower() in TYPES:
        return value.strip().lower()
    if value not in (None, "") and ctx.reading.generator != "hugo":
        # Hugo's own type (the layouts a page uses) is any word: not studykb's to judge
        ctx.warn(
            ctx.key_line("type"),
            "bad-field",
            f"type {value!r} is not one of {', '.join(TYPES)}; using the folder's type",
        )
    root = ctx.reading.content_root(path)
    inside = path[len(root) + 1 :] if root != "." and path.startswith(root + "/") else path
    parts = inside.split("/")[:-1]  # content/courses/x.md of a site is a course too
    if parts and parts[0] == "courses":
        return "course"
    for folder in reversed(parts):
        if folder in FOLDER_TYPES:
            return FOLDER_TYPES[folder]
    return "note"


def _merged(tags: tuple[str, ...], inline: list[str]) -> tuple[str, ...]:
    """Front-matter tags, then the body's ``#tags`` not already among them (any case)."""
    seen = {t.casefold() for t in tags}
    out = list(tags)
    for tag in inline:
        if tag.casefold() not in seen:
            seen.add(tag.casefold())
            out.append(tag)
    return tuple(out)


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(s for s in (str(v).strip() for v in value if v is not None) if s)


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    return tuple(dict.fromkeys(t.lstrip("#") for t in _strings(value) if t.lstrip("#")))


def _date(ctx: FrontMatter, meta: dict[str, Any], key: str, index: int | None = None) -> str | None:
    """The date under ``key`` (see :mod:`studykb.parse.dates`); a number that is no
    timestamp is reported on its line."""
    date, wrong = date_of(meta.get(key))
    if wrong is not None:
        where = ctx.key_line(key) if index is None else ctx.find(key, index)
        ctx.warn(where, "bad-field", f"{key} {wrong}")
    return date


def _level(ctx: FrontMatter, value: Any, index: int | None = None) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, (int, float)) and 1 <= value <= 5:
        return int(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word.isdigit() and 1 <= int(word) <= 5:
            return int(word)
        if word in LEVEL_WORDS:
            return LEVEL_WORDS[word]
    where = ctx.key_line("level", index or 0) if index is None else ctx.find("level", index)
    ctx.warn(where, "bad-field", f"level {value!r} is not 1-5 or intro/intermediate/advanced")
    return None


def _status(ctx: FrontMatter, value: Any, index: int | None = None) -> str | None:
    if value is None or value == "":
        return None
    word = str(value).strip().lower()
    if word in STATUS_WORDS:
        return STATUS_WORDS[word]
    if word in ctx.reading.theme_statuses:  # the theme's page status (Material's "new")
        return None
    where = ctx.key_line("status") if index is None else ctx.find("status", index)
    ctx.warn(where, "bad-field", f"status {value!r} is not todo, reading or done")
    return None


def _minutes(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-") or "unit"
