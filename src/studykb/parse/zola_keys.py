"""Front matter in a Zola site: Zola's keys at the top, studykb's under ``[extra]``.

Zola deserialises a page's front matter into ``PageFrontMatter`` and a section's
(``_index.md``) into ``SectionFrontMatter`` (getzola/zola,
``components/content/src/front_matter/page.rs`` and ``section.rs``). A section refuses
any other top-level key (``deny_unknown_fields``, since Zola 0.19): ``status = "done"`` in
an ``_index.md`` makes ``zola build`` fail with "unknown field `status`". A page ignores
one, so its templates never see it. Keys of one's own go in ``[extra]``
(``page.extra.status``), tags in ``[taxonomies]`` (pages only).

So in a Zola site studykb reads its keys from ``[extra]`` (and, for files written before,
from the top level, ``[extra]`` winning), writes them there (``new``, ``mark``), and
``check`` warns (``site-clash``) of a top-level key that breaks the build or that Zola
drops. Zola's own keys (``title``, ``date``, ``aliases``, ``path``, ``slug``, ``draft``,
``authors``, ``description``...) keep Zola's meaning.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any

#: The table that holds a page's or section's own keys.
EXTRA = "extra"

#: The top-level keys of ``PageFrontMatter`` (the fields serde reads; ``skip_deserializing``
#: ones left out), getzola/zola ``components/content/src/front_matter/page.rs`` at commit
#: b2242262b1df3e238b0b70dce3ae3a5bf3a042e9 (the same set since 0.19).
PAGE_KEYS = frozenset(
    {
        "title",
        "description",
        "updated",
        "date",
        "draft",
        "render",
        "slug",
        "path",
        "taxonomies",
        "weight",
        "authors",
        "aliases",
        "template",
        "in_search_index",
        "extra",
    }
)

#: The top-level keys of ``SectionFrontMatter`` (``deny_unknown_fields``), same file's
#: sibling ``section.rs`` at the same commit.
SECTION_KEYS = frozenset(
    {
        "title",
        "description",
        "sort_by",
        "weight",
        "draft",
        "template",
        "paginate_by",
        "paginate_reversed",
        "paginate_path",
        "insert_anchor_links",
        "render",
        "redirect_to",
        "in_search_index",
        "transparent",
        "page_template",
        "aliases",
        "generate_feeds",
        "extra",
    }
)

#: studykb's keys (docs/guide/vault-format.md) that are not Zola's: read from ``[extra]``.
STUDYKB_KEYS = frozenset(
    {
        "id",
        "type",
        "names",
        "tags",
        "covers",
        "requires",
        "refs",
        "related",
        "created",
        "level",
        "status",
        "done",
        "link",
        "url",
        "kind",
        "source",
        "course",
        "units",
        "items",
        "minutes",
        "summary",
        "desc",
    }
)


def is_section(path: str) -> bool:
    """Whether the file at ``path`` is a Zola section (``_index.md``, any language's)."""
    name = posixpath.basename(path)
    return name == "_index.md" or (name.startswith("_index.") and name.endswith(".md"))


def allowed(path: str) -> frozenset[str]:
    """The top-level keys Zola accepts in the file at ``path``."""
    return SECTION_KEYS if is_section(path) else PAGE_KEYS


def top_level(key: str, path: str) -> bool:
    """Whether studykb writes ``key`` at the top of the file at ``path`` (a key Zola owns
    there, and ``tags`` of a page under ``[taxonomies]``), rather than under ``[extra]``."""
    return key in allowed(path) and key != "tags"


def view(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The front matter as studykb reads it in a Zola site: the top-level keys, with those
    of ``[extra]`` that are not Zola's own names over them (``extra.status`` is the
    ``status``; an ``extra.title`` is not the title). ``extra`` itself stays."""
    extra = meta.get(EXTRA)
    out = dict(meta)
    if isinstance(extra, Mapping):
        for key, value in extra.items():
            if key not in PAGE_KEYS:
                out[str(key)] = value
    return out


def fence_problem(fm_format: str) -> str | None:
    """What ``zola build`` says of a file whose front matter is ``fm_format`` (``""``
    when it has none), or None: Zola reads only TOML (``+++``) and YAML (``---``), and a
    file under ``content/`` without either fails the build."""
    if fm_format in ("toml", "yaml"):
        return None
    if fm_format == "json":
        return "zola build fails on JSON front matter: Zola reads TOML (+++) or YAML (---)"
    return (
        'zola build fails on a file without front matter ("Did you forget to add `+++` or '
        '`---`?"): open it with +++ and +++ lines, even with nothing between them'
    )


def clashes(meta: Mapping[str, Any], path: str) -> Iterator[tuple[str, str]]:
    """(key, message) for each top-level key of the file at ``path`` that Zola refuses
    (a section's unknown keys, a value of the wrong shape) or drops (a page's studykb key)."""
    section = is_section(path)
    keys = allowed(path)
    for key, value in meta.items():
        if key not in keys:
            if section:
                yield (
                    key,
                    f"zola build fails on this section: its front matter may not have "
                    f"{key!r} at the top level (unknown field); put it under [extra]",
                )
            elif key in STUDYKB_KEYS:
                where = "[taxonomies]" if key == "tags" else "[extra]"
                yield (
                    key,
                    f"Zola ignores {key!r} at the top level of a page (its templates "
                    f"never see it); put it under {where}",
                )
            continue
        problem = _shape(key, value)
        if problem:
            yield key, f"zola build fails on {key!r}: {problem}"


def _shape(key: str, value: Any) -> str | None:
    """Why Zola cannot read ``value`` as its ``key``, or None."""
    if key in ("authors", "aliases"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "Zola wants a list of strings"
    elif key == "taxonomies":
        if not isinstance(value, Mapping) or not all(
            isinstance(v, list) and all(isinstance(t, str) and t.strip() for t in v)
            for v in value.values()
        ):
            return 'Zola wants a table of lists of names, e.g. tags = ["a"]'
    elif key in ("draft", "render", "in_search_index", "transparent", "paginate_reversed"):
        if not isinstance(value, bool):
            return "Zola wants true or false"
    elif key in ("weight", "paginate_by"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return "Zola wants a whole number"
    elif key in ("slug", "path") and value == "":
        return "Zola refuses an empty one"
    elif key == EXTRA and not isinstance(value, Mapping):
        return "Zola wants a table"
    return None


# -- a new file's front matter, shaped for Zola ---------------------------------------------------

_YAML_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#:'"-][^:#]*?))[ \t]*:(?:[ \t]|$)""")
_TOML_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))[ \t]*=""")
_TOML_TABLE = re.compile(r"^\[\s*([A-Za-z0-9_-]+)\s*\]\s*(?:#.*)?$")


class ShapeError(ValueError):
    """The front matter could not be put in Zola's shape without changing what it says."""


def shaped(fm: str, fmt: str, path: str) -> str:
    """The front matter ``fm`` (``yaml`` or ``toml``, each line ending in a newline) of a
    new file at ``path``, with studykb's top-level keys moved under ``extra`` and a page's
    ``tags`` under ``taxonomies`` (a section's under ``extra``: it has no taxonomies).
    Each key moves with the comment lines above it; values, comments and order otherwise
    stay. Raises :class:`ShapeError` when the result would not read as the same keys."""
    if fmt not in ("yaml", "toml"):
        raise ShapeError(f"{fmt or 'no'} front matter cannot hold Zola's [extra]")
    toml = fmt == "toml"
    head, blocks, tables = _blocks(fm, toml)
    stay: list[str] = list(head)
    moved: dict[str, list[str]] = {EXTRA: [], "taxonomies": []}
    for key, lines in blocks:
        if key is None or top_level(key, path) or key in (EXTRA, "taxonomies"):
            stay.extend(lines)
        elif key == "tags" and not is_section(path):
            moved["taxonomies"].extend(lines)
        else:
            moved[EXTRA].extend(lines)
    out = "".join(stay)
    rest = tables
    for table in ("taxonomies", EXTRA):
        lines = moved[table]
        if not lines:
            continue
        if toml:
            rest = _into_toml_table(rest, table, lines)
        else:
            out = _into_yaml_block(out, table, lines)
    result = out + rest
    _prove(fm, result, toml, path)
    return result


def _blocks(fm: str, toml: bool) -> tuple[list[str], list[tuple[str | None, list[str]]], str]:
    """(lines before the first key, [(key, its lines with the comments above it)], the
    TOML tables after the top-level keys, as text)."""
    lines = fm.splitlines(keepends=True)
    head: list[str] = []
    blocks: list[tuple[str | None, list[str]]] = []
    pending: list[str] = []
    tables = ""
    key_re = _TOML_KEY if toml else _YAML_KEY
    for i, line in enumerate(lines):
        stripped = line.strip()
        if toml and stripped.startswith("["):
            tables = "".join(pending + lines[i:])
            pending = []
            break
        if not stripped or stripped.startswith("#"):
            pending.append(line)
            continue
        found = key_re.match(line)
        if found:
            key = next(g for g in found.groups() if g is not None).strip()
            blocks.append((key, [*pending, line]))
        elif blocks:
            blocks[-1][1].extend([*pending, line])
        else:
            head.extend([*pending, line])
        pending = []
    if pending:
        blocks.append((None, pending))
    return head, blocks, tables


def _into_yaml_block(out: str, table: str, lines: list[str]) -> str:
    """``out`` with ``lines`` (top-level YAML) indented as keys of the block ``table:``,
    made at the end when ``out`` has none."""
    indented = "".join(("  " + line) if line.strip() else line for line in lines)
    found = re.search(rf"^{re.escape(table)}:[ \t]*(?:#[^\n]*)?\n", out, re.M)
    if found is None:
        return out + f"{table}:\n" + indented
    # after the block's own (indented) lines
    end = found.end()
    for m in re.finditer(r"[^\n]*\n", out[end:]):
        text = m.group()
        if text.strip() and not text.startswith((" ", "\t")):
            break
        end += len(text)
    return out[:end] + indented + out[end:]


def _into_toml_table(tables: str, table: str, lines: list[str]) -> str:
    """The TOML tables text with ``lines`` (keys) at the top of ``[table]``, added at the
    end when there is none."""
    rows = tables.splitlines(keepends=True)
    for i, row in enumerate(rows):
        found = _TOML_TABLE.match(row.strip())
        if found and found.group(1) == table:
            return "".join(rows[: i + 1] + lines + rows[i + 1 :])
    gap = "\n" if tables and not tables.endswith("\n\n") else ""
    lead = "" if not tables else gap
    return tables + lead + f"[{table}]\n" + "".join(lines)


def _prove(old: str, new: str, toml: bool, path: str) -> None:
    """ShapeError unless ``new`` reads as ``old`` with the moved keys in their tables."""
    try:
        before = _read(old, toml)
        after = _read(new, toml)
    except ValueError as exc:
        raise ShapeError(f"the front matter does not read after the move: {exc}") from None
    want: dict[str, Any] = {}
    extra = dict(before.get(EXTRA) or {})
    taxonomies = dict(before.get("taxonomies") or {})
    for key, value in before.items():
        if top_level(key, path) or key in (EXTRA, "taxonomies"):
            want[key] = value
        elif key == "tags" and not is_section(path):
            taxonomies[key] = value
        else:
            extra[key] = value
    if taxonomies:
        want["taxonomies"] = taxonomies
    if extra:
        want[EXTRA] = extra
    if after != want:
        raise ShapeError("moving studykb's keys under [extra] would change their values")


def _read(text: str, toml: bool) -> dict[str, Any]:
    # deferred: only this path reads TOML
    import tomllib

    # deferred: PyYAML loads only where YAML is read
    import yaml

    try:
        data = tomllib.loads(text) if toml else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ValueError(str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("not a mapping of keys")
    return data
