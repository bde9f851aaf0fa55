"""A document's outline: its headings and labels, and which one a ``#fragment`` names.

The one place where an anchor meets a heading: ``check`` (``[[note#heading]]``, ``(x.md#a)``
and same-page ``#a``), the language server's go-to-definition and the site output all ask
:meth:`Outline.find`, with the vault's heading rules (:class:`~studykb.parse.reading.Reading`).
Stored as JSON in the state, so a target's outline is read without parsing it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from studykb.parse.reading import GITHUB, Reading, checkable
from studykb.parse.slugs import AnchorIndex, Heading

__all__ = ["Include", "Label", "Outline", "Pending", "checkable"]


@dataclass(frozen=True)
class Label:
    """A d2lbook ``:label:`` (an anchor the generator puts where it is defined)."""

    name: str
    line: int


@dataclass(frozen=True)
class Include:
    """A file the generator pastes into the page (Hugo's ``{{% include %}}`` and
    ``{{< readfile >}}``, pymdownx.snippets' ``--8<--``): its headings are the page's too.
    Parsing has no disk access: the vault finds the file (``vault/includes.py``)."""

    #: ``include``, ``readfile`` or ``snippet``: which rules find the file.
    kind: str
    #: The path as written (without a snippet's ``:1:5`` line range or ``:section``).
    target: str
    line: int
    #: The call as written, for messages.
    text: str


@dataclass(frozen=True)
class Pending:
    """A same-page ``#anchor`` link of a page with includes whose heading is not in the page
    itself: checked by the vault once the included files are read."""

    text: str
    anchor: str
    line: int


@dataclass(frozen=True)
class Outline:
    """Headings (inline Markdown as written) and labels of one file, in order."""

    headings: tuple[Heading, ...] = ()
    labels: tuple[Label, ...] = ()
    #: Anchors of raw HTML (``<a id="x">``), found as written.
    ids: tuple[Label, ...] = ()
    #: Files pasted into the page, in order.
    includes: tuple[Include, ...] = ()
    #: Same-page anchors left for the vault to check (see :class:`Pending`).
    pending: tuple[Pending, ...] = ()
    _indexes: dict[tuple[str, tuple[tuple[str, Any], ...]], AnchorIndex] = field(
        default_factory=dict, compare=False, repr=False
    )

    def to_json(self) -> str:
        return json.dumps(
            {
                "h": [[h.text, h.level, h.line, h.explicit_id] for h in self.headings],
                "l": [[label.name, label.line] for label in self.labels],
                **({"i": [[i.name, i.line] for i in self.ids]} if self.ids else {}),
                **(
                    {"inc": [[i.kind, i.target, i.line, i.text] for i in self.includes]}
                    if self.includes
                    else {}
                ),
                **(
                    {"pend": [[p.text, p.anchor, p.line] for p in self.pending]}
                    if self.pending
                    else {}
                ),
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str | None) -> Outline:
        """The outline stored as :meth:`to_json` (an empty one for anything else)."""
        try:
            data = json.loads(text or "{}")
            headings = tuple(
                Heading(str(t), int(lv), int(ln), None if i is None else str(i))
                for t, lv, ln, i in data.get("h", ())
            )
            labels = tuple(Label(str(n), int(ln)) for n, ln in data.get("l", ()))
            ids = tuple(Label(str(n), int(ln)) for n, ln in data.get("i", ()))
            includes = tuple(
                Include(str(k), str(t), int(ln), str(x)) for k, t, ln, x in data.get("inc", ())
            )
            pending = tuple(Pending(str(t), str(a), int(ln)) for t, a, ln in data.get("pend", ()))
        except (ValueError, TypeError, AttributeError):
            return cls()
        return cls(headings, labels, ids, includes, pending)

    @cached_property
    def _labels(self) -> dict[str, int]:
        named = (*self.labels, *self.ids)
        return {label.name: label.line for label in reversed(named)}

    def index(self, reading: Reading = GITHUB) -> AnchorIndex:
        """The anchors of the headings by ``reading``'s rules (made once per rules)."""
        key = (reading.heading_flavour, reading.heading_options)
        found = self._indexes.get(key)
        if found is None:
            found = AnchorIndex(self.headings, reading.heading_flavour, **reading.options)
            self._indexes[key] = found
        return found

    def find(self, anchor: str, reading: Reading = GITHUB) -> int | None:
        """The 1-based line of what ``#anchor`` names (a heading or a label), or None."""
        if anchor in self._labels:
            return self._labels[anchor]
        heading = self.index(reading).find(anchor)
        return heading.line if heading is not None else None

    def anchors(self, reading: Reading = GITHUB) -> list[str]:
        """The id of every heading (``""`` for none), in order."""
        return list(self.index(reading).anchors)
