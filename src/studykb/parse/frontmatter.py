"""Split front matter (YAML ``---``, TOML ``+++``, JSON ``{``) from the body, keeping line numbers.

python-frontmatter's handlers parse YAML and JSON; TOML goes through the standard
library's ``tomllib``. The split is done here because the library strips the body
and so loses the line numbers every message needs.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import frontmatter
import yaml

try:  # the C loader is several times faster; fall back where libyaml is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_YAML = frontmatter.YAMLHandler()
#: What :func:`load_yaml` raises for text that is not YAML.
YAMLError = yaml.YAMLError


def load_yaml(text: str) -> Any:
    """A YAML document (a site's configuration file), safely: plain data only."""
    return yaml.load(text, Loader=_Loader)


class _TagsAsData(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """A safe loader that reads a value with a tag it does not know (mkdocs.yml's
    ``!!python/name:...`` and ``!ENV``) as the plain value written, never as an object."""


def _untagged(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PythonTag:
    """A ``!!python/...`` value of a site's YAML, kept as data: ``!!python/name:pymdownx.
    slugs.uslugify`` is ``PythonTag("name:pymdownx.slugs.uslugify", "")``; the function it
    names is never imported (mkdocs' toc ``slugify`` is mapped to studykb's own rules)."""

    #: The tag after ``python/``: ``name:module.function``, ``object/apply:module.function``.
    tag: str
    #: The value written after the tag (``{kwds: {case: lower}}``), as plain data.
    value: Any

    @property
    def target(self) -> str:
        """The dotted name the tag names (``pymdownx.slugs.slugify``)."""
        return self.tag.partition(":")[2]


def _python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> PythonTag:
    return PythonTag(suffix, _untagged(loader, suffix, node))


_TagsAsData.add_multi_constructor("!", _untagged)
_TagsAsData.add_multi_constructor("tag:yaml.org,2002:python/", _python_tag)


def load_config_yaml(text: str) -> Any:
    """A site's YAML configuration, safely, with tags for its own tools read as data."""
    return yaml.load(text, Loader=_TagsAsData)  # noqa: S506 - a SafeLoader subclass


_JSON = frontmatter.JSONHandler()


@dataclass
class Split:
    """Front matter and body of one file."""

    meta: dict[str, Any]
    """The parsed front matter, JSON-safe (dates as ISO strings)."""
    fm_format: str
    """``yaml``, ``toml``, ``json`` or ``""`` when there is none."""
    fm_text: str
    """The raw front matter text, between the fences."""
    fm_line: int
    """1-based line of the first line of ``fm_text``."""
    body: str
    """Everything after the front matter."""
    body_line: int
    """1-based line where ``body`` starts."""
    error: tuple[int, str] | None = None
    """(line, message) when the front matter could not be read."""
    warning: tuple[int, str] | None = None
    """(line, message) when something looks like front matter but is read as body."""


#: The fence that opens a front matter, and the lines that may close it.
CLOSERS = MappingProxyType({"---": ("---", "..."), "+++": ("+++",)})
FORMATS = MappingProxyType({"---": "yaml", "+++": "toml"})


def fences(lines: Sequence[str], *, open_ended: bool = False) -> tuple[int, int] | None:
    """(index of the opening fence, index of the closing fence) of the YAML or TOML front
    matter of a file's ``lines`` (line ends kept or not), by the rule :func:`split` reads
    with (blank lines before it allowed); None when there is none or it is never closed,
    unless ``open_ended`` (a buffer being typed): then ``len(lines)`` stands for the
    closing fence not written yet."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines):
        return None
    closers = CLOSERS.get(lines[start].rstrip().lstrip("\ufeff"))
    if closers is None:
        return None
    for close in range(start + 1, len(lines)):
        if lines[close].rstrip() in closers:
            return start, close
    return (start, len(lines)) if open_ended else None


def fence_format(line: str) -> str | None:
    """``yaml`` or ``toml`` for an opening fence line (as :func:`fences` found it)."""
    return FORMATS.get(line.rstrip().lstrip("\ufeff"))


def split(text: str, *, load: bool = True) -> Split:
    """Split ``text`` (BOM already removed, any line ends) into front matter and body;
    ``load=False`` finds where the body starts without reading a YAML or TOML front
    matter (its mapping is then empty), for whoever only wants the body."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    pos = 0
    line = 1
    # blank lines before the front matter are tolerated
    while True:
        nl = text.find("\n", pos)
        if nl == -1 or text[pos:nl].strip():
            break
        pos = nl + 1
        line += 1
    rest = text[pos:]
    first = rest.split("\n", 1)[0].rstrip()
    if first in CLOSERS:
        return _fenced(text, pos, line, FORMATS[first], CLOSERS[first], load)
    if rest.startswith("{"):
        return _json(text, pos, line)
    return Split({}, "", "", 0, text, 1, warning=_near_miss(first, rest, line))


#: A fence of more dashes or pluses than front matter takes (``-----``).
_LONG_FENCE = re.compile(r"^(?:-{4,}|\+{4,})$")
#: A line that reads like a front-matter key (``title: ...``, ``title = ...``).
_KEY_LINE = re.compile(r"^[A-Za-z_][\w-]*\s*[:=]")


def _near_miss(first: str, rest: str, line: int) -> tuple[int, str] | None:
    """A warning when the file opens like front matter with a fence of the wrong length
    (``-----`` then ``title: ...``): Markdown reads that as a rule and text, so the
    fields would be lost without a word."""
    if not _LONG_FENCE.match(first):
        return None
    lines = rest.split("\n", 2)
    if len(lines) < 2 or not _KEY_LINE.match(lines[1]):
        return None
    fence = "---" if first[0] == "-" else "+++"
    return (
        line,
        f"front matter must open with exactly {fence!r}; this file opens with {first!r}, "
        "so its fields are read as body text",
    )


def _fenced(
    text: str, pos: int, line: int, fmt: str, closers: tuple[str, ...], load: bool = True
) -> Split:
    start = text.find("\n", pos)
    if start == -1:
        return Split({}, fmt, "", line + 1, "", line + 1, (line, "front matter is never closed"))
    start += 1
    cursor = start
    end_line = line + 1
    while True:
        nl = text.find("\n", cursor)
        current = text[cursor:] if nl == -1 else text[cursor:nl]
        if current.rstrip() in closers:
            fm_text = text[start:cursor]
            body_start = len(text) if nl == -1 else nl + 1
            body = text[body_start:]
            meta, error = _load(fm_text, fmt, line + 1) if load else ({}, None)
            return Split(meta, fmt, fm_text, line + 1, body, end_line + 1, error)
        if nl == -1:
            # An unclosed fence: the whole file is body, and that is a problem.
            closer = closers[0]
            message = f"front matter opened with {closer!r} on line {line} is never closed"
            return Split({}, fmt, "", line + 1, text, 1, (line, message))
        cursor = nl + 1
        end_line += 1


def _json(text: str, pos: int, line: int) -> Split:
    try:
        obj, end = json.JSONDecoder().raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        return Split(
            {}, "json", "", line, text, 1, (exc.lineno, f"bad JSON front matter: {exc.msg}")
        )
    except RecursionError:
        return Split(
            {}, "json", "", line, text, 1, (line, "bad JSON front matter: nested too deeply")
        )
    fm_text = text[pos:end]
    nl = text.find("\n", end)
    body_start = len(text) if nl == -1 else nl + 1
    body_line = line + fm_text.count("\n") + 1
    if not isinstance(obj, dict):
        return Split(
            {},
            "json",
            fm_text,
            line,
            text[body_start:],
            body_line,
            (line, "JSON front matter is not an object"),
        )
    try:
        meta = _JSON.load(fm_text)
    except ValueError as exc:  # pragma: no cover - raw_decode already accepted it
        return Split({}, "json", fm_text, line, text[body_start:], body_line, (line, str(exc)))
    return Split(jsonable(meta), "json", fm_text, line, text[body_start:], body_line)


def _load(fm_text: str, fmt: str, first_line: int) -> tuple[dict[str, Any], tuple[int, str] | None]:
    if not fm_text.strip():
        return {}, None
    try:
        if fmt == "toml":
            data: Any = tomllib.loads(fm_text)
        else:
            data = _YAML.load(fm_text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        where = first_line + _yaml_line(exc, fm_text.count("\n"))
        what = exc.problem or exc.context or "invalid YAML"
        return {}, (where, f"bad YAML front matter: {what}")
    except yaml.YAMLError as exc:
        return {}, (first_line, f"bad YAML front matter: {exc}")
    except tomllib.TOMLDecodeError as exc:
        # tomllib only has ``lineno`` from Python 3.14; before, it is in the message
        lineno = getattr(exc, "lineno", None)
        if not lineno:
            found = _TOML_AT.search(str(exc))
            lineno = int(found.group(1)) if found else 1
        where = first_line + min(lineno - 1, max(fm_text.count("\n") - 1, 0))
        return {}, (where, f"bad TOML front matter: {str(exc).split(' (at')[0]}")
    except (ValueError, TypeError, RecursionError) as exc:
        return {}, (first_line, f"bad front matter: {exc}")
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, (first_line, f"front matter is a {type(data).__name__}, not a mapping of keys")
    try:
        return jsonable(data), None
    except ValueError as exc:  # YAML aliases can make a loop or a "billion laughs"
        return {}, (first_line, f"bad front matter: {exc}")


_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)")


def _yaml_line(exc: yaml.MarkedYAMLError, lines: int) -> int:
    """0-based line of a YAML error inside the front matter, as a person would point at it.

    An unclosed bracket or quote, or a key without ``:``, is noticed only on a later
    line (often the end of the front matter): point at where it started instead.
    """
    context = exc.context or ""
    mark = exc.problem_mark
    if exc.context_mark and ("flow" in context or "quoted" in context or "simple key" in context):
        mark = exc.context_mark
    mark = mark or exc.context_mark
    line = mark.line if mark else 0
    return min(line, max(lines - 1, 0))


#: Front matter larger than this once YAML aliases are expanded is refused.
MAX_NODES = 100_000


def jsonable(value: Any) -> Any:
    """Make YAML/TOML values JSON-safe: dates to ISO strings, keys to strings.

    Raises ValueError for a structure that loops back on itself (``a: &a [*a]``) or that
    aliases expand beyond :data:`MAX_NODES` values.
    """
    budget = [MAX_NODES]
    return _jsonable(value, budget, set())


def _jsonable(value: Any, budget: list[int], open_: set[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError(f"more than {MAX_NODES} values once aliases are expanded")
    if isinstance(value, (dict, list, tuple, set)):
        if id(value) in open_:
            raise ValueError("a value contains itself (a recursive YAML alias)")
        open_.add(id(value))
        try:
            if isinstance(value, dict):
                return {str(k): _jsonable(v, budget, open_) for k, v in value.items()}
            return [_jsonable(v, budget, open_) for v in value]
        finally:
            open_.discard(id(value))
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
