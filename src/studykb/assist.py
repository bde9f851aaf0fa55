"""Editor help over the text of one buffer: where its references are, what they resolve to,
its problems before it is saved, and what to complete at the cursor.

No LSP types here (``lsp.py`` turns these values into protocol messages). Lines and
columns are 0-based and count code points; a :class:`Snapshot` is an immutable view of
the vault, rebuilt after each refresh, so it may be read from any thread.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field

from .config import Config
from .model import ERROR, Document, Problem, Reference
from .parse import parse_file
from .parse.document import REF_KEYS
from .vault.resolve import ID, Names, fold

#: Vault-wide problems that cannot be recomputed from one buffer; shown from the last refresh.
VAULT_CODES = ("cycle", "too-large", "symlink-loop", "not-a-file")
MAX_ITEMS = 100
_WIKI_OPEN = re.compile(r"!?\[\[([^\[\]\n]*)$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?[\"']?([A-Za-z_][\w-]*)[\"']?\s*[:=]")
_ITEM_LINE = re.compile(r"^(\s*)-(\s|$)")
_NEEDS_QUOTES = re.compile(r"[,\[\]{}:#&*!|>'\"%@`]|^[-?]|\s$")


@dataclass(frozen=True)
class Candidate:
    """One name a reference may use, for completion."""

    label: str
    """The name shown: an id, alias or title."""
    folded: str
    insert: str
    """What to write: the document's id (its path where the id is ambiguous)."""
    key: str
    which: str
    """``id``, ``alias`` or ``title``."""
    title: str
    type: str


@dataclass
class Snapshot:
    """What the editor features need from the vault, detached from its database."""

    config: Config
    docs: dict[str, Document]
    names: Names
    vault_problems: dict[str, list[Problem]] = field(default_factory=dict)
    candidates: list[Candidate] = field(default_factory=list)

    @classmethod
    def build(cls, config: Config, docs: dict[str, Document], names: Names,
              problems: list[Problem]) -> Snapshot:
        by_path: dict[str, list[Problem]] = defaultdict(list)
        for p in problems:
            if p.code in VAULT_CODES:
                by_path[p.path].append(p)
        return cls(config, docs, names, dict(by_path), _candidates(docs, names))

    @classmethod
    def empty(cls, config: Config) -> Snapshot:
        return cls(config, {}, Names([]))


def _candidates(docs: dict[str, Document], names: Names) -> list[Candidate]:
    out = []
    for key, doc in docs.items():
        insert = doc.id
        if len(names.candidates(doc.id)) > 1 and doc.type != "unit":
            insert = doc.path[:-3] if doc.path.lower().endswith(".md") else doc.path
        seen: set[str] = set()
        for which, label in (("id", doc.id), *(("alias", a) for a in doc.aliases),
                             ("title", doc.title)):
            folded = fold(label)
            if folded and folded not in seen:
                seen.add(folded)
                out.append(Candidate(label, folded, insert, key, which, doc.title, doc.type))
    out.sort(key=lambda c: (len(c.folded), c.folded))
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


def analyse(snap: Snapshot, path: str, text: str) -> Analysis:
    """Parse ``text`` as the file at vault path ``path`` and resolve its references."""
    parsed = parse_file(path, text.encode("utf-8", errors="surrogatepass"))
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    config = snap.config
    problems: list[Problem] = []
    for p in parsed.problems:
        level = config.severity.get(p.code, p.severity)
        if level != "ignore":
            problems.append(Problem(p.path, p.line, level, p.code, p.message))
    spans = _spans(snap.names, parsed.references, lines)
    for span in spans:
        if span.state not in ("dangling", "ambiguous"):
            continue
        code = "dangling-ref" if span.state == "dangling" else "ambiguous-ref"
        level = config.severity_of(code)
        if level == "ignore":
            continue
        ref = span.ref
        message = (f"{ref.text!r} resolves to no document" if span.state == "dangling"
                   else f"{ref.text!r} fits several documents; using {span.note}")
        problems.append(Problem(path, ref.line, level, code, message))
    problems.extend(_duplicate_ids(snap, path, parsed.documents, lines))
    problems.extend(snap.vault_problems.get(path, ()))
    return Analysis(path, lines, parsed.documents, spans, problems, parsed.headings)


def _spans(names: Names, refs: tuple[Reference, ...], lines: list[str]) -> list[Span]:
    """Place each reference on its line (the n-th occurrence of its text, left to right)."""
    cursor: dict[int, int] = {}
    out = []
    for ref in refs:
        index = min(max(ref.line - 1, 0), max(len(lines) - 1, 0))
        line = lines[index] if lines else ""
        start = cursor.get(index)
        if start is None:
            start = 0
            if ref.kind != "link":  # skip the key of `requires: [...]`
                match = _KEY_LINE.match(line)
                start = match.end() if match else 0
        col = line.find(ref.text, start)
        text = ref.text
        if col == -1 and ref.style == "url":
            text = re.sub(r"^https?://", "", ref.text)
            col = line.find(text, start)
        if col == -1:
            col, end = len(line) - len(line.lstrip()), len(line.rstrip())
        else:
            end = col + len(text)
            cursor[index] = end
        key, state, note = names.resolve(ref.source, ref.path, ref.target, ref.style,
                                         ref.anchor, ref.optional)
        out.append(Span(index, col, end, ref, key, state, note))
    return out


def _duplicate_ids(snap: Snapshot, path: str, docs: tuple[Document, ...],
                   lines: list[str]) -> list[Problem]:
    level = snap.config.severity_of("duplicate-id")
    if level == "ignore":
        return []
    out = []
    for doc in docs:
        if not doc.explicit_id or doc.type == "unit":
            continue
        others = sorted({snap.names.paths[k] for lvl, k in snap.names.table.get(fold(doc.id), ())
                         if lvl == ID and snap.names.paths.get(k) != path
                         and snap.names.types.get(k) != "unit"})
        if others:
            line = next((n + 1 for n, text in enumerate(lines[:200])
                         if re.match(r"""^\s*["']?id["']?\s*[:=]""", text)), 1)
            out.append(Problem(path, line, level, "duplicate-id",
                               f"id {fold(doc.id)!r} is also declared in {', '.join(others)}"))
    return out


# -- completion -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Completion:
    """Where completion applies at the cursor and what is typed so far."""

    kind: str
    """``wikilink`` (inside ``[[``), ``heading`` (after ``[[doc#``) or ``front`` (a
    front-matter reference list)."""
    prefix: str
    start: int
    """Column where the typed prefix starts (the edit replaces start..cursor)."""
    close: str = ""
    """Text to add after the insertion (``]]`` when the link is not closed yet)."""
    key: str = ""
    """For ``front``: the front-matter key; for ``heading``: the target name."""
    quoted: bool = False


def completion_context(lines: list[str], line: int, col: int) -> Completion | None:
    """What to complete at (line, col), or None outside references."""
    if line >= len(lines):
        return None
    text = lines[line]
    before = text[:col]
    match = _WIKI_OPEN.search(before)
    if match:
        inner = match.group(1)
        if "|" in inner:
            return None  # typing the label
        close = "" if text[col:].lstrip().startswith("]]") else "]]"
        if "#" in inner:
            target, _, part = inner.partition("#")
            return Completion("heading", part, col - len(part), close, target.strip())
        start = col - len(inner)
        return Completion("wikilink", inner, start, close)
    fm = _front_matter_range(lines)
    if fm is None or not fm[0] < line < fm[1]:
        return None
    key = _front_key(lines, line, fm[0], col)
    if key not in REF_KEYS:
        return None
    field_start = max(before.rfind(","), before.rfind("{")) + 1
    if re.match(r"\s*[\"']?reason[\"']?\s*:", before[field_start:]):
        return None  # the reason of `{ref: x, reason: ...}`
    seg = max(before.rfind(c) for c in ",[{:") + 1
    if seg == 0:
        item = _ITEM_LINE.match(before)
        seg = item.end() if item else 0
    start = seg + len(before[seg:]) - len(before[seg:].lstrip())
    quoted = before[start:start + 1] in ("'", '"')
    if quoted:
        start += 1
    return Completion("front", before[start:col], start, "", key, quoted)


def _front_matter_range(lines: list[str]) -> tuple[int, int] | None:
    """(opening fence line, closing fence line) of YAML/TOML front matter; unclosed: to the end."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first >= len(lines):
        return None
    fence = lines[first].strip().lstrip("\ufeff")
    if fence not in ("---", "+++"):
        return None
    closers = ("---", "...") if fence == "---" else ("+++",)
    for n in range(first + 1, len(lines)):
        if lines[n].rstrip() in closers:
            return first, n
    return first, len(lines)


def _front_key(lines: list[str], line: int, fm_start: int, col: int) -> str:
    """The front-matter key whose value the cursor is in (``requires`` for an item below it)."""
    current = lines[line]
    match = _KEY_LINE.match(current)
    if match:
        return match.group(2) if col >= match.end() else ""
    indent = len(current) - len(current.lstrip())
    for n in range(line - 1, fm_start, -1):
        text = lines[n]
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip())
        item = _ITEM_LINE.match(text)
        if own > indent or item:
            continue  # deeper content, or a sibling / enclosing list item
        match = _KEY_LINE.match(text)
        return match.group(2) if match else ""
    return ""


def complete(snap: Snapshot, ctx: Completion, *, limit: int = MAX_ITEMS, here: str = ""
             ) -> tuple[list[Candidate], bool]:
    """Candidates for ``ctx`` (best first) and whether the list was cut; the document at
    vault path ``here`` (the one being edited) is left out."""
    prefix = fold(ctx.prefix)
    prefer = "course" if ctx.key == "course" else None
    ranked: list[tuple[tuple, Candidate]] = []
    for cand in snap.candidates:
        name = cand.folded
        if not prefix or name.startswith(prefix):
            score = 0
        else:
            pos = name.find(prefix)
            if pos == -1:
                continue
            score = 1 if not name[pos - 1].isalnum() else 2
        ranked.append(((score, cand.type != prefer, cand.type == "unit",
                        {"id": 0, "alias": 1, "title": 2}[cand.which], len(name)), cand))
        if not prefix and len(ranked) >= limit * 4:
            break
    if len(ranked) < limit and len(prefix) > 1:
        pattern = re.compile(".*?".join(map(re.escape, prefix)))
        have = {id(c) for _s, c in ranked}
        for cand in snap.candidates:
            if id(cand) not in have and cand.key != here and pattern.search(cand.folded):
                ranked.append(((3, cand.type != prefer, cand.type == "unit", 3,
                                len(cand.folded)), cand))
    ranked.sort(key=lambda item: item[0])
    seen: set[tuple[str, str]] = set()
    out = []
    for _score, cand in ranked:
        if (cand.key, cand.folded) in seen:
            continue
        seen.add((cand.key, cand.folded))
        out.append(cand)
        if len(out) >= limit:
            return out, True
    return out, False


def insert_text(cand: Candidate, ctx: Completion) -> str:
    """What a chosen candidate writes at the cursor."""
    text = cand.insert
    if ctx.kind == "front" and not ctx.quoted and _NEEDS_QUOTES.search(text):
        text = json.dumps(text, ensure_ascii=False)
    return text + ctx.close


def headings_of(snap: Snapshot, target: str, from_path: str, vault_text) -> list[str]:  # type: ignore[no-untyped-def]
    """Headings of the document ``target`` names, for ``[[doc#...]]``."""
    key, _state, _note = snap.names.resolve("", from_path, target, "name", "", False)
    doc = snap.docs.get(key) if key else None
    if doc is None:
        return []
    return list(vault_text(doc.path)[1])


# -- hover ----------------------------------------------------------------------------------
def describe(doc: Document, summary_lines: int = 4) -> str:
    """Markdown for a hover: title, type, level, status, id and path, then the summary."""
    facts = [doc.type]
    if doc.level:
        facts.append(f"level {doc.level}")
    if doc.status:
        facts.append(doc.status)
    if doc.kind:
        facts.append(doc.kind)
    out = [f"**{doc.title}**", "", " · ".join(facts) + f" — `{doc.id}` in `{doc.path}`"]
    if doc.url:
        out.append(f"<{doc.url}>")
    if doc.summary and doc.summary != doc.title:
        words = doc.summary
        out.extend(["", _wrap(words, summary_lines)])
    return "\n".join(out)


def _wrap(text: str, max_lines: int, width: int = 80) -> str:
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
            if len(lines) == max_lines:
                return "\n".join(lines) + " …"
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return "\n".join(lines[:max_lines])


def anchor_line(lines: list[str], anchor: str) -> int:
    """The 0-based line of the heading ``anchor`` names (0 when none matches)."""
    want = _heading_key(anchor)
    for n, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped.startswith("#"):
            title = stripped.lstrip("#").strip()
            if _heading_key(title) == want:
                return n
    return 0


def _heading_key(text: str) -> str:
    return re.sub(r"[\s\-_]+", "-", fold(text)).strip("-")


def relative(root_parts: tuple[str, ...], file_parts: tuple[str, ...]) -> str | None:
    """Vault path of a file given as path parts, or None when it is outside the vault."""
    if file_parts[: len(root_parts)] != root_parts:
        return None
    return posixpath.join(*file_parts[len(root_parts):]) if len(file_parts) > len(
        root_parts) else None


__all__ = ["ERROR", "Analysis", "Candidate", "Completion", "Snapshot", "Span", "analyse",
           "complete", "completion_context", "describe"]
