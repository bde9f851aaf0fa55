"""The second way of :mod:`studykb.parse.fm_edit`: a round-trip edit with ruamel.yaml
(YAML) or tomlkit (TOML), which keep comments and layout, where a line edit cannot be
proven right (flow style, a value on the next line, a key inside a multi-line string)."""

from __future__ import annotations

import io
import re
from typing import Any

from studykb.parse.fm_check import Changes, EditError
from studykb.parse.frontmatter import split


def round_trip(
    text: str, fmt: str, changes: Changes, unit: str | None, table: str | None = None
) -> str | None:
    if fmt == "json":
        return None  # the line edit is exact for JSON; nothing better to try
    parts = split(text)
    head_len = text.replace("\r\n", "\n").find(parts.fm_text) if parts.fm_text else -1
    if head_len < 0 or "\r" in text:
        raise EditError("cannot locate the front matter for a round-trip edit")
    if fmt == "toml":
        fm = _tomlkit_edit(parts.fm_text, changes, unit, table)
    else:
        fm = _ruamel_edit(parts.fm_text, changes, unit, table)
    return text[:head_len] + fm + text[head_len + len(parts.fm_text) :]


def _target(data: Any, unit: str | None) -> Any:
    if unit is None:
        return data
    for item in data.get("units") or ():
        if hasattr(item, "get") and str(item.get("id", "")).strip() == unit:
            return item
    raise EditError(f"unit {unit!r} not found in the front matter")


def load_round_trip(fm: str) -> tuple[Any, Any]:
    """(ruamel.yaml's round-trip reader set up as ``fm`` is written, ``fm`` read by it);
    raises :class:`EditError` when it cannot read it."""
    # deferred: ruamel.yaml loads only to edit YAML front matter
    from ruamel.yaml import YAML

    # deferred: ruamel.yaml loads only to edit YAML front matter
    from ruamel.yaml.error import YAMLError

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 16
    indent = yaml_indent(fm)
    if indent:
        rt.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    try:
        return rt, rt.load(fm)
    except YAMLError as exc:
        raise EditError(f"ruamel.yaml cannot read it: {exc}") from None


def _ruamel_edit(fm: str, changes: Changes, unit: str | None, table: str | None = None) -> str:
    # deferred: ruamel.yaml loads only to edit YAML front matter
    from ruamel.yaml.comments import CommentedMap

    rt, data = load_round_trip(fm)
    if data is None:
        data = CommentedMap()
    if table is not None and table not in data:
        data[table] = CommentedMap()
    target = _target(data if table is None else data[table], unit)
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    out = io.StringIO()
    rt.dump(data, out)
    text = out.getvalue()
    if fm.endswith("\n") and not text.endswith("\n"):
        text += "\n"
    return text


def yaml_indent(fm: str) -> tuple[int, int, int] | None:
    """(mapping, sequence, offset) indents as the file writes block sequences, if any."""
    m = re.search(r"^(\S[^\n]*):[ \t]*\n([ \t]*)-([ \t]+)\S", fm, re.M)
    if not m:
        return None
    offset = len(m.group(2))
    return 2, offset + 1 + len(m.group(3)) - 1 + 1, offset


def _tomlkit_edit(fm: str, changes: Changes, unit: str | None, table: str | None = None) -> str:
    # deferred: tomlkit loads only to edit TOML front matter
    import tomlkit

    # deferred: tomlkit loads only to edit TOML front matter
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(fm)
    except TOMLKitError as exc:
        raise EditError(f"tomlkit cannot read it: {exc}") from None
    if table is not None and table not in doc:
        doc[table] = tomlkit.table()
    target = _target(doc if table is None else doc[table], unit)
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    return tomlkit.dumps(doc)
