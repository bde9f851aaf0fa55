"""The proof of a front-matter edit: the new text must parse (duplicate keys are an
error) to the old mapping with only the asked keys changed, and the same body."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from typing import Any

import yaml

from studykb.parse.frontmatter import split

#: key -> new value; None removes the key.
Changes = dict[str, "str | dt.date | None"]


class EditError(ValueError):
    """The front matter cannot be changed safely; the message says why."""


try:  # the parser's own loader (libyaml), which reads what the parser reads: a tab may
    # separate a key from its value (YAML 1.2; PyYAML's pure-Python scanner refuses it)
    from yaml import CSafeLoader as _Safe
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Safe  # type: ignore[assignment]


class _StrictLoader(_Safe):
    """The safe loader, refusing duplicate keys (which it would silently merge)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _value in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (list, dict)):
            continue
        if key in seen:
            raise EditError(f"the key {key!r} appears twice")
        seen.add(key)
    return yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise EditError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def load(text: str) -> tuple[str, dict[str, Any], str]:
    """(format, mapping, body) of a whole file's text, strictly."""
    parts = split(text)
    if parts.error:
        raise EditError(parts.error[1])
    try:
        if parts.fm_format == "toml":
            data: Any = tomllib.loads(parts.fm_text)
        elif parts.fm_format == "json":
            data = json.loads(parts.fm_text, object_pairs_hook=_pairs)
        else:
            data = yaml.load(parts.fm_text, Loader=_StrictLoader) or {}
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError) as exc:
        raise EditError(f"the front matter does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise EditError("the front matter is not a mapping of keys")
    return parts.fm_format, data, parts.body


def expected(
    old: tuple[str, dict[str, Any], str],
    changes: Changes,
    unit: str | None,
    table: str | None = None,
) -> tuple[str, dict[str, Any], str]:
    fmt, meta, body = old
    if table is not None:
        inner = meta.get(table, {})
        if not isinstance(inner, dict):
            raise EditError(f"{table!r} is not a table of keys")
        _fmt, new_inner, _body = expected((fmt, inner, body), changes, unit)
        return fmt, {**meta, table: new_inner}, body
    values = {
        k: (v.isoformat() if fmt == "json" and isinstance(v, dt.date) else v)
        for k, v in changes.items()
    }

    def apply(mapping: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in mapping.items() if not (k in values and values[k] is None)}
        out.update({k: v for k, v in values.items() if v is not None})
        return out

    if unit is None:
        return fmt, apply(meta), body
    new = dict(meta)
    units = meta.get("units")
    if not isinstance(units, list):
        raise EditError("'units' is not a list")
    found = False
    out_units = []
    for item in units:
        if isinstance(item, dict) and str(item.get("id", "")).strip() == unit and not found:
            item = apply(item)
            found = True
        out_units.append(item)
    if not found:
        raise EditError(f"unit {unit!r} not found in the front matter")
    new["units"] = out_units
    return fmt, new, body


def differs(old_text: str, new_text: str, want: tuple[str, dict[str, Any], str]) -> str | None:
    """Why ``new_text`` is not ``old_text`` with the wanted change, or None when it is."""
    try:
        got = load(new_text)
    except EditError as exc:
        return str(exc)
    if got[0] != want[0]:
        return "the front matter changed format"
    if got[2] != want[2]:
        return "the body would change"
    if got[1] != want[1]:
        return "other values would change too"
    return None
