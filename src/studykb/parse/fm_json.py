"""Line-exact edits of JSON front matter (``{"status": "todo", ...}``)."""

from __future__ import annotations

import datetime as dt
import json
import re

from studykb.parse.fm_check import EditError


def json_remove(text: str, key: str, unit: str | None) -> str:
    """Without ``"key": value`` in the JSON front matter (or in unit ``unit``'s object)."""
    start = text.index("{")
    _obj, end = json.JSONDecoder().raw_decode(text, start)
    head = text[:end]
    lo, hi = start, end
    if unit is not None:
        m = re.search(r'"id"\s*:\s*"' + re.escape(unit) + '"', head)
        if not m:
            return text
        lo, hi = head.rindex("{", 0, m.start()), head.index("}", m.end()) + 1
    value = r'(?:"(?:[^"\\]|\\.)*"|[^,}\s]+)'
    pair = r'"' + re.escape(key) + r'"\s*:\s*' + value
    for shape in (pair + r"\s*,\s*", r"\s*,\s*" + pair, pair):
        for m in re.finditer(shape, head[:hi]):
            if m.start() < lo:
                continue
            at = m.start() + (0 if shape.startswith('"') else m.group().index('"'))
            if unit is not None or depth(head, at) == 1:
                return text[: m.start()] + text[m.end() :]
    return text


def json_value(value: str | dt.date) -> str:
    return json.dumps(value.isoformat() if isinstance(value, dt.date) else value)


def json_set(text: str, key: str, value: str, unit: str | None) -> str:
    start = text.index("{")
    _obj, end = json.JSONDecoder().raw_decode(text, start)
    head = text[:end]
    pattern = re.compile(r'("' + re.escape(key) + r'"\s*:\s*)("(?:[^"\\]|\\.)*"|[^,}\s]+)')
    if unit is None:
        for found in pattern.finditer(head):
            if depth(head, found.start()) == 1:
                return text[: found.start()] + found.group(1) + value + text[found.end() :]
        return text[: start + 1] + f'"{key}": {value}, ' + text[start + 1 :]
    m = re.search(r'"id"\s*:\s*"' + re.escape(unit) + '"', head)
    if not m:
        raise EditError(f"unit {unit!r} not found in the front matter")
    open_at = head.rindex("{", 0, m.start())
    close_at = head.index("}", m.end())
    block = head[open_at:close_at]
    inside = pattern.search(block)
    if inside:
        block = block[: inside.start()] + inside.group(1) + value + block[inside.end() :]
    else:
        block = block[:1] + f'"{key}": {value}, ' + block[1:]
    return text[:open_at] + block + text[close_at:]


def depth(text: str, pos: int) -> int:
    depth = 0
    in_str = False
    prev = ""
    for ch in text[:pos]:
        if in_str:
            if ch == '"' and prev != "\\":
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        prev = ch
    return depth
