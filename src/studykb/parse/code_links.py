"""Links into the code of a tracked repository: ``[[NAME:path/to/file.py]]``.

The forms, each also with ``|label``::

    [[cs336:assignment1/bpe.py]]                  a file (or a folder)
    [[cs336:assignment1/bpe.py#L10-40]]           a line range (``#L10``: one line)
    [[deepinfer:python/deepinfer/llm.py#LLM.generate]]   a symbol (``A::f`` is ``A.f``)
    [[cs336:assignment1/bpe.py#L10-40@a1b2c3]]    at a commit (a hex prefix, a tag or branch)

It is a wikilink whose target is ``NAME:path``: the repository's name stands where a
document's name stands and the anchor after ``#`` says where in the file, as a heading
does for a note. A colon never starts a wikilink target otherwise: Obsidian refuses it in
file names, and a title with a colon is written with a space after it (``[[CUDA: intro]]``),
which this form does not allow. So ``[[cs336]]`` is the course and ``[[cs336:a1/bpe.py]]``
a file of its repository, and both are references to the course or entry that tracks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A repository's name: a document id or a ``[repos.NAME]`` of studykb.toml.
NAME = r"[A-Za-z0-9][\w.-]*"
_CODE = re.compile(
    rf"^(?P<repo>{NAME}):(?!//)(?P<path>[^\s#|@][^#|]*?)"
    r"(?:#(?P<anchor>[^@|]*))?(?:@(?P<rev>[\w.-]+))?$"
)
_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
_SYMBOL = re.compile(r"^[A-Za-z_~][\w~]*(?:(?:\.|::)[A-Za-z_~][\w~]*)*$")


@dataclass(frozen=True)
class CodeLink:
    """Where a code link points."""

    repo: str
    path: str
    """The file (or folder) in the repository, with ``/``, no leading ``/``."""
    lines: tuple[int, int] | None = None
    symbol: str | None = None
    """Dotted: ``LLM.generate`` (``ns::f`` becomes ``ns.f``)."""
    rev: str | None = None
    """The commit (or tag, branch) it follows; None: HEAD."""
    bad_anchor: str = ""
    """An anchor that is neither ``L..`` nor a symbol name, as written."""

    @property
    def where(self) -> str:
        """``path#anchor`` as written back (without the commit)."""
        if self.lines:
            a, b = self.lines
            return f"{self.path}#L{a}" + (f"-{b}" if b != a else "")
        if self.symbol:
            return f"{self.path}#{self.symbol}"
        return self.path


def code_link(target: str) -> CodeLink | None:
    """The code link a wikilink target (``NAME:path#anchor@rev``, no label) makes, or None."""
    found = _CODE.match(target.strip())
    if found is None:
        return None
    path = found["path"].strip().strip("/")
    if not path:
        return None
    anchor = (found["anchor"] or "").strip()
    lines = symbol = None
    bad = ""
    if anchor:
        numbers = _LINES.match(anchor)
        if numbers:
            a = int(numbers[1])
            b = int(numbers[2] or a)
            lines = (a, b)
        elif _SYMBOL.match(anchor):
            symbol = anchor.replace("::", ".")
        else:
            bad = anchor
    return CodeLink(found["repo"], path, lines, symbol, found["rev"], bad)


def split_wikilink(text: str) -> CodeLink | None:
    """The code link written as ``[[...]]`` (or ``![[...]]``) in ``text``, or None."""
    inner = text.strip().lstrip("!")
    if not (inner.startswith("[[") and inner.endswith("]]")):
        return None
    body = inner[2:-2].replace("\\|", "|").partition("|")[0]
    return code_link(body)
