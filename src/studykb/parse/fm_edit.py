"""Setting front-matter values in a user's file, keeping every other byte, and proving it.

Used by ``mark`` (``status``, and the ``done`` date) for a document or one course unit:

1. a line edit: only the line holding the key is replaced (or one line is added), so
   BOM, line ends, comments, quoting and key order stay as they were;
2. where that cannot be proven right (flow style ``{title: X, status: todo}``, a value
   on the next line, a key inside a multi-line string), a round-trip edit with
   ruamel.yaml (YAML) or tomlkit (TOML), which keep comments and layout.

Each result is proven (:mod:`studykb.parse.fm_check`); when neither way passes, nothing is
written and :class:`EditError` says why.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from studykb.parse.fm_check import Changes, EditError, differs, expected, load
from studykb.parse.fm_json import json_remove, json_set, json_value
from studykb.parse.fm_roundtrip import round_trip
from studykb.parse.frontmatter import fences, split

BOM = b"\xef\xbb\xbf"


def set_values(
    raw: bytes, changes: Changes, unit: str | None = None, table: str | None = None
) -> bytes:
    """``raw`` with ``changes`` set in its front matter (or in course unit ``unit``'s entry).

    ``table`` (Zola's ``extra``) puts them in that table of the front matter (TOML
    ``[extra]``, YAML ``extra:``), made when missing; units are then that table's too.
    A file without front matter gets a YAML block at the top. Raises :class:`EditError`
    or ``UnicodeDecodeError``.
    """
    bom = BOM if raw.startswith(BOM) else b""
    text = raw[len(bom) :].decode("utf-8")
    parts = split(text)
    if parts.error:
        line, message = parts.error
        raise EditError(
            f"line {line}: {message}; fix it first (or an editor may be saving the file)"
        )
    if not parts.fm_format:
        if unit:
            raise EditError("this course has no front matter, so it has no units to mark")
        nl = newline(text)
        pad = "  " if table else ""
        head = (
            "---"
            + nl
            + (f"{table}:{nl}" if table else "")
            + "".join(
                f"{pad}{k}: {_yaml_scalar(v)}{nl}" for k, v in changes.items() if v is not None
            )
        )
        return bom + (head + "---" + nl + text).encode("utf-8")
    old = load(text)
    want = expected(old, changes, unit, table)
    tried: list[str] = []
    for name, edit in (("line edit", _line_edit), ("round-trip edit", round_trip)):
        try:
            new = edit(text, parts.fm_format, changes, unit, table)
        except EditError as exc:
            tried.append(f"{name}: {exc}")
            continue
        if new is not None:
            problem = differs(text, new, want)
            if problem is None:
                return bom + new.encode("utf-8")
            tried.append(f"{name}: {problem}")
    raise EditError("cannot change the front matter safely (" + "; ".join(tried) + ")")


def newline(text: str) -> str:
    """The line end ``text`` uses (its first one): a line added must match it, so a
    file of CR line ends (classic Mac) never gets an LF."""
    found = re.search(r"\r\n|\r|\n", text)
    return found.group() if found else "\n"


# -- way 1: one line ---------------------------------------------------------------------------


def _line_edit(
    text: str, fmt: str, changes: Changes, unit: str | None, table: str | None = None
) -> str | None:
    if table is not None:
        if fmt == "json":
            raise EditError(f"JSON front matter has no [{table}] table to edit by line")
        return _table_line_edit(text, fmt, changes, unit, table)
    if fmt == "json":
        for key, value in changes.items():
            if value is None:
                text = json_remove(text, key, unit)
            else:
                text = json_set(text, key, json_value(value), unit)
        return text
    toml = fmt == "toml"
    previous: str | None = None  # a key added goes after the one set before it
    for key, value in changes.items():
        nl = newline(text)
        lines = text.splitlines(keepends=True)
        start, close = _fences(lines)
        base = "" if toml else _base_indent(lines[start + 1 : close])
        if value is None:
            lines = _remove(lines, start + 1, close, unit, key, toml, base)
        else:
            shown = _toml_value(value) if toml else _yaml_scalar(value)
            if unit:
                lines = _unit(lines, start + 1, close, unit, key, shown, toml, nl, previous)
            else:
                lines = _top(lines, start + 1, close, key, shown, toml, nl, previous, base)
        previous = key
        text = "".join(lines)
    return text


def _fences(lines: list[str]) -> tuple[int, int]:
    """(index of the opening fence, index of the closing fence) of the front matter."""
    found = fences(lines)
    if found is None:
        raise EditError("the front matter is never closed")
    return found


_TOML_HEADER = re.compile(r"^\s*\[\s*([^\[\]\s]+)\s*\]\s*(?:#.*)?$")


def _table_line_edit(text: str, fmt: str, changes: Changes, unit: str | None, table: str) -> str:
    """``text`` with ``changes`` set inside the front matter's ``table``, line by line:
    inside its span (TOML: from ``[table]`` to the next header; YAML: the lines indented
    below ``table:``), which is added at the end of the front matter when missing. A table
    written another way (inline, dotted keys, a flow mapping) is left to the round trip."""
    toml = fmt == "toml"
    previous: str | None = None
    for key, value in changes.items():
        nl = newline(text)
        lines = text.splitlines(keepends=True)
        start, close = _fences(lines)
        span = (
            _toml_span(lines, start, close, table)
            if toml
            else _yaml_span(lines, start, close, table)
        )
        if span is None:
            if value is None:
                continue  # no table, so nothing to remove
            header = (
                f"[{table}]{nl}"
                if toml
                else f"{_base_indent(lines[start + 1 : close])}{table}:{nl}"
            )
            lines.insert(close, header)
            first, end, base = close + 1, close + 1, ""
            if not toml:
                base = _base_indent(lines[start + 1 : close]) + "  "
        else:
            first, end, base = span
        if value is None:
            lines = _remove(lines, first, close if unit else end, unit, key, toml, base)
        else:
            shown = _toml_value(value) if toml else _yaml_scalar(value)
            if unit:  # the units' own tables ([[extra.units]]) follow the table's keys
                lines = _unit(lines, first, close, unit, key, shown, toml, nl, previous)
            else:
                lines = _top(lines, first, end, key, shown, toml, nl, previous, base)
        previous = key
        text = "".join(lines)
    return text


def _toml_span(lines: list[str], start: int, close: int, table: str) -> tuple[int, int, str] | None:
    """(first line, end, "") of the keys under ``[table]``, to the next table header."""
    at = None
    for i in range(start + 1, close):
        stripped = lines[i].strip()
        found = _TOML_HEADER.match(lines[i])
        if found and found.group(1) == table:
            at = i
            break
        if re.match(rf"^{re.escape(table)}\s*[.=]", stripped) or re.match(
            rf"^\[\[?\s*{re.escape(table)}\s*\.", stripped
        ):
            raise EditError(f"the [{table}] table is written as dotted keys or inline")
    if at is None:
        return None
    end = next((i for i in range(at + 1, close) if lines[i].lstrip().startswith("[")), close)
    return at + 1, end, ""


def _yaml_span(lines: list[str], start: int, close: int, table: str) -> tuple[int, int, str] | None:
    """(first line, end, indent) of the keys of the block mapping under ``table:``."""
    base = _base_indent(lines[start + 1 : close])
    key_re = re.compile(
        rf"^{re.escape(base)}[\"']?{re.escape(table)}[\"']?[ \t]*:(?P<rest>.*)$", re.S
    )
    at = None
    for i in range(start + 1, close):
        found = key_re.match(lines[i])
        if found and _top_level(lines[i], base):
            rest = found.group("rest").strip()
            if rest and not rest.startswith("#"):
                raise EditError(f"{table!r} is not written as a block of keys")
            at = i
            break
    if at is None:
        return None
    last = at
    child = ""
    for i in range(at + 1, close):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" \t"))]
        if len(indent) <= len(base):
            break
        child = child or indent
        last = i
    if not child:
        child = base + "  "
    return at + 1, last + 1, child


def _base_indent(lines: list[str]) -> str:
    """The indentation of the front matter's top-level keys: YAML allows the whole
    mapping to be indented, and a key set or added must stay in line with the others."""
    for line in lines:
        stripped = line.lstrip(" \t")
        if stripped.strip() and not stripped.startswith("#"):
            return line[: len(line) - len(stripped)]
    return ""


def _top_level(line: str, base: str) -> bool:
    """Whether ``line`` is a top-level key's (not nested, not a list item)."""
    return line.startswith(base) and line[len(base) : len(base) + 1] not in (" ", "\t", "-")


def _remove(
    lines: list[str],
    first: int,
    close: int,
    unit: str | None,
    key: str,
    toml: bool,
    base: str = "",
) -> list[str]:
    """Without the line ``key: value`` (top-level, or inside unit ``unit``'s entry); a key
    that is not there leaves the lines as they are."""
    pattern = _value_re(key, toml)
    start, end = first, close
    if unit:
        at = _unit_line(lines, first, close, unit)
        if at is None:
            return lines
        line = lines[at]
        if "{" in line and "}" in line:
            flow = re.compile(
                r""",\s*["']?""" + re.escape(key) + r"""["']?\s*[:=]\s*("[^"]*"|'[^']*'|[^,}\s]+)"""
            )
            lines[at] = flow.sub("", line, count=1)
            return lines
        start = at
        indent = len(line) - len(line.lstrip(" \t-"))
        for i in range(at + 1, close):
            stripped = lines[i].strip()
            cur = len(lines[i]) - len(lines[i].lstrip(" \t"))
            if stripped and ((toml and stripped.startswith("[")) or (not toml and cur < indent)):
                end = i
                break
    for i in range(start, end):
        body = lines[i].lstrip(" \t-") if unit else lines[i]
        if not unit and not _top_level(lines[i], base):
            continue
        m = pattern.match(body)
        if m and not m.group("rest").strip().startswith(("|", ">")) and m.group("value"):
            del lines[i]
            return lines
    return lines


def _value_re(key: str, toml: bool) -> re.Pattern[str]:
    sep = "=" if toml else ":"
    return re.compile(
        r"^(?P<indent>[ \t]*(?:-[ \t]+)?)(?P<q>[\"']?)"
        + re.escape(key)
        + r"(?P=q)[ \t]*"
        + sep
        + r"[ \t]*(?P<value>\"[^\"]*\"|'[^']*'|[^\s#]*)(?P<rest>.*)$",
        re.S,
    )


def _top(
    lines: list[str],
    first: int,
    close: int,
    key: str,
    value: str,
    toml: bool,
    nl: str,
    after: str | None = None,
    base: str = "",
) -> list[str]:
    pattern = _value_re(key, toml)
    before = _value_re(after, toml) if after else None
    anchor = None
    for i in range(first, close):
        line = lines[i]
        if not _top_level(line, base):
            continue  # nested: not the top-level key
        if toml and line.lstrip().startswith("["):
            break  # a table starts: top-level keys are above it
        m = pattern.match(line)
        if m:
            lines[i] = (
                line[: m.start("value")]
                + _quoted_like(m.group("value"), value, toml)
                + line[m.end("value") :]
            )
            return lines
        if before is not None and before.match(line):
            anchor = i
    insert = close if anchor is None else anchor + 1
    if toml and anchor is None:  # top-level keys must come before the first [table]
        insert = next((i for i in range(first, close) if lines[i].lstrip().startswith("[")), close)
    sep = " = " if toml else ": "
    lines.insert(insert, f"{base}{key}{sep}{value}{nl}")
    return lines


def _quoted_like(old: str, value: str, toml: bool) -> str:
    """``value`` quoted the way the old value was (a date stays bare)."""
    bare = value.strip('"')
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", bare):
        return bare
    if old.startswith('"') or toml:
        return f'"{bare}"'
    if old.startswith("'"):
        return f"'{bare}'"
    return bare


def _unit(
    lines: list[str],
    first: int,
    close: int,
    unit: str,
    key: str,
    value: str,
    toml: bool,
    nl: str,
    after: str | None = None,
) -> list[str]:
    at = _unit_line(lines, first, close, unit)
    if at is None:
        raise EditError(f"unit {unit!r} not found in the front matter")
    line = lines[at]
    if "{" in line and "}" in line:  # flow style: - {id: a1, title: x, status: todo}
        lines[at] = _flow_set(line, key, value, toml)
        return lines
    indent = len(line) - len(line.lstrip(" \t-"))
    begin, end = _unit_span(lines, first, close, at, indent, toml)
    if not _set_in_unit(lines, begin, end, key, value, indent, toml):
        _add_to_unit(lines, at, begin, end, key, value, indent, toml, nl, after)
    return lines


def _unit_line(lines: list[str], first: int, close: int, unit: str) -> int | None:
    """The line of ``lines[first:close]`` holding unit ``unit``'s id, or None."""
    id_re = re.compile(
        r"""(?:^|[\s{,])["']?id["']?\s*[:=]\s*["']?"""
        + re.escape(unit)
        + r"""["']?\s*(?:$|[,}\s#])"""
    )
    return next((i for i in range(first, close) if id_re.search(lines[i])), None)


def _flow_set(line: str, key: str, value: str, toml: bool) -> str:
    """A flow-style unit's ``line`` with ``key`` set to ``value`` (or added at its end)."""
    flow = re.compile(
        r"""(["']?""" + re.escape(key) + r"""["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^,}\s]+)"""
    )
    if flow.search(line):
        return flow.sub(lambda m: m.group(1) + _quoted_like(m.group(2), value, toml), line, count=1)
    sep = " = " if toml else ": "
    end = line.rindex("}")
    return line[:end].rstrip() + f", {key}{sep}{value}" + line[end:]


def _unit_span(
    lines: list[str], first: int, close: int, at: int, indent: int, toml: bool
) -> tuple[int, int]:
    """``[begin, end)``: the lines of the unit entry whose id is on line ``at``."""
    begin = at
    if not toml and not lines[at].lstrip().startswith("-"):  # id is not the item's first key
        for i in range(at - 1, first - 1, -1):
            cur = lines[i]
            if cur.lstrip().startswith("-") and len(cur) - len(cur.lstrip(" \t-")) == indent:
                begin = i
                break
    if toml:  # the unit's table starts at the [[units]] header above the id
        begin = next(
            (i for i in range(at, first - 1, -1) if lines[i].lstrip().startswith("[")), first
        )
    end = close
    for i in range(at + 1, close):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        cur_indent = len(lines[i]) - len(lines[i].lstrip(" \t"))
        if (toml and stripped.startswith("[")) or (not toml and cur_indent < indent):
            end = i
            break
    return begin, end


def _set_in_unit(
    lines: list[str], begin: int, end: int, key: str, value: str, indent: int, toml: bool
) -> bool:
    """Replace the value of ``key`` in the unit's lines ``[begin, end)``; False when the
    unit has no such key."""
    pattern = _value_re(key, toml)
    for i in range(begin, end):
        cur = lines[i]
        body = cur.lstrip(" \t-") if not toml else cur.lstrip(" \t")
        key_indent = len(cur) - len(body)
        m = pattern.match(body)
        if m and (toml or key_indent == indent):
            pos = key_indent + m.start("value")
            lines[i] = (
                cur[:pos]
                + _quoted_like(m.group("value"), value, toml)
                + cur[pos + len(m.group("value")) :]
            )
            return True
    return False


def _add_to_unit(
    lines: list[str],
    at: int,
    begin: int,
    end: int,
    key: str,
    value: str,
    indent: int,
    toml: bool,
    nl: str,
    after: str | None,
) -> None:
    """Insert ``key: value`` into the unit's lines ``[begin, end)`` (id on line ``at``):
    after the key ``after`` when the unit has it, else after its last line."""
    line = lines[at]
    sep = " = " if toml else ": "
    pad = line[: len(line) - len(line.lstrip(" \t"))] if toml else " " * indent
    last = max(
        (i for i in range(at, end) if lines[i].strip() and not lines[i].strip().startswith("#")),
        default=at,
    )
    if after is not None:
        before = _value_re(after, toml)
        last = next(
            (
                i
                for i in range(begin, end)
                if before.match(lines[i].lstrip(" \t-") if not toml else lines[i].lstrip())
            ),
            last,
        )
    lines.insert(last + 1, pad + f"{key}{sep}{value}{nl}")


def _yaml_scalar(value: str | dt.date) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _toml_value(value: str | dt.date) -> str:
    return value.isoformat() if isinstance(value, dt.date) else json.dumps(value)


__all__ = ["BOM", "Changes", "EditError", "newline", "set_values"]
