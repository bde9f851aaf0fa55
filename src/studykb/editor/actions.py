"""What the editor offers to do at a reference (code actions), as plain values.

* a dangling name: create the missing document, from the template of the type the
  place asks for (a ``requires`` of a topic wants a topic, ``refs`` and list items an
  entry, ``course`` a course, a link in the body a note), and replace the name by the
  "did you mean" of its problem;
* a link to another document in the body: add it to the front matter's ``requires``.

No LSP types here (``lsp_edits.py`` turns these into protocol messages). Lines and
columns are 0-based code points, as in :mod:`studykb.vault.buffers`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from studykb.api import fence_format, fences, fold, suggestible

if TYPE_CHECKING:
    from studykb.api import Analysis, BufferView, Span

_YAML_PLAIN = re.compile(r"^[A-Za-z0-9_][\w./-]*$")
_FLOW = re.compile(r"^(\s*requires\s*:\s*\[)(.*)\]\s*(#.*)?$")
_TOML_FLOW = re.compile(r"^(\s*requires\s*=\s*\[)(.*)\]\s*(#.*)?$")


@dataclass(frozen=True)
class TextEdit:
    """Replace ``start..end`` of ``line`` (``end`` may be on ``end_line``) with ``text``."""

    line: int
    start: int
    end: int
    text: str
    end_line: int | None = None


@dataclass(frozen=True)
class NewNote:
    """Create a document a dangling reference names."""

    type: str
    title: str
    id: str | None
    """The id to give it (None: made from the title)."""


@dataclass(frozen=True)
class Action:
    """One thing the editor may do here."""

    title: str
    kind: str
    """``quickfix`` or ``refactor``."""
    edits: tuple[TextEdit, ...] = ()
    create: NewNote | None = None
    code: str = ""
    """The problem code it fixes, if any."""


#: What a dangling reference of each front-matter key asks to be created as.
_TYPE_OF_KIND = MappingProxyType(
    {
        "ref": "entry",
        "item": "entry",
        "course": "course",
        "related": "note",
        "link": "note",
    }
)


def actions(snap: BufferView, analysis: Analysis, line: int, start: int, end: int) -> list[Action]:
    """The actions for the references between (line, start) and (line, end)."""
    out: list[Action] = []
    for span in analysis.spans:
        if span.line != line or span.end < start or span.start > end:
            continue
        if span.state == "dangling" and suggestible(span.ref.style):
            out.extend(_dangling(snap, analysis, span))
        elif span.target and span.ref.kind == "link":
            add = add_requires(snap, analysis, span)
            if add is not None:
                out.append(add)
    return out


def _dangling(snap: BufferView, analysis: Analysis, span: Span) -> list[Action]:
    ref = span.ref
    name = ref.target.strip()
    out = []
    doc_type = new_type(analysis, span)
    if name and "/" not in name:
        slug = name if re.fullmatch(r"[\w.-]+", name) else None
        out.append(
            Action(
                f"Create {doc_type} '{name}'",
                "quickfix",
                create=NewNote(doc_type, name, slug),
                code="dangling-ref",
            )
        )
    suggestion = snap.suggester.suggest(name)
    offset = analysis.lines[span.line].find(name, span.start, span.end + 1)
    if suggestion and offset != -1:
        edit = TextEdit(span.line, offset, offset + len(name), suggestion)
        out.insert(
            0, Action(f"Replace with '{suggestion}'", "quickfix", (edit,), code="dangling-ref")
        )
    return out


def new_type(analysis: Analysis, span: Span) -> str:
    """The type of document a dangling reference asks for."""
    kind = span.ref.kind
    if kind == "requires":
        here = analysis.document_at(span.line)
        return "topic" if here is not None and here.type in ("topic", "unit") else "note"
    return _TYPE_OF_KIND.get(kind, "note")


def add_requires(snap: BufferView, analysis: Analysis, span: Span) -> Action | None:
    """Add the target of a body link to the ``requires`` of the file's front matter."""
    target = snap.docs.get(span.target or "")
    here = analysis.documents[0] if analysis.documents else None
    if target is None or (here is not None and target.key == here.key):
        return None
    if here is not None and _already(snap, analysis, target.key):
        return None
    edit = requires_edit(analysis.lines, target.id)
    if edit is None:
        return None
    return Action(f"Add '{target.id}' to requires", "refactor", (edit,))


def _already(snap: BufferView, analysis: Analysis, key: str) -> bool:
    return any(s.ref.kind == "requires" and s.target == key for s in analysis.spans)


def requires_edit(lines: list[str], name: str) -> TextEdit | None:
    """The edit that adds ``name`` to ``requires`` (None where the front matter's form is
    not one this can edit safely: JSON, a multi-line flow list)."""
    found = fences(lines, open_ended=True)
    if found is None:
        if next((ln for ln in lines if ln.strip()), "").lstrip("\ufeff").startswith("{"):
            return None  # JSON front matter
        return TextEdit(0, 0, 0, f"---\nrequires: [{_yaml(name)}]\n---\n")
    first, close = found
    if close == len(lines):
        return None  # never closed: not a form this can edit
    toml = fence_format(lines[first]) == "toml"
    value = json.dumps(name, ensure_ascii=False) if toml else _yaml(name)
    key = re.compile(r"^requires\s*=" if toml else r"^requires\s*:")
    for n in range(first + 1, close):
        if key.match(lines[n]):
            return _into_list(lines, n, close, value, toml)
    keyword = "requires = " if toml else "requires: "
    return TextEdit(close, 0, 0, f"{keyword}[{value}]\n")


def _into_list(lines: list[str], n: int, close: int, value: str, toml: bool) -> TextEdit | None:
    text = lines[n]
    flow = (_TOML_FLOW if toml else _FLOW).match(text)
    if flow:
        inside = flow.group(2)
        at = flow.end(2)
        return TextEdit(n, at, at, (", " if inside.strip() else "") + value)
    if toml:
        return None  # a multi-line TOML array
    colon = text.index(":") + 1
    rest = text[colon:].strip()
    if rest and not rest.startswith("#"):  # one value: make it a list of two
        at = text.index(rest, colon)
        return TextEdit(n, at, at + len(rest), f"[{rest}, {value}]")
    last, indent = n, "  "
    for m in range(n + 1, close):
        item = re.match(r"^(\s*)-(\s|$)", lines[m])
        if item:
            last, indent = m, item.group(1)
        elif lines[m].strip() and not lines[m][:1].isspace():
            break
    if last == n:  # `requires:` with nothing under it
        return TextEdit(n, colon, colon, f" [{value}]")
    end = len(lines[last])
    return TextEdit(last, end, end, f"\n{indent}- {value}")


def _yaml(name: str) -> str:
    return (
        name
        if _YAML_PLAIN.match(name) and fold(name) not in ("true", "false", "null", "yes", "no")
        else json.dumps(name, ensure_ascii=False)
    )
