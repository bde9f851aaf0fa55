"""The text of one editor buffer, read against the vault: where its references are, what
they resolve to, and its problems before it is saved (the names completion offers are in
:mod:`studykb.vault.names`).

No editor protocol here (``studykb.editor`` turns these values into its messages). Lines
and columns are 0-based and count code points; a :class:`BufferView` is an immutable view
of the vault, rebuilt after each refresh, so it may be read from any thread.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.config import Config
from studykb.model import Document, Problem, Reference
from studykb.parse import parse_file
from studykb.parse.outline import Outline
from studykb.parse.placing import place
from studykb.parse.reading import GITHUB, Reading
from studykb.vault.checks import missing_anchors, wants_anchor_check
from studykb.vault.flavour import of_config
from studykb.vault.includes import Includes, pending_rows
from studykb.vault.names import NameIndex
from studykb.vault.resolve import ID, SITE_LINK_MESSAGE, Names, bad_code, fold, names_json
from studykb.vault.suggest import Suggester, did_you_mean, suggestible

if TYPE_CHECKING:
    from studykb.vault import BuildStats, Vault

#: Vault-wide problems that cannot be recomputed from one buffer; shown from the last refresh.
VAULT_CODES = ("cycle", "too-large", "symlink-loop", "not-a-file", "interrupted-write")
#: Above this many changed files a new view is built from scratch.
INCREMENTAL_LIMIT = 200


@dataclass
class BufferView:
    """What the editor features need from the vault, detached from its database."""

    config: Config
    docs: dict[str, Document]
    names: Names
    vault_problems: dict[str, list[Problem]] = field(default_factory=dict)
    index: NameIndex = field(default_factory=lambda: NameIndex({}))
    suggester: Suggester = field(default_factory=lambda: Suggester(()))
    """The "did you mean" of dangling names (the same as ``check``'s)."""
    reading: Reading = GITHUB
    """The rules the vault is read with (its site generator's), as ``check`` reads it."""

    @classmethod
    def build(
        cls, config: Config, docs: dict[str, Document], problems: list[Problem]
    ) -> BufferView:
        """From the vault's documents and problems; the name table is built in memory, so
        the view needs no database connection (it may be made in another thread)."""
        _site, reading = of_config(config)
        names = Names(_rows(docs.values()), reading.content_dirs)
        return cls(
            config,
            docs,
            names,
            _vault_problems(problems),
            NameIndex(docs),
            Suggester.of(names.table),
            reading,
        )

    def updated(self, vault: Vault, stats: BuildStats) -> BufferView:
        """The view after a refresh: only the documents of changed files are reloaded
        (everything when many files changed)."""
        changed = {*stats.added, *stats.modified, *stats.removed}
        if not self.docs or len(changed) > INCREMENTAL_LIMIT:
            return BufferView.build(vault.config, vault.documents(), vault.problems())
        fresh = vault.documents_for(vault.keys_in(sorted({*stats.added, *stats.modified})))
        gone = [d for d in self.docs.values() if d.path in changed]
        docs = {k: d for k, d in self.docs.items() if d.path not in changed}
        docs.update(fresh)
        names = _names_updated(self.names, gone, fresh.values())
        return BufferView(
            vault.config,
            docs,
            names,
            _vault_problems(vault.problems()),
            self.index.updated(docs, gone, fresh.values()),
            Suggester.of(names.table),
            vault.reading,
        )

    @classmethod
    def empty(cls, config: Config) -> BufferView:
        return cls(config, {}, Names([]))


def view(
    vault: Vault, base: BufferView | None = None, stats: BuildStats | None = None
) -> BufferView:
    """The vault as buffers are read against it: built whole, or ``base`` after the
    refresh ``stats`` tells (see :meth:`BufferView.updated`)."""
    if base is None or stats is None:
        return BufferView.build(vault.config, vault.documents(), vault.problems())
    return base.updated(vault, stats)


def _vault_problems(problems: list[Problem]) -> dict[str, list[Problem]]:
    by_path: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        if p.code in VAULT_CODES or (p.code == "outside-vault" and not p.line):
            by_path[p.path].append(p)
    return dict(by_path)


def _rows(docs: Iterable[Document]) -> Iterator[tuple[str, str, str, str, str, str, str | None]]:
    """Documents as the rows a :class:`Names` table is built from."""
    for d in docs:
        yield (
            d.key,
            d.path,
            d.id,
            d.title,
            d.type,
            names_json(d.aliases, d.labels, d.site_urls),
            d.url,
        )


def _names_updated(names: Names, gone: list[Document], fresh: Iterable[Document]) -> Names:
    """A copy of ``names`` without the ``gone`` documents and with the ``fresh`` ones."""
    out = Names((), names.roots)
    out.table.update((name, list(bucket)) for name, bucket in names.table.items())
    out.urls.update((url, list(keys)) for url, keys in names.urls.items())
    out.paths.update(names.paths)
    out.types.update(names.types)
    drop = Names(_rows(gone), names.roots)
    for name, bucket in drop.table.items():
        kept = [entry for entry in out.table.get(name, ()) if entry not in bucket]
        if kept:
            out.table[name] = kept
        else:
            out.table.pop(name, None)
    for url, keys in drop.urls.items():
        left = [k for k in out.urls.get(url, ()) if k not in keys]
        if left:
            out.urls[url] = left
        else:
            out.urls.pop(url, None)
    for key in drop.paths:
        out.paths.pop(key, None)
        out.types.pop(key, None)
    add = Names(_rows(fresh), names.roots)
    for name, bucket in add.table.items():
        target = out.table[name]
        target.extend(entry for entry in bucket if entry not in target)
    for url, keys in add.urls.items():
        out.urls[url].extend(k for k in keys if k not in out.urls[url])
    out.paths.update(add.paths)
    out.types.update(add.types)
    return out


# -- references in a buffer ---------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    """A reference of the buffer with its place and resolution."""

    line: int
    start: int
    end: int
    ref: Reference
    target: str | None
    """Key of the document it resolves to."""
    state: str
    note: str = ""


@dataclass
class Analysis:
    """One version of a buffer, parsed and resolved against the vault."""

    path: str
    lines: list[str]
    documents: tuple[Document, ...]
    spans: list[Span]
    problems: list[Problem]
    headings: tuple[str, ...] = ()

    def span_at(self, line: int, col: int) -> Span | None:
        for span in self.spans:
            if span.line == line and span.start <= col <= span.end:
                return span
        return None

    def document_at(self, line: int) -> Document | None:
        """The document the cursor is in: a course unit when on its entry, else the file."""
        if not self.documents:
            return None
        best = self.documents[0]
        for doc in self.documents[1:]:
            if doc.line - 1 <= line:
                best = doc
        return best


#: The outline (JSON, ``parse.outline``) of the file at a vault path (None when unknown).
Headings = Callable[[str], "str | None"]


def analyse(snap: BufferView, path: str, text: str, headings: Headings | None = None) -> Analysis:
    """Parse ``text`` as the file at vault path ``path`` and resolve its references.

    Its problems are those ``check`` would report once it is saved: ``headings`` gives
    the stored headings of other files, for ``[[note#heading]]``.
    """
    parsed = parse_file(path, text.encode("utf-8", errors="surrogatepass"), snap.reading)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    config = snap.config
    problems: list[Problem] = []
    for p in parsed.problems:
        shown = config.as_configured(p)
        if shown is not None:
            problems.append(shown)
    spans = _spans(snap.names, parsed.references, lines)
    problems.extend(_reference_problems(snap, path, spans))
    problems.extend(_anchor_problems(snap, path, spans, parsed.outline, headings))
    problems.extend(_duplicate_ids(snap, path, parsed.documents, lines))
    problems.extend(snap.vault_problems.get(path, ()))
    return Analysis(path, lines, parsed.documents, spans, problems, parsed.headings)


def dangling_message(snap: BufferView, ref: Reference) -> str:
    """What ``check`` says of a reference that resolves to nothing."""
    name = snap.suggester.suggest(ref.target) if suggestible(ref.style) else None
    return f"{ref.text!r} resolves to no document" + did_you_mean(name)


def _reference_problems(snap: BufferView, path: str, spans: list[Span]) -> Iterator[Problem]:
    for span in spans:
        if span.state not in ("dangling", "ambiguous"):
            continue
        code = bad_code(span.state, span.ref.style)
        level = snap.config.severity_of(code)
        if level == "ignore":
            continue
        ref = span.ref
        if code == "dangling-link":
            message = SITE_LINK_MESSAGE.format(text=ref.text)
        elif span.state == "dangling":
            message = dangling_message(snap, ref)
        else:
            message = f"{ref.text!r} fits several documents; using {span.note}"
        yield Problem(path, ref.line, level, code, message)


def _anchor_problems(
    snap: BufferView, path: str, spans: list[Span], own: str, headings: Headings | None
) -> list[Problem]:
    """``[[note#heading]]`` where the note has no such heading (as ``check`` finds them)."""
    level = snap.config.severity_of("dangling-anchor")
    if level == "ignore":
        return []
    rows = []
    for span in spans:
        ref = span.ref
        doc = snap.docs.get(span.target) if span.target else None
        if doc is not None and wants_anchor_check(ref.anchor, span.target):
            rows.append((path, ref.line, ref.text, ref.anchor, doc.path))

    def stored(target: str) -> str | None:
        return own if target == path else headings(target) if headings else None

    if headings is None:  # nothing to compare other files' headings with
        rows = [row for row in rows if row[4] == path]
    includes = Includes(snap.config.root, snap.reading)
    found = missing_anchors(rows, stored, snap.reading, includes)
    found += pending_rows([(path, own)], includes)
    return [
        Problem(p, line, level, "dangling-anchor", message) for p, line, message, _target in found
    ]


def _spans(names: Names, refs: tuple[Reference, ...], lines: list[str]) -> list[Span]:
    """Each reference placed on its line (:func:`~studykb.parse.placing.place`), resolved."""
    out = []
    for p in place(refs, lines):
        ref = p.ref
        key, state, note = names.resolve(
            ref.source, ref.path, ref.target, ref.style, ref.anchor, ref.optional, ref.text
        )
        out.append(Span(p.line, p.start, p.end, ref, key, state, note))
    return out


def _duplicate_ids(
    snap: BufferView, path: str, docs: tuple[Document, ...], lines: list[str]
) -> list[Problem]:
    level = snap.config.severity_of("duplicate-id")
    if level == "ignore":
        return []
    out = []
    for doc in docs:
        if not doc.explicit_id or doc.type == "unit":
            continue
        others = sorted(
            {
                snap.names.paths[k]
                for lvl, k in snap.names.table.get(fold(doc.id), ())
                if lvl == ID
                and snap.names.paths.get(k) != path
                and snap.names.types.get(k) != "unit"
            }
        )
        if others:
            line = next(
                (
                    n + 1
                    for n, text in enumerate(lines[:200])
                    if re.match(r"""^\s*["']?id["']?\s*[:=]""", text)
                ),
                1,
            )
            out.append(
                Problem(
                    path,
                    line,
                    level,
                    "duplicate-id",
                    f"id {fold(doc.id)!r} is also declared in {', '.join(others)}",
                )
            )
    return out


# -- anchors -----------------------------------------------------------------------------
def anchor_line(
    lines: list[str], anchor: str, reading: Reading = GITHUB, path: str = "note.md"
) -> int:
    """The 0-based line of the heading (or label) ``anchor`` names, found as ``check`` finds
    it: by ``reading``'s anchor rules (``parse.outline``); 0 when none matches."""
    parsed = parse_file(path, "\n".join(lines).encode("utf-8", errors="surrogatepass"), reading)
    line = Outline.from_json(parsed.outline).find(anchor, reading)
    return line - 1 if line is not None else 0


#: A file outside any vault is checked against at most this many files beside it.
NEIGHBOURS_MAX = 2000


def neighbours(folder: Path) -> BufferView:
    """The Markdown files directly in ``folder``, parsed in memory: what a file outside
    any vault is checked against (nothing is written, nothing below it is read, so a
    home folder is never indexed)."""
    config = Config(root=folder, explicit=False, generator="github")
    _site, reading = of_config(config)
    docs: dict[str, Document] = {}
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)[:NEIGHBOURS_MAX]
    except OSError:
        entries = []
    for entry in entries:
        try:
            if not entry.name.lower().endswith(".md") or not entry.is_file():
                continue
            if entry.stat().st_size > config.max_file_bytes:
                continue
            raw = Path(entry.path).read_bytes()
        except OSError:
            continue
        for doc in parse_file(entry.name, raw, reading).documents:
            docs[doc.key] = doc
    return BufferView.build(config, docs, [])


__all__ = ["Analysis", "BufferView", "Span", "analyse", "anchor_line", "neighbours", "view"]
