"""Heading anchors the way each site generator makes them.

``anchors(headings, flavour)`` gives the ``id`` each generator puts on each heading, and
``find_heading(headings, anchor, flavour)`` tells which heading a ``#fragment`` (or an
Obsidian ``[[Note#Heading]]`` subpath) points at. ``Heading.text`` is the heading's inline
Markdown *as written* (markdown-it's inline token ``content``), because generators differ in
what they slug: GitHub, GitLab and Zola slug the rendered text, Hugo slugs the source line.

Sources of the rules (each function below says which it follows):

- GitHub.com: the ``TableOfContentsFilter`` of github's html-pipeline (``PUNCTUATION_REGEXP =
  /[^\\p{Word}\\- ]/u``; downcase, drop punctuation, ``' '`` -> ``-``, ``-1``, ``-2`` on
  duplicates), and the github-slugger npm package, whose fixtures (``test/fixtures.json``) pin
  the details: ``I ♥ unicode`` -> ``i--unicode``, emoji dropped, ``_`` kept, CJK kept.
- GitLab: ``Gitlab::Utils::Markdown#string_to_anchor`` and the Banzai ``TableOfContentsFilter``:
  as GitHub, then runs of ``-`` squeezed to one, a digits-only id becomes ``anchor-N``, and the
  duplicate counter is per id (no check against ids already made).
- Hugo: ``markup/goldmark/autoid.go`` (types ``github``, ``github-ascii``, ``blackfriday``) and
  Goldmark's ``parser/atx_heading.go``: the id is made from the heading's *source* line (so
  ``## [Go](https://go.dev)`` gets ``gohttpsgodev``), explicit ``{#id}`` attributes are
  registered first-come, an empty result is ``heading`` (``id`` for a definition term).
  Checked against Hugo 0.111.3 (Debian) by rendering a page.
- Zola: ``components/utils/src/slugs.rs`` (``slugify.anchors = "on" | "safe" | "off"``), the
  ``slug`` crate (deunicode, then ASCII ``a-z0-9`` runs joined by ``-``) and ``find_anchor`` in
  ``components/markdown`` (``example``, ``example-1``, ...); docs: "Internal links & deep
  linking".
- Obsidian: links name a heading by its text, case-insensitively, and ``[[Note#H2#H3]]``
  names an H3 under that H2 (help.obsidian.md/links). Characters that cannot stand in a link
  (``[ ] # | ^``) are left out when Obsidian writes one, so they are ignored when matching.
- mkdocs: Python-Markdown's ``toc`` and the slugifiers ``mkdocs.yml`` names
  (``parse/mkdocs_slugs.py``); ``attr_list`` ids (``## A { #id }``) win.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from studykb.parse.deunicode import CharTable, deunicode
from studykb.parse.heading_text import plain_text, split_attributes
from studykb.parse.mkdocs_slugs import mkdocs_slug, unique, without_footnote_refs
from studykb.runtime import process

#: The heading flavours this module knows.
FLAVOURS = ("github", "gitlab", "hugo", "zola", "obsidian", "mkdocs")
#: An HTML tag inside a heading's text.
_TAG = re.compile(r"<[^<>]*>")

#: Options each flavour accepts (``anchors(..., **options)``), with their defaults.
OPTIONS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "github": MappingProxyType({}),
        "gitlab": MappingProxyType({}),
        # markup.goldmark.parser: autoHeadingIDType, attribute.title, autoDefinitionTermID,
        # autoHeadingID
        "hugo": MappingProxyType(
            {
                "id_type": "github",
                "attributes": True,
                "definition_terms": False,
                "auto_ids": True,
            }
        ),
        # slugify.anchors in config.toml
        "zola": MappingProxyType({"strategy": "on"}),
        "obsidian": MappingProxyType({}),
        # markdown_extensions of mkdocs.yml: toc's slugify (vault/mkdocs_site.py) and separator
        "mkdocs": MappingProxyType(
            {
                "slugify": "default",
                "separator": "-",
                "case": "none",
                "normalize": "NFC",
                "percent_encode": False,
                "attr_list": True,
            }
        ),
    }
)

HUGO_ID_TYPES = ("github", "github-ascii", "blackfriday")
ZOLA_STRATEGIES = ("on", "safe", "off")


@dataclass(frozen=True)
class Heading:
    """A heading (or, for Hugo's ``autoDefinitionTermID``, a definition-list term)."""

    #: The inline Markdown as written: markdown-it's inline ``content`` (ATX closing ``#``s
    #: already gone); may end with a ``{#id .class}`` attribute block.
    text: str
    #: 1 to 6; 0 for a definition-list term.
    level: int
    #: 1-based line of the heading in its file.
    line: int
    #: An id given explicitly (``{#id}``, ``<h2 id=...>``); found in ``text`` when left None.
    explicit_id: str | None = None


# --- options -------------------------------------------------------------------------------


def _options(flavour: str, options: dict[str, Any]) -> dict[str, Any]:
    if flavour not in OPTIONS:
        raise ValueError(f"unknown heading flavour {flavour!r}; one of {', '.join(FLAVOURS)}")
    known = OPTIONS[flavour]
    unknown = set(options) - set(known)
    if unknown:
        raise TypeError(f"{flavour} headings take no option {', '.join(sorted(unknown))}")
    merged = {**known, **options}
    if flavour == "hugo" and merged["id_type"] not in HUGO_ID_TYPES:
        raise ValueError(f"hugo id_type must be one of {', '.join(HUGO_ID_TYPES)}")
    if flavour == "zola" and merged["strategy"] not in ZOLA_STRATEGIES:
        raise ValueError(f"zola strategy must be one of {', '.join(ZOLA_STRATEGIES)}")
    return merged


# --- per-character tables (str.translate with a cache that fills itself) ---------------------


def _github_char(ch: str) -> str | None:
    # Ruby's \p{Word}: letters, marks, decimal digits, connector punctuation; github-slugger
    # also keeps letter numbers (Nl, e.g. "Ⅳ") since they are Alphabetic.
    if ch == " ":
        return "-"
    if ch == "-":
        return ch
    cat = unicodedata.category(ch)
    if cat[0] in "LM" or cat in ("Nd", "Nl", "Pc"):
        return ch
    return None


def _hugo_char(ch: str) -> str | None:
    # autoid.go: '-' and isSpace (' ', '\t') -> '-'; '_', unicode.IsLetter, unicode.IsDigit
    # (Nd only) kept; everything else (marks too: "हिन्दी" -> "हनद") dropped.
    if ch in " \t-":
        return "-"
    if ch == "_":
        return ch
    cat = unicodedata.category(ch)
    if cat[0] == "L" or cat == "Nd":
        return ch
    return None


def _blackfriday_char(ch: str) -> str | None:
    # blackfriday.SanitizedAnchorName: unicode.IsLetter or IsNumber kept, anything else a break.
    cat = unicodedata.category(ch)
    return ch if cat[0] in "LN" else " "


def _obsidian_char(ch: str) -> str | None:
    cat = unicodedata.category(ch)
    return ch if cat[0] in "LMN" or ch == "_" else " "


def _table(name: str, decide: Callable[[str], str | None]) -> CharTable:
    """The process's translation table ``name``, each character decided on first sight."""
    return process.once(f"slugs.{name}", lambda: CharTable(decide))


_ASCII_GITHUB_DROP = re.compile(r"[^a-z0-9_\- ]")
_ASCII_HUGO_DROP = re.compile(r"[^a-z0-9_\- \t]")
_DASHES = re.compile(r"-{2,}")
_DIGITS = re.compile(r"\d+")


# --- the slug of one heading, per flavour ----------------------------------------------------


def _github_slug(text: str) -> str:
    low = plain_text(text).lower()
    if low.isascii():
        return _ASCII_GITHUB_DROP.sub("", low).replace(" ", "-")
    return low.translate(_table("github", _github_char))


def _gitlab_slug(text: str) -> str:
    low = plain_text(text).strip().lower()
    if low.isascii():
        slug = _ASCII_GITHUB_DROP.sub("", low).replace(" ", "-")
    else:
        slug = low.translate(_table("github", _github_char))
    slug = _DASHES.sub("-", slug)
    return f"anchor-{slug}" if _DIGITS.fullmatch(slug) else slug


def _remove_accents(text: str) -> str:
    # Hugo's text.RemoveAccents: NFD, drop non-spacing marks, NFC.
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", kept)


def _hugo_slug(source: str, id_type: str) -> str:
    # Goldmark makes the id from the heading's last source line.
    line = source.rsplit("\n", 1)[-1].strip()
    if id_type == "blackfriday":
        return "-".join(line.lower().translate(_table("blackfriday", _blackfriday_char)).split())
    if id_type == "github-ascii":
        line = _remove_accents(line)
        line = line.encode("ascii", "ignore").decode("ascii")
    low = line.lower()
    if low.isascii():
        return _ASCII_HUGO_DROP.sub("", low).replace(" ", "-").replace("\t", "-")
    return low.translate(_table("hugo", _hugo_char))


_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_ZOLA_UNSAFE = re.compile(r"[\"#%<>\[\\\]()^`{|}]")
_ASCII_SPACE = re.compile(r"[ \t\n\f\r]")


def _zola_slug(text: str, strategy: str) -> str:
    plain = plain_text(text)
    if strategy == "on":
        # slug::slugify: ASCII letters and digits, lowercased; every other run one "-"
        return _NON_ALNUM.sub("-", deunicode(plain).lower()).strip("-")
    if strategy == "safe":
        return _ZOLA_UNSAFE.sub("", _ASCII_SPACE.sub("_", plain))
    return _ASCII_SPACE.sub("_", plain)


_OBSIDIAN_LINK_UNSAFE = re.compile(r"[\[\]#|^]")
_SPACES = re.compile(r"\s+")


def _obsidian_anchor(text: str) -> str:
    # what Obsidian writes after "#" when it links a heading: the text without [ ] # | ^
    return _SPACES.sub(" ", _OBSIDIAN_LINK_UNSAFE.sub(" ", text)).strip()


def obsidian_key(text: str) -> str:
    """How Obsidian compares a heading with a link's subpath: case, punctuation and runs of
    white space do not count."""
    return " ".join(text.lower().translate(_table("obsidian", _obsidian_char)).split())


def slug(text: str, flavour: str, **options: Any) -> str:
    """The anchor one heading text gets, before duplicates are numbered.

    ``text`` is inline Markdown as written; an attribute block is not looked for here.
    """
    return _slug(text, flavour, _options(flavour, options))


def _slug(text: str, flavour: str, opts: dict[str, Any]) -> str:
    return _slug_cached(text, flavour, tuple(sorted(opts.items())))


@process.memo(maxsize=1 << 16)
def _slug_cached(text: str, flavour: str, opt_items: tuple[tuple[str, Any], ...]) -> str:
    # headings repeat a lot across a vault ("Overview", "References", "Setup")
    opts = dict(opt_items)
    if flavour == "github":
        return _github_slug(text)
    if flavour == "gitlab":
        return _gitlab_slug(text)
    if flavour == "hugo":
        return _hugo_slug(text, opts["id_type"])
    if flavour == "zola":
        return _zola_slug(text, opts["strategy"])
    if flavour == "mkdocs":
        return mkdocs_slug(plain_text(without_footnote_refs(text)), opts)
    return _obsidian_anchor(text)


# --- anchors of a whole document -------------------------------------------------------------


def _explicit(heading: Heading, flavour: str, opts: dict[str, Any]) -> tuple[str, str | None]:
    """(text to slug, explicit id) for one heading."""
    if heading.explicit_id is not None:
        text, _ = _strip_attributes(heading.text, flavour, opts)
        return text, heading.explicit_id
    return _strip_attributes(heading.text, flavour, opts)


def _strip_attributes(text: str, flavour: str, opts: dict[str, Any]) -> tuple[str, str | None]:
    if flavour == "hugo" and opts["attributes"]:
        return split_attributes(text, "goldmark")
    if flavour == "zola":
        return split_attributes(text, "pulldown")
    if flavour == "mkdocs" and opts["attr_list"]:  # Python-Markdown's { #id } or {: #id }
        return split_attributes(text.replace("{:", "{"), "pulldown")
    return text, None


class _Taken:
    """The anchors given so far, and for each base the first number still worth trying.

    ``taken`` only grows, so the numbers below it are taken for good: each heading
    probes a few names, however many share its base (without the memo, 20,000 headings
    called "Example" would probe 200 million names).
    """

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.tried: dict[str, int] = {}

    def has(self, name: str) -> bool:
        return name in self.names

    def add(self, name: str) -> None:
        self.names.add(name)

    def free(self, base: str) -> str:
        """``base`` if free, else ``base-N`` with the smallest free N (GitHub's numbering)."""
        if not self.has(base):
            return base
        n = self.tried.get(base, 1)
        while self.has(f"{base}-{n}"):
            n += 1
        self.tried[base] = n + 1
        return f"{base}-{n}"


def anchors(headings: Sequence[Heading], flavour: str, **options: Any) -> list[str]:
    """One anchor per heading, in order, numbered on duplicates as the generator does.

    Explicit ids win. Obsidian has no ids: its "anchor" is the heading text as a link would
    carry it, and equal headings stay equal (a link goes to the first). A Hugo definition
    term (``level == 0``) gets an id only with ``definition_terms=True``
    (``autoDefinitionTermID``); otherwise, and for other flavours, its anchor is ``""``.
    """
    opts = _options(flavour, options)
    out: list[str] = []
    if flavour == "obsidian":
        return [_obsidian_anchor(h.text) if h.level > 0 else "" for h in headings]
    taken = _Taken()
    counts: dict[str, int] = {}
    for heading in headings:
        if heading.level == 0 and not (flavour == "hugo" and opts["definition_terms"]):
            out.append("")
            continue
        text, ident = _explicit(heading, flavour, opts)
        if ident is not None:
            taken.add(ident)
            out.append(ident)
            continue
        if flavour == "hugo" and not opts["auto_ids"]:
            out.append("")
            continue
        base = _slug(text, flavour, opts)
        if flavour == "gitlab":
            # Banzai: a counter per id, appended without checking the ids already made
            seen = counts.get(base, 0)
            counts[base] = seen + 1
            anchor = f"{base}-{seen}" if seen else base
        else:
            if flavour == "hugo" and not base:
                base = "heading" if heading.level > 0 else "id"
            anchor = unique(base, taken.names) if flavour == "mkdocs" else taken.free(base)
        taken.add(anchor)
        out.append(anchor)
    return out


# --- resolving a fragment --------------------------------------------------------------------


class AnchorIndex:
    """The anchors of one document, for many look-ups (``find_heading`` builds one per call)."""

    def __init__(self, headings: Sequence[Heading], flavour: str, **options: Any) -> None:
        self.headings = list(headings)
        self.flavour = flavour
        self.options = _options(flavour, options)
        self.anchors = anchors(self.headings, flavour, **options)
        self._by_anchor: dict[str, Heading] = {}
        self._by_key: dict[str, Heading] = {}
        for heading, anchor in zip(self.headings, self.anchors, strict=True):
            if anchor:
                self._by_anchor.setdefault(anchor, heading)
            if flavour == "obsidian" and heading.level > 0:
                for form in (heading.text, plain_text(heading.text)):
                    self._by_key.setdefault(obsidian_key(form), heading)

    def find(self, anchor: str) -> Heading | None:
        """The heading ``#anchor`` points at, or None (``^block`` ids are not headings)."""
        anchor = anchor.strip()
        if "%" in anchor:
            anchor = unquote(anchor)
        if not anchor or anchor.startswith("^"):
            return None
        if self.flavour == "obsidian":
            return self._find_obsidian(anchor)
        found = self._by_anchor.get(anchor)
        if found is not None:
            return found
        if self.flavour == "github" and anchor.startswith("user-content-"):
            found = self._by_anchor.get(anchor[len("user-content-") :])
            if found is not None:
                return found
        # a heading's own text, as Quartz, Dendron and people write it: [[Note#Some Heading]]
        base = _slug(anchor, self.flavour, self.options)
        return self._by_anchor.get(base) if base else None

    def _find_obsidian(self, subpath: str) -> Heading | None:
        # a "#" inside a heading's HTML (<font color="#ffc000">) does not split the path
        kept = _TAG.sub(lambda m: m.group(0).replace("#", "\0"), subpath)
        parts = [obsidian_key(p.replace("\0", "#")) for p in kept.split("#") if p.strip()]
        if not parts:
            return None
        if len(parts) == 1:
            return self._by_key.get(parts[0])
        # one walk: each heading's ancestors, and how far ``wanted`` has been found in
        # order among the headings so far, each shallower than the next (Obsidian finds
        # ``[[#A#B]]`` for an H3 A, then an H2, then an H4 B); looking back from every
        # matching heading was quadratic in a note of thousands of equal headings
        wanted = parts[:-1]
        ancestors: list[Heading] = []
        found, level = 0, 0
        for heading in self.headings:
            if heading.level <= 0:
                continue
            while ancestors and ancestors[-1].level >= heading.level:
                ancestors.pop()
            if self._matches(heading, parts[-1]) and (
                self._in_order(ancestors, wanted)
                or (found == len(wanted) and level < heading.level)
            ):
                return heading
            if (
                found < len(wanted)
                and level < heading.level
                and self._matches(heading, wanted[found])
            ):
                found, level = found + 1, heading.level
            ancestors.append(heading)
        return None

    @staticmethod
    def _matches(heading: Heading, key: str) -> bool:
        return key in (obsidian_key(heading.text), obsidian_key(plain_text(heading.text)))

    def _in_order(self, chain: list[Heading], wanted: list[str]) -> bool:
        """Whether ``wanted`` (outermost first) are, in order, among ``chain``, a
        heading's ancestors (outermost first)."""
        i = 0
        for heading in chain:
            if i < len(wanted) and self._matches(heading, wanted[i]):
                i += 1
        return i == len(wanted)


def index(headings: Sequence[Heading], flavour: str, **options: Any) -> AnchorIndex:
    """An ``AnchorIndex`` over one document's headings."""
    return AnchorIndex(headings, flavour, **options)


def find_heading(
    headings: Sequence[Heading], anchor: str, flavour: str, **options: Any
) -> Heading | None:
    """What ``[[note#anchor]]`` or ``(note.md#anchor)`` points at, or None.

    Obsidian: the heading whose text matches (case and punctuation aside); ``H2#H3`` is an
    H3 whose ancestors include that H2. Other flavours: the heading with that anchor, else
    the one whose anchor is the slug of ``anchor`` read as heading text. A percent-encoded
    fragment is decoded first.
    """
    return AnchorIndex(headings, flavour, **options).find(anchor)
