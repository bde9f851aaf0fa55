"""Files a page pastes into itself, found on disk: their headings are anchors of the page.

Parsing records each include as written (``parse/includes.py``); here the file is looked
up the way the generator does, only ever inside the vault:

- Hugo ``{{% include "p" %}}`` (the pattern Hugo documents: ``.Page.GetPage`` then
  ``site.GetPage``): a page path, relative to the page's folder, then to each content
  folder; ``p``, ``p.md``, ``p/_index.md`` or ``p/index.md``.
- Hugo ``{{< readfile file="f" >}}`` (``readFile``: relative to the project folder; Docsy's
  and Hugo's docs' shortcodes also try the page's folder): the project folder, the page's
  folder, the content folders.
- pymdownx.snippets ``--8<-- "f"``: each ``base_path`` in turn, never leaving it
  (``restrict_base_path``, its default).

An included file may include others (followed a few levels deep, each file once); one that
cannot be found is a ``missing-attachment`` warning at the line of the call.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from studykb import parse
from studykb.parse.outline import Include, Label, Outline
from studykb.parse.reading import Reading
from studykb.parse.slugs import Heading
from studykb.vault.state.rows import AnchorProblem

#: How deep includes of includes are followed (pymdownx.snippets and Hugo nest them).
MAX_DEPTH = 5
#: An included file larger than this is not read (it is no page's few paragraphs).
MAX_BYTES = 4 << 20


def _inside(path: str) -> str | None:
    """``path`` normalised, or None when it leaves the vault."""
    if not path or path.startswith("/") or "\\" in path:
        return None
    clean = posixpath.normpath(path)
    return None if clean == ".." or clean.startswith("../") else clean


def _join(base: str, rest: str) -> str | None:
    return _inside(rest if base in ("", ".") else f"{base}/{rest}")


def candidates(inc: Include, page: str, reading: Reading) -> list[str]:
    """The vault paths the generator tries for ``inc`` written in ``page``, in order."""
    folder = posixpath.dirname(page)
    bases = reading.include_bases
    out: list[str | None] = []
    if inc.kind == "snippet":
        for base in bases or (".",):
            found = _join(base, inc.target)
            if found is not None and (base == "." or found.startswith(base.rstrip("/") + "/")):
                out.append(found)
        return [p for p in out if p is not None]
    rest = inc.target.lstrip("/")
    content = bases[1:] or reading.content_dirs
    if inc.kind == "readfile":
        out = [_join(bases[0] if bases else ".", rest), _join(folder, inc.target)]
        out += [_join(c, rest) for c in content]
        return list(dict.fromkeys(p for p in out if p is not None))
    starts = [] if inc.target.startswith("/") else [folder, reading.page_folder(page)]
    for start in (*starts, *content):
        stem = _join(start, rest)
        if stem is not None:
            out += [stem, f"{stem}.md", f"{stem}/_index.md", f"{stem}/index.md"]
    return list(dict.fromkeys(p for p in out if p is not None))


@dataclass
class Includes:
    """Finds included files under ``root`` and reads their outlines, each file once."""

    root: Path
    reading: Reading
    _outlines: dict[str, Outline | None] = field(default_factory=dict)

    def find(self, inc: Include, page: str) -> str | None:
        """The vault path of the file ``inc`` pastes into ``page``, or None."""
        real_root = self.root.resolve()
        for path in candidates(inc, page, self.reading):
            file = self.root / path
            if file.is_file() and file.resolve().is_relative_to(real_root):
                return path
        return None

    def outline(self, path: str) -> Outline | None:
        """The outline of the file at ``path`` as its own page (None: unreadable)."""
        if path not in self._outlines:
            self._outlines[path] = self._read(path)
        return self._outlines[path]

    def _read(self, path: str) -> Outline | None:
        try:
            file = self.root / path
            if file.stat().st_size > MAX_BYTES:
                return None
            raw = file.read_bytes()
        except OSError:
            return None
        if not path.lower().endswith((".md", ".markdown", ".mdx")):
            return Outline()  # code, data: pasted in, but no headings of Markdown
        # parse_file on first use: markdown-it and YAML load only where an include is read
        return Outline.from_json(parse.parse_file(path, raw, self.reading).outline)

    def expand(self, page: str, outline: Outline, seen: frozenset[str] = frozenset()) -> Outline:
        """``outline`` with the headings, labels and ids of every file the page includes,
        where each include stands (at the include's line)."""
        if not outline.includes or len(seen) >= MAX_DEPTH:
            return outline
        headings: list[tuple[int, int, Heading]] = [(h.line, 0, h) for h in outline.headings]
        labels = list(outline.labels)
        ids = list(outline.ids)
        for inc in outline.includes:
            path = self.find(inc, page)
            if path is None or path in seen or path == page:
                continue
            found = self.outline(path)
            if found is None:
                continue
            inner = self.expand(path, found, seen | {page})
            headings += [(inc.line, 1, replace(h, line=inc.line)) for h in inner.headings]
            labels += [Label(x.name, inc.line) for x in inner.labels]
            ids += [Label(x.name, inc.line) for x in inner.ids]
        ordered = tuple(h for _ln, _o, h in sorted(headings, key=lambda t: (t[0], t[1])))
        return Outline(ordered, tuple(labels), tuple(ids), outline.includes, outline.pending)

    def missing(self, page: str, outline: Outline) -> Iterable[tuple[int, str]]:
        """(line, message) for each include of ``page`` whose file is not in the vault."""
        for inc in outline.includes:
            if self.find(inc, page) is None:
                yield inc.line, f"{inc.text!r}: no file {inc.target!r} in the vault to include"


def expanding(
    outlines: Callable[[str], str | None], includes: Includes | None
) -> Callable[[str], Outline]:
    """A reader of stored outlines (JSON) that counts the headings of included files."""

    def read(path: str) -> Outline:
        outline = Outline.from_json(outlines(path))
        return includes.expand(path, outline) if includes is not None else outline

    return read


def pending_rows(outlines: Iterable[tuple[str, str]], includes: Includes) -> list[AnchorProblem]:
    """``anchors`` rows for same-page links of pages with includes (``Pending``) that name
    no heading of the page with its includes."""
    out = []
    for path, text in outlines:
        outline = Outline.from_json(text)
        if not outline.pending:
            continue
        full = includes.expand(path, outline)
        for p in outline.pending:
            if full.find(p.anchor, includes.reading) is None:
                message = f"{p.text!r}: this page has no heading {p.anchor!r}"
                out.append(AnchorProblem(path, p.line, message, path))
    return out
