"""Changing one front-matter value in a user's file, keeping every other byte.

Used by ``mark``. The file is read as bytes; only the ``status`` line (of the document,
or of one course unit) is replaced or added; BOM, line ends, comments and key order are
kept; the new file replaces the old atomically, and only if it did not change meanwhile.
"""

from __future__ import annotations

import json
import re

from .errors import StudyError
from .fsutil import write_atomic

STATUSES = ("todo", "reading", "done")


def set_status(raw: bytes, status: str, unit: str | None = None) -> bytes:
    """``raw`` with its (or its unit's) status set; every other byte kept."""
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    text = raw[len(bom):].decode("utf-8")
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    fence = lines[start].rstrip("\r\n").rstrip() if start < len(lines) else ""
    if fence in ("---", "+++"):
        close = next((i for i in range(start + 1, len(lines))
                      if lines[i].rstrip("\r\n").rstrip() in ((fence, "...") if fence == "---"
                                                              else (fence,))), None)
        if close is None:
            raise StudyError("the front matter is never closed; fix it before marking")
        toml = fence == "+++"
        new = (_unit(lines, start + 1, close, unit, status, toml, nl) if unit
               else _top(lines, start + 1, close, status, toml, nl))
        return bom + "".join(new).encode("utf-8")
    if text[sum(len(x) for x in lines[:start]):].startswith("{"):
        return bom + _json(text, status, unit).encode("utf-8")
    if unit:
        raise StudyError("this course has no front matter, so it has no units to mark")
    head = f"---{nl}status: {status}{nl}---{nl}"
    return bom + (head + text).encode("utf-8")


def _value_re(toml: bool) -> re.Pattern[str]:
    sep = "=" if toml else ":"
    return re.compile(r"^(?P<indent>[ \t]*(?:-[ \t]+)?)status[ \t]*" + sep +
                      r"[ \t]*(?P<value>\"[^\"]*\"|'[^']*'|[^\s#]*)(?P<rest>.*)$", re.S)


def _top(lines: list[str], first: int, close: int, status: str, toml: bool, nl: str) -> list[str]:
    pattern = _value_re(toml)
    value = f'"{status}"' if toml else status
    for i in range(first, close):
        line = lines[i]
        if line[:1] in (" ", "\t", "-"):
            continue  # nested: not the top-level key
        if toml and line.lstrip().startswith("["):
            break  # a table starts: top-level keys are above it
        m = pattern.match(line)
        if m:
            lines[i] = line[: m.start("value")] + _quoted_like(m.group("value"), status, toml) \
                + line[m.end("value"):]
            return lines
    insert = close
    if toml:  # top-level keys must come before the first [table]
        insert = next((i for i in range(first, close) if lines[i].lstrip().startswith("[")),
                      close)
    sep = " = " if toml else ": "
    lines.insert(insert, f"status{sep}{value}{nl}")
    return lines


def _quoted_like(old: str, status: str, toml: bool) -> str:
    if old.startswith('"') or toml:
        return f'"{status}"'
    if old.startswith("'"):
        return f"'{status}'"
    return status


def _unit(lines: list[str], first: int, close: int, unit: str, status: str, toml: bool,
          nl: str) -> list[str]:
    id_re = re.compile(r"""(?:^|[\s{,])["']?id["']?\s*[:=]\s*["']?""" + re.escape(unit) +
                       r"""["']?\s*(?:$|[,}\s#])""")
    at = next((i for i in range(first, close) if id_re.search(lines[i])), None)
    if at is None:
        raise StudyError(f"unit {unit!r} not found in the front matter")
    line = lines[at]
    if "{" in line and "}" in line:  # flow style: - {id: a1, title: x, status: todo}
        flow = re.compile(r"""(["']?status["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^,}\s]+)""")
        if flow.search(line):
            lines[at] = flow.sub(lambda m: m.group(1) + _quoted_like(m.group(2), status, toml),
                                 line, count=1)
        else:
            end = line.rindex("}")
            sep = " = " if toml else ": "
            lines[at] = line[:end].rstrip() + f", status{sep}{status}" + line[end:]
        return lines
    indent = len(line) - len(line.lstrip(" \t-"))
    pattern = _value_re(toml)
    begin = at
    if not toml and not line.lstrip().startswith("-"):  # id is not the item's first key
        for i in range(at - 1, first - 1, -1):
            cur = lines[i]
            if cur.lstrip().startswith("-") and len(cur) - len(cur.lstrip(" \t-")) == indent:
                begin = i
                break
    if toml:  # the unit's table starts at the [[units]] header above the id
        begin = next((i for i in range(at, first - 1, -1) if lines[i].lstrip().startswith("[")),
                     first)
    end = close
    for i in range(at + 1, close):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        cur_indent = len(lines[i]) - len(lines[i].lstrip(" \t"))
        if (toml and stripped.startswith("[")) or (not toml and cur_indent < indent):
            end = i
            break
    for i in range(begin, end):
        cur = lines[i]
        body = cur.lstrip(" \t-") if not toml else cur.lstrip(" \t")
        key_indent = len(cur) - len(body)
        m = pattern.match(body)
        if m and (toml or key_indent == indent):
            pos = key_indent + m.start("value")
            lines[i] = cur[:pos] + _quoted_like(m.group("value"), status, toml) + \
                cur[pos + len(m.group("value")):]
            return lines
    sep = " = " if toml else ": "
    value = f'"{status}"' if toml else status
    pad = line[: len(line) - len(line.lstrip(" \t"))] if toml else " " * indent
    lines.insert(at + 1, pad + f"status{sep}{value}{nl}")
    return lines


def _json(text: str, status: str, unit: str | None) -> str:
    obj, end = json.JSONDecoder().raw_decode(text, text.index("{"))
    head = text[:end]
    if unit is None:
        m = re.search(r'("status"\s*:\s*)"[^"]*"', head)
        if m and _depth(head, m.start()) == 1:
            return text[: m.start()] + m.group(1) + f'"{status}"' + text[m.end():]
        brace = text.index("{")
        return text[: brace + 1] + f'"status": "{status}", ' + text[brace + 1:]
    m = re.search(r'"id"\s*:\s*"' + re.escape(unit) + '"', head)
    if not m:
        raise StudyError(f"unit {unit!r} not found in the front matter")
    open_at = head.rindex("{", 0, m.start())
    close_at = head.index("}", m.end())
    block = head[open_at:close_at]
    sm = re.search(r'("status"\s*:\s*)"[^"]*"', block)
    if sm:
        block = block[: sm.start()] + sm.group(1) + f'"{status}"' + block[sm.end():]
    else:
        block = block[:1] + f'"status": "{status}", ' + block[1:]
    return text[:open_at] + block + text[close_at:]


def _depth(text: str, pos: int) -> int:
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


def mark(vault, doc, status: str) -> bool:  # type: ignore[no-untyped-def]
    """Set ``doc``'s status in its file (or its course unit's); False when already set."""
    if status not in STATUSES:
        raise StudyError(f"status must be one of {', '.join(STATUSES)}")
    path = vault.root / doc.path
    raw = path.read_bytes()
    unit = doc.key.split("#", 1)[1] if doc.type == "unit" else None
    try:
        new = set_status(raw, status, unit)
    except UnicodeDecodeError:
        raise StudyError(f"{doc.path} is not valid UTF-8; not changed") from None
    except (ValueError, json.JSONDecodeError) as exc:
        raise StudyError(f"{doc.path}: cannot edit the front matter: {exc}") from None
    if new == raw:
        return False
    write_atomic(path, new, expect=raw)
    return True
