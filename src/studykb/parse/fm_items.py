"""Renaming one name inside a front-matter list (``tags``, ``covers``), proven by parsing.

Used by ``mv`` when a topic's id changes: ``tags: [fsdp]`` and ``covers: fsdp, zero``
(and a course unit's ``tags``, Zola's ``[taxonomies] tags``) must name it by its new id.
The same two ways and the same proof as :mod:`studykb.parse.fm_edit`:

1. a token edit: the name is replaced where it is written (one occurrence after
   another), so quoting, flow or block style, comments and every other byte stay;
2. where that does not give the wanted mapping (the new name needs quotes, say), a
   round-trip edit with ruamel.yaml or tomlkit changing the list's items in place.

The proof: the new file parses (strictly) to the old mapping with only those items
renamed, and the same body; otherwise nothing is returned but :class:`EditError`.
"""

from __future__ import annotations

import copy
import io
import re
from typing import Any

# the strict parse and the comparison that prove an edit, shared with fm_edit
from studykb.parse.fm_check import EditError, differs, load
from studykb.parse.fm_edit import BOM
from studykb.parse.fm_roundtrip import load_round_trip
from studykb.parse.frontmatter import split

#: Where a name sits: keys from the top of the mapping (or of a unit's entry).
Where = tuple[str, ...]
_SEPARATORS = re.compile(r"([,\s]+)")


def rename_item(raw: bytes, where: Where, old: str, new: str, unit: str | None = None) -> bytes:
    """``raw`` with each item of the list at ``where`` (in unit ``unit``'s entry) that is
    ``old`` (case aside, a leading ``#`` kept) renamed ``new``; ``raw`` itself when none
    is. A value that is one string (``tags: a, b``) is a list of its words."""
    bom = BOM if raw.startswith(BOM) else b""
    text = raw[len(bom) :].decode("utf-8")
    parts = split(text)
    if parts.error:
        raise EditError(f"line {parts.error[0]}: {parts.error[1]}; fix it first")
    loaded = load(text)
    fmt, meta, body = loaded
    wanted = copy.deepcopy(meta)
    holder, key = _holder(wanted, where, unit)
    if holder is None or _renamed(holder[key], old, new) == holder[key]:
        return raw
    holder[key] = _renamed(holder[key], old, new)
    want = (fmt, wanted, body)
    tried = []
    for name, edit in (("token edit", _token_edit), ("round-trip edit", _round_trip)):
        try:
            out = edit(text, loaded, want, where, old, new, unit)
        except EditError as exc:
            tried.append(f"{name}: {exc}")
            continue
        if out is not None:
            problem = differs(text, out, want)
            if problem is None:
                return bom + out.encode("utf-8")
            tried.append(f"{name}: {problem}")
    raise EditError("cannot rename it in the front matter safely (" + "; ".join(tried) + ")")


def names(value: Any) -> list[str]:
    """The names a list (or one string of words) holds, ``#`` left off."""
    if isinstance(value, str):
        return [w.lstrip("#") for w in _SEPARATORS.split(value)[::2] if w.lstrip("#")]
    if isinstance(value, list):
        return [str(v).strip().lstrip("#") for v in value if isinstance(v, (str, int, float))]
    return []


def _holder(meta: Any, where: Where, unit: str | None) -> tuple[Any, str]:
    """(the mapping holding the value, its key), or (None, "") when there is none."""
    node = meta
    if unit is not None:
        units = meta.get("units") if hasattr(meta, "get") else None
        extra: Any = meta.get("extra") if hasattr(meta, "get") and units is None else None
        if hasattr(extra, "get"):  # a Zola course keeps its units under [extra]
            units = extra.get("units")
        node = next(
            (u for u in units or () if hasattr(u, "get") and str(u.get("id", "")).strip() == unit),
            None,
        )
    for key in where[:-1]:
        node = node.get(key) if hasattr(node, "get") else None
    if not hasattr(node, "get") or where[-1] not in node:
        return None, ""
    return node, where[-1]


def _same(item: str, old: str) -> bool:
    return item.strip().lstrip("#").casefold() == old.casefold()


def _renamed(value: Any, old: str, new: str) -> Any:
    """``value`` (a list, or a string of words) with ``old`` renamed ``new``."""
    if isinstance(value, str):
        pieces = _SEPARATORS.split(value)
        return "".join(
            (p[: len(p) - len(p.lstrip("#"))] + new) if i % 2 == 0 and _same(p, old) else p
            for i, p in enumerate(pieces)
        )
    if isinstance(value, list):
        return [
            (v.strip()[: len(v.strip()) - len(v.strip().lstrip("#"))] + new)
            if isinstance(v, str) and _same(v, old)
            else v
            for v in value
        ]
    return value


# -- way 1: the name replaced where it is written ----------------------------------------------


def _token_edit(
    text: str,
    loaded: tuple[str, dict[str, Any], str],
    want: tuple[str, dict[str, Any], str],
    where: Where,
    old: str,
    new: str,
    unit: str | None,
) -> str | None:
    """Replace occurrences of ``old`` in the front matter one at a time, keeping each
    that renames one more item of the list and changes nothing else."""
    parts = split(text)
    lines = text.splitlines(keepends=True)
    first = parts.fm_line - 1
    count = parts.fm_text.count("\n") + (not parts.fm_text.endswith("\n"))
    start = sum(len(line) for line in lines[:first])
    end = start + sum(len(line) for line in lines[first : first + count])
    token = re.compile(r"(?<![\w./-])" + re.escape(old) + r"(?![\w./-])", re.IGNORECASE)
    current, current_meta = text, loaded[1]
    offset = 0
    for match in list(token.finditer(text, start, end)):
        at, to = match.start() + offset, match.end() + offset
        candidate = current[:at] + new + current[to:]
        try:
            got = load(candidate)
        except EditError:
            continue
        if got[2] != want[2] or not _closer(current_meta, got[1], want[1], where, unit):
            continue
        current, current_meta = candidate, got[1]
        offset += len(new) - (match.end() - match.start())
        if got[1] == want[1]:
            return current
    return None


def _closer(now: Any, got: Any, want: Any, where: Where, unit: str | None) -> bool:
    """Whether ``got`` is ``now`` with only the value at ``where`` changed, toward ``want``."""
    got_holder, key = _holder(got, where, unit)
    now_holder, _ = _holder(now, where, unit)
    want_holder, _ = _holder(want, where, unit)
    if got_holder is None or now_holder is None or want_holder is None:
        return False
    value = got_holder[key]
    if value == now_holder[key]:
        return False
    got_holder[key] = now_holder[key]
    try:
        same_elsewhere = got == now
    finally:
        got_holder[key] = value
    wanted = want_holder[key]
    if isinstance(value, list) and isinstance(wanted, list) and len(value) == len(wanted):
        return same_elsewhere and all(
            v in (w, n) for v, w, n in zip(value, wanted, now_holder[key], strict=True)
        )
    return same_elsewhere and isinstance(value, str) and value == wanted


# -- way 2: round trip ------------------------------------------------------------------------


def _round_trip(
    text: str,
    loaded: tuple[str, dict[str, Any], str],
    want: tuple[str, dict[str, Any], str],
    where: Where,
    old: str,
    new: str,
    unit: str | None,
) -> str | None:
    fmt = loaded[0]
    if fmt == "json":
        return None  # the token edit is exact for JSON
    parts = split(text)
    head = text.find(parts.fm_text) if parts.fm_text else -1
    if head < 0 or "\r" in text:
        raise EditError("cannot locate the front matter for a round-trip edit")
    if fmt == "toml":
        fm = _tomlkit(parts.fm_text, where, old, new, unit)
    else:
        fm = _ruamel(parts.fm_text, where, old, new, unit)
    return text[:head] + fm + text[head + len(parts.fm_text) :]


def _in_place(data: Any, where: Where, old: str, new: str, unit: str | None) -> None:
    holder, key = _holder(data, where, unit)
    if holder is None:
        raise EditError("the list is not where it was read")
    value = holder[key]
    if isinstance(value, str):
        holder[key] = _renamed(str(value), old, new)
        return
    for i, item in enumerate(value):
        if isinstance(item, str) and _same(item, old):
            value[i] = _renamed([str(item)], old, new)[0]


def _ruamel(fm: str, where: Where, old: str, new: str, unit: str | None) -> str:
    rt, data = load_round_trip(fm)
    _in_place(data, where, old, new, unit)
    out = io.StringIO()
    rt.dump(data, out)
    written = out.getvalue()
    return written + "\n" if fm.endswith("\n") and not written.endswith("\n") else written


def _tomlkit(fm: str, where: Where, old: str, new: str, unit: str | None) -> str:
    # deferred: tomlkit loads only to edit TOML front matter
    import tomlkit

    # deferred: tomlkit loads only to edit TOML front matter
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(fm)
    except TOMLKitError as exc:
        raise EditError(f"tomlkit cannot read it: {exc}") from None
    _in_place(doc, where, old, new, unit)
    return tomlkit.dumps(doc)


# -- proving the edits of references ------------------------------------------------------------


def unproven(old: str, new: str, pairs: list[tuple[str, str]]) -> str | None:
    """Why the front matter of ``new`` is not that of ``old`` with only references
    rewritten (each changed string is the old one with some ``(old, new)`` pairs
    replaced, nothing else changed), or None when it is (or ``old`` has none that parses
    strictly, so there is nothing to hold it to)."""
    old, new = old.removeprefix("\ufeff"), new.removeprefix("\ufeff")
    if not split(old, load=False).fm_format:
        return None
    try:
        before = load(old)
    except EditError:
        return None
    try:
        after = load(new)
    except EditError as exc:
        return str(exc)
    if before[0] != after[0]:
        return "the front matter would change format"
    return None if _only_renamed(before[1], after[1], pairs) else "other values would change"


def _only_renamed(a: Any, b: Any, pairs: list[tuple[str, str]]) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_only_renamed(a[k], b[k], pairs) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        pairs_of = zip(a, b, strict=True)
        return len(a) == len(b) and all(_only_renamed(x, y, pairs) for x, y in pairs_of)
    if isinstance(a, str) and isinstance(b, str) and a != b:
        text: str = a
        for old, new in sorted(pairs, key=lambda p: -len(p[0])):  # a path before its name
            text = text.replace(old, new)
        return text == b
    return bool(a == b and type(a) is type(b))
