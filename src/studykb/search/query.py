"""Full-text search over the vault: options in, ranked hits with snippets out.

The whoosh side (the index, running a query) lives in :mod:`studykb.search.searcher` and
its siblings; this layer reads the options, checks the query, turns filters into index
terms, and builds :class:`Hit` values with a snippet around the best match. Front ends call
:func:`studykb.search.index.sync` first (the CLI does) so the index follows the vault.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from studykb.errors import UsageError
from studykb.model import DOC_TYPES
from studykb.search.snippets import snippet
from studykb.search.state import EXACT_FIELDS, TEXT_FIELDS
from studykb.search.understand import plain, read, remember_names
from studykb.text.analysis import Analyser
from studykb.vault import Vault
from studykb.vault.lookup import find
from studykb.vault.topics import TopicTable

#: Longer queries are cut (at a word boundary) to this many characters.
MAX_QUERY_CHARS = 500
#: Fields a query may name as ``field:value``.
QUERY_FIELDS = (*TEXT_FIELDS, *(name for name in EXACT_FIELDS if name != "exact"))
_OPERATORS = ("AND", "OR", "NOT", "ANDNOT", "ANDMAYBE")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
_FIELD = re.compile(r"(?<![\w.:/])([A-Za-z][A-Za-z_]+):(?=(\S?))")
_WORDY = re.compile(r"[^\W_]", re.UNICODE)


@dataclass(frozen=True)
class SearchOptions:
    """What to look for; filled by each front end in one place."""

    query: str = ""
    """Whoosh query language: words (all must match), OR, NOT, "phrase", field:value, prefix*."""
    types: tuple[str, ...] = ()
    """Keep documents of these types (any of them)."""
    tags: tuple[str, ...] = ()
    """Keep documents carrying one of these tags or covering one of these topics."""
    course: str | None = None
    """Keep notes of this course (id, alias or path), its units and the course itself."""
    status: str | None = None
    """Keep documents with this status (todo, reading, done; read/learned mean done)."""
    level: int | str | None = None
    """Keep documents of this level (1-5, or intro/intermediate/advanced)."""
    limit: int = 10
    """At most this many hits."""
    expand: bool = True
    """Also search the other names (the other language) of topics the query names."""
    proximity: bool = True
    """Score documents holding the query's words together (a phrase, or close) higher."""

    @property
    def filtered(self) -> bool:
        return bool(self.types or self.tags or self.course or self.status or self.level)


@dataclass(frozen=True)
class Hit:
    """One matching document."""

    key: str
    """Document key: the vault path, or ``path#unit`` for a course unit."""
    id: str
    """The document's id."""
    path: str
    """Vault-relative path of its file."""
    title: str
    """Its title."""
    type: str
    """note, entry, topic, course, list or unit."""
    score: float
    """BM25F relevance (titles and aliases weigh more than the body); 0 for a filter-only list."""
    snippet: str
    """Plain text around the best match in the body (or the start of the body)."""
    highlights: tuple[tuple[int, int], ...] = ()
    """(start, end) character ranges in ``snippet`` of the matched words."""
    tags: tuple[str, ...] = ()
    """Tags, covered topics' ids included."""
    status: str | None = None
    level: int | None = None
    course: tuple[str, ...] = ()
    """Keys of the course(s) the document belongs to."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "type": self.type,
            "score": round(self.score, 3),
            "snippet": self.snippet,
            "key": self.key,
            "highlights": [list(h) for h in self.highlights],
            "tags": list(self.tags),
            "status": self.status,
            "level": self.level,
            "course": list(self.course),
        }


@dataclass(frozen=True)
class Found:
    """What a search found, and how the query was read."""

    hits: list[Hit]
    notes: list[str]
    """How the query was read (cut, cleaned, only common words), for the user."""
    also: list[str] = field(default_factory=list)
    """Other names of the topic the query names, searched too (投机解码 -> speculative decoding)."""


# -- the query text ----------------------------------------------------------------------


def clean_query(text: str) -> tuple[str, list[str]]:
    """The query as it will run, and notes on what was changed (for stderr)."""
    notes = []
    cleaned = unicodedata.normalize("NFC", _ANSI.sub(" ", text))
    if _CONTROL.search(cleaned) or cleaned != unicodedata.normalize("NFC", text):
        notes.append("control characters in the query were ignored")
        cleaned = _CONTROL.sub(" ", cleaned)
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > MAX_QUERY_CHARS:
        cut = _cut(cleaned, MAX_QUERY_CHARS)
        if cut.count('"') % 2:
            cut = cut[: cut.rfind('"')].rstrip()
        cut = _whole_terms(cut)
        notes.append(f"the query is long; only its first {len(cut)} characters were used")
        cleaned = _balance(cut)
    return cleaned, notes


def _cut(text: str, size: int) -> str:
    """At most ``size`` characters of ``text``, ending at the end of a word."""
    cut = text[:size]
    if text[size : size + 1].isspace():
        return cut
    if " " in cut[size // 2 :]:
        return cut[: cut.rfind(" ")]
    from studykb.text.analysis import Analyser  # no space to cut at (Chinese): drop a cut word

    starts = [start for _t, start, _e in Analyser().spans(cut)]  # where, not which stems
    return cut[: max(starts)] if starts and max(starts) > 0 else cut


#: What a cut can leave dangling at the end of a query: an operator without its right
#: side, an opening parenthesis, a field name without its value.
_DANGLING = re.compile(
    r"(?:(?:^|\s)(?:" + "|".join(_OPERATORS) + r")|\(|(?:^|[\s(])[A-Za-z][A-Za-z_]+:)$"
)


def _whole_terms(text: str) -> str:
    """A cut query without what it left dangling at its end (``a OR b OR``), so what
    runs is the query's first terms, valid as the whole one was."""
    while (trimmed := _DANGLING.sub("", text).rstrip()) != text:
        text = trimmed
    return text


def _balance(text: str) -> str:
    """Close the parentheses a cut left open (outside quotes)."""
    depth = 0
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")" and depth:
            depth -= 1
    return text + ")" * depth


def check_syntax(text: str) -> None:
    """Raise UsageError for a query whoosh would silently misread."""
    if text.count('"') % 2:
        _bad(text, 'a quote is not closed; add the closing "')
    outside = re.sub(r'"[^"]*"', ' "" ', text)
    depth = 0
    for ch in outside:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                _bad(text, "a ')' has no matching '('")
    if depth > 0:
        _bad(text, "a '(' is not closed")
    if outside.count("[") + outside.count("{") != outside.count("]") + outside.count("}"):
        _bad(text, "a range is not closed; write [a TO b]")
    words = re.findall(r"\(|\)|[^\s()]+", outside)
    prev = None
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if word in _OPERATORS:
            if word != "NOT" and (prev is None or prev in _OPERATORS or prev == "("):
                _bad(text, f"{word} needs something to search for on its left")
            if nxt is None or nxt == ")" or (nxt in _OPERATORS and nxt != "NOT"):
                _bad(text, f"{word} needs something to search for on its right")
        prev = word
    for m in _FIELD.finditer(outside):
        name, after = m.group(1), m.group(2)
        if name in QUERY_FIELDS:
            if not after:
                _bad(text, f"{name}: needs a value, e.g. {name}:word")
        elif after and after not in "/\\:" and not name.lower().startswith(("http", "ftp")):
            close = difflib.get_close_matches(name.lower(), QUERY_FIELDS, n=1)
            hint = f" (did you mean {close[0]}:?)" if close else ""
            _bad(
                text,
                f"there is no field {name!r}{hint}; put the words in quotes to "
                "search for them as written",
            )


def _bad(text: str, why: str) -> None:
    # deferred: loads whoosh
    from studykb.search.searcher import QUERY_HELP

    shown = text if len(text) <= 80 else text[:77] + "..."
    raise UsageError(f"Cannot read the query {shown!r}: {why}.", hint=QUERY_HELP)


def has_words(text: str) -> bool:
    """Whether the query holds anything searchable (letters, digits, Chinese, or ``*``)."""
    return bool(_WORDY.search(text)) or text.strip() == "*"


# -- filters -----------------------------------------------------------------------------


Filter = list[tuple[str, str]]


def _filters(vault: Vault, opts: SearchOptions) -> list[Filter]:
    """Groups of (field, value): a document must match one pair of every group."""
    groups: list[Filter] = []
    if opts.types:
        bad = [t for t in opts.types if t not in DOC_TYPES]
        if bad:
            raise UsageError(f"Unknown type {bad[0]!r}; types are {', '.join(DOC_TYPES)}.")
        groups.append([("type", t) for t in dict.fromkeys(opts.types)])
    if opts.tags:
        topics = vault.topics()
        group: Filter = []
        for tag in opts.tags:
            folded = tag.strip().casefold()
            group.append(("tag", folded))
            key = topics.names.get(folded)
            if key:  # a tag naming a topic: documents covering it, and the topic itself
                group += [("tag", topics.ids[key].casefold()), ("key", key)]
        groups.append(list(dict.fromkeys(group)))
    if opts.course:
        groups.append([("course", _course_key(vault, opts.course))])
    if opts.status:
        status = _status(opts.status)
        # no status written means not read yet, as plans count it: todo matches it too
        groups.append([("status", status), *([("status", "")] if status == "todo" else [])])
    if opts.level is not None and opts.level != "":
        groups.append([("level", str(_level(opts.level)))])
    return groups


def _course_key(vault: Vault, name: str) -> str:
    doc = find(vault, name)
    if doc.type == "unit" and doc.parent:
        return doc.parent
    return doc.key


def _status(value: str) -> str:
    # deferred: loads markdown_it, mdit_py_plugins
    from studykb.parse.document import STATUS_WORDS

    word = value.strip().lower()
    if word not in STATUS_WORDS:
        raise UsageError(f"Unknown status {value!r}; use todo, reading or done.")
    return STATUS_WORDS[word]


def _level(value: int | str) -> int:
    # deferred: loads markdown_it, mdit_py_plugins
    from studykb.parse.document import LEVEL_WORDS

    word = str(value).strip().lower()
    level = LEVEL_WORDS.get(word) or (int(word) if word.isdigit() else 0)
    if not 1 <= level <= 5:
        raise UsageError(f"Unknown level {value!r}; use 1 to 5 (or intro, intermediate, advanced).")
    return level


# -- running it --------------------------------------------------------------------------


def search(vault: Vault, opts: SearchOptions) -> list[Hit]:
    """Ranked hits for ``opts`` (the index should be synced first: :func:`index.sync`).

    A plain query (words, no query syntax) is ranked by :mod:`studykb.search.ranking`:
    documents with more of its words, with its words together, and with the other names
    of the topics it names. An empty query lists the documents the filters keep (in
    path order); without filters it is a UsageError. A query of only stop words or
    punctuation finds nothing.
    """
    # deferred: loads whoosh
    from studykb.search import searcher

    text, _notes = clean_query(opts.query)
    if opts.limit < 1:
        raise UsageError("--limit must be at least 1.")
    if not text and not opts.filtered:
        raise UsageError(
            "Nothing to search for.",
            hint='Give words, a "phrase" or field:value; or a filter such as '
            "--type topic to list documents.",
        )
    if text and not has_words(text):
        return []
    if text:
        check_syntax(text)
    groups = _filters(vault, opts)
    topics = _topics(vault)
    if text and plain(text):
        # deferred: loads whoosh
        from studykb.search.ranking import plain_query, terms_of

        reading = read(text, topics, opts.expand)
        q = plain_query(reading, opts.proximity)
        answer = searcher.run(vault, q, groups, opts.limit, terms_of(reading))
        if not reading.words and not reading.also:
            return []
    else:
        names = _expansions(vault, text) if opts.expand else []
        answer = searcher.query(vault, text, groups, opts.limit, names)
    if answer.empty:
        return []
    return [_hit(vault, found, answer.terms) for found in answer.hits]


def also_searched(vault: Vault, opts: SearchOptions) -> list[str]:
    """The other names of the topics the query names, which :func:`search` looks for too
    (算子融合 -> kernel fusion, operator fusion...)."""
    text, _notes = clean_query(opts.query)
    if not text or not opts.expand or not has_words(text):
        return []
    if plain(text):
        return read(text, _topics(vault)).also
    return _expansions(vault, text)


def _topics(vault: Vault) -> TopicTable:
    """The topic table, with its names as queries compare them (a derived structure)."""
    # deferred: the names' structure loads the topic table's code, which a query with
    # syntax never needs
    from studykb.search.names import SEARCH_NAMES

    topics = vault.topics()
    remember_names(topics, vault.derived(SEARCH_NAMES))
    return topics


def explain(opts: SearchOptions) -> list[str]:
    """Notes for the user about how the query was read (cut, cleaned, nothing to find)."""
    text, notes = clean_query(opts.query)
    if text and not has_words(text):
        notes.append("the query has no words in it (only punctuation)")
    elif (
        text
        and text != "*"
        and not Analyser().analyze(re.sub(r"\b[A-Za-z_]+:", " ", text))  # whether, not which
        and not re.search(r"\b(?:" + "|".join(QUERY_FIELDS) + r"):\S", text)
    ):
        notes.append("the query has only common words (the, of, and ...) that are not indexed")
    return notes


def _expansions(vault: Vault, text: str) -> list[str]:
    """Other names of the topic the whole query names (投机解码 -> speculative decoding)."""
    bare = text.strip().strip('"').strip()
    if (
        not bare
        or any(c in bare for c in '"():*?[]{}^')
        or any(w in _OPERATORS for w in bare.split())
    ):
        return []
    return [n for n in vault.topics().named(bare) if n.casefold() != bare.casefold()]


def _hit(vault: Vault, found: Any, terms: frozenset[str]) -> Hit:
    f = found.fields
    doc = vault.document(found.key)
    marks: tuple[tuple[int, int], ...] = ()
    if f.get("type") == "unit":
        course = vault.document(f["path"])
        text = f"Unit of {course.title}" if course else "Course unit"
    elif doc is not None:
        text, marks = snippet(vault, doc, terms)
    else:
        text = ""
    level = f.get("level") or ""
    return Hit(
        key=found.key,
        id=f.get("id", ""),
        path=f.get("path", ""),
        title=f.get("title", ""),
        type=f.get("type", ""),
        score=found.score,
        snippet=text,
        highlights=marks,
        tags=tuple(t for t in (f.get("tag") or "").split(",") if t),
        status=f.get("status") or None,
        level=int(level) if level.isdigit() else None,
        course=tuple(c for c in (f.get("course") or "").split(",") if c),
    )
