"""Resolving references: path, then id, then alias, then title (then file name), case-insensitive.

Where a name fits several documents at the same level, the one in the same folder as the
referring file wins, then the shortest path; the tie is still reported (``ambiguous``). In a
site with several content folders (a multilingual Hugo site), only the documents of the
referring page's own content folder compete when any fits: each language is its own site.

A document in a site's content folder also answers to its path inside that folder (what
Hugo's ``ref "docs/x.md"`` names); d2lbook ``:label:``s are names of their document that only
``:numref:``/``:ref:`` references look up.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from studykb.model import fold as fold  # how names are compared (resolve.fold of old)
from studykb.parse.code_links import split_wikilink
from studykb.parse.urls import normalize_url

if TYPE_CHECKING:
    from studykb.vault.state import Tables

PATH, ID, ALIAS, TITLE, STEM, LABEL, SITE, SITE_DIR = range(8)
#: How a label is written among a document's names (``docs.names``), beside its aliases.
LABEL_MARK = ":label:"
#: How a site path of the page (``Document.site_urls``) is written among its names.
SITE_MARK = ":site:"
#: Path segments of list pages Hugo makes itself (``/posts/page/2/``).
_PAGER = "page"

#: Result of resolving one reference: (target key or None, state, note).
#: States: ok, ambiguous (resolved, with a tie), dangling, external (an outside URL or site
#: link), outside (climbs out of the vault), asset (an attachment such as an image).
Resolution = tuple[str | None, str, str]


#: What ``check`` says of a site link (Hugo) that no page is served at.
SITE_LINK_MESSAGE = "{text!r} leads to no page of the site (no page is served at that path)"


def bad_code(state: str, style: str) -> str:
    """The problem code of an unresolved or ambiguous reference: a site link that leads
    nowhere is ``dangling-link`` (a warning: Hugo may make that page from a template)."""
    if state == "ambiguous":
        return "ambiguous-ref"
    return "dangling-link" if style == "site" else "dangling-ref"


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name[:-3] if name.lower().endswith(".md") else name


def names_json(aliases: Iterable[str], labels: Iterable[str], sites: Iterable[str] = ()) -> str:
    """A document's names as the ``docs.names`` column holds them: aliases, then labels,
    then the site paths it is served at."""
    return json.dumps(
        [
            *aliases,
            *(LABEL_MARK + label for label in labels),
            *(SITE_MARK + site for site in sites),
        ],
        ensure_ascii=False,
    )


def names_of(
    key: str, path: str, doc_id: str, title: str, aliases: Iterable[str], roots: Iterable[str] = ()
) -> list[tuple[str, int]]:
    """Every (folded name, level) a document answers to; ``roots``: the site's content
    folders, below which a document also answers to its path inside the folder."""
    out: list[tuple[str, int]] = []
    if "#" in key:  # a course unit
        out.append((fold(key), PATH))
    else:
        low = fold(path)
        rooted_paths = [low] + [
            low[len(r) + 1 :]
            for r in (fold(r) for r in roots)
            if r not in ("", ".") and low.startswith(r + "/")
        ]
        for rooted in rooted_paths:
            out.append((rooted, PATH))
            if rooted.endswith(".md"):
                out.append((rooted[:-3], PATH))
        stem = _stem(low)
        if stem in ("index", "_index", "readme") and "/" in low:
            for rooted in rooted_paths:
                if "/" in rooted:
                    out.append((posixpath.dirname(rooted), PATH))  # bundles: /posts/foo/
            out.append((posixpath.basename(posixpath.dirname(low)), STEM))
        else:
            out.append((stem, STEM))
    out.append((fold(doc_id), ID))
    for name in aliases:
        if name.startswith(LABEL_MARK):
            out.append((fold(name[len(LABEL_MARK) :]), LABEL))
        elif name.startswith(SITE_MARK):
            out.extend(_site_names(name[len(SITE_MARK) :]))
        elif name.strip():
            out.append((fold(name), ALIAS))
    out.append((fold(title), TITLE))
    return out


def _site_names(site: str) -> list[tuple[str, int]]:
    """A site path of a page and the folders above it (``/posts/a`` makes ``/posts`` a
    folder of pages: a list page there is Hugo's own, a missing page below it is broken)."""
    out = [(fold(site), SITE)]
    parts = site.strip("/").split("/")
    for end in range(1, len(parts)):
        out.append((fold("/" + "/".join(parts[:end])), SITE_DIR))
    return out


class Names:
    """The name table of the whole vault, built from the ``docs`` rows of the store."""

    def __init__(self, rows: Iterable[tuple[Any, ...]], roots: Iterable[str] = ()) -> None:
        self.roots = tuple(r for r in roots if r not in ("", "."))
        self.table: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self.urls: dict[str, list[str]] = defaultdict(list)
        self.paths: dict[str, str] = {}
        self.types: dict[str, str] = {}
        for key, path, doc_id, title, dtype, aliases, url in rows:
            again = key in self.paths  # never in a state (a key is its rows' own)
            self.paths[key] = path
            self.types[key] = dtype
            # each (name, level) once for a key: a set for the row's own (a memory seam:
            # one for every name of the vault was about 30 MB at 50k, of a first build)
            seen: set[tuple[str, int]] = set()
            for name, level in names_of(key, path, doc_id, title, json.loads(aliases), self.roots):
                if (name, level) in seen or (again and (level, key) in self.table.get(name, ())):
                    continue
                seen.add((name, level))
                self.table[name].append((level, key))
            if url and dtype in ("entry", "course", "unit"):
                self.urls[normalize_url(url)].append(key)

    def candidates(self, name: str, max_level: int = STEM) -> list[str]:
        found = [(lvl, key) for lvl, key in self.table.get(fold(name), ()) if lvl <= max_level]
        if not found:
            return []
        best = min(lvl for lvl, _ in found)
        return [key for lvl, key in found if lvl == best]

    def pick(self, keys: list[str], from_path: str) -> Resolution:
        if len(keys) > 1 and len(self.roots) > 1:
            keys = self._same_root(keys, from_path)
        if len(keys) == 1:
            return keys[0], "ok", ""
        folder = posixpath.dirname(from_path)
        ranked = sorted(
            keys, key=lambda k: (posixpath.dirname(self.paths[k]) != folder, len(self.paths[k]), k)
        )
        others = ", ".join(ranked[1:4]) + (" ..." if len(ranked) > 4 else "")
        return ranked[0], "ambiguous", f"{ranked[0]} (also {others})"

    def _same_root(self, keys: list[str], from_path: str) -> list[str]:
        """The keys in the content folder of ``from_path`` (all of them when none is)."""
        root = _root_of(from_path, self.roots)
        mine = [k for k in keys if _root_of(self.paths[k], self.roots) == root]
        return mine or keys

    def resolve(
        self,
        source: str,
        path: str,
        target: str,
        style: str,
        anchor: str,
        optional: bool,
        text: str = "",
    ) -> Resolution:
        """Resolve one reference (``text``, as written, is not needed: Dendron's
        label-first wikilinks are read as such when the file is parsed)."""
        if style == "label":
            keys = [k for lvl, k in self.table.get(fold(target), ()) if lvl == LABEL]
            return self.pick(keys, path) if keys else (None, "dangling", "")
        if style == "url":
            keys = self.urls.get(target, [])
            return self.pick(keys, path) if keys else (None, "external", "")
        if style == "site":
            return self._site(path, target)
        if style == "code":  # [[NAME:file]]: the document tracking repository NAME, if any
            note = _repo_note(text)
            keys = self.candidates(note, PATH) if note else []  # a note read from it
            keys = keys or self.candidates(target)
            return self.pick(keys, path) if keys else (None, "external", "")
        if style == "path":
            if target == ".." or target.startswith("../"):
                return None, "outside", ""
            keys = self.candidates(target, PATH)
            if keys:
                return self._unit(self.pick(keys, path), anchor)
            if not optional:
                return None, "dangling", ""
            return None, ("asset" if _file_like(target) else "external"), ""
        if style == "unit":
            course = source.split("#", 1)[0]
            unit = f"{course}#{target}"
            keys = self.candidates(unit, PATH)
            if keys:
                return keys[0], "ok", ""
        keys = self.candidates(target)
        if keys:
            return self._unit(self.pick(keys, path), anchor)
        return self._not_named(path, target, anchor, optional)

    def _site(self, path: str, target: str) -> Resolution:
        """A site path (Hugo): the page served there; else a list page Hugo makes (a folder
        of pages, a taxonomy, a pager) or another site's file is ``external``, and a path
        in a folder of pages that no page is served at is ``dangling``."""
        found = self.table.get(fold(target), ())
        pages = [key for level, key in found if level == SITE]
        if pages:
            return self.pick(pages, path)
        parts = target.strip("/").split("/")
        if found or len(parts) < 2 or _PAGER in parts[1:]:
            return None, "external", ""
        if any(level in (SITE, SITE_DIR) for level, _ in self.table.get(fold("/" + parts[0]), ())):
            return None, "dangling", "no page is served at this path"
        return None, "external", ""

    def _not_named(self, path: str, target: str, anchor: str, optional: bool) -> Resolution:
        """A name no document answers to as written: it may still be ``course#unit``, a
        path relative to the referring file or ``Note.md``; else an asset or dangling."""
        keys: list[str] = []
        if "#" in target:  # "cs336#a1" written as a bare name
            head, _, tail = target.partition("#")
            found = self.candidates(head)
            if found:
                return self._unit(self.pick(found, path), tail)
        if "/" in target:  # a path relative to the referring file
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            keys = self.candidates(rel, PATH)
        if not keys and target.lower().endswith(".md"):  # [[Note.md]]
            keys = self.candidates(target[:-3])
        if keys:
            return self._unit(self.pick(keys, path), anchor)
        if optional:
            return None, "asset", ""
        return None, "dangling", ""

    def _unit(self, res: Resolution, anchor: str) -> Resolution:
        """``[[cs336#a1]]``: a heading anchor that names a unit of the course."""
        key, state, note = res
        if anchor and key and self.types.get(key) == "course":
            unit = f"{key}#{fold(anchor)}"
            for lvl, k in self.table.get(unit, ()):
                if lvl == PATH:
                    return k, state, note
        return res


def _root_of(path: str, roots: tuple[str, ...]) -> str:
    """The deepest of ``roots`` holding ``path`` (``""`` for none)."""
    best = ""
    for root in roots:
        if path.startswith(root + "/") and len(root) > len(best):
            best = root
    return best


def _file_like(target: str) -> bool:
    """A path with a file extension (``img/a.png``, ``LICENSE.txt``): a file, not a page."""
    name = posixpath.basename(target)
    return "." in name.strip(".")


def _repo_note(text: str) -> str:
    """``NAME:path.md`` of a code link to a Markdown file (written ``text``), else ``""``:
    a repository's note read into the vault, if its notes are."""
    code = split_wikilink(text)
    if code is None or code.lines or code.rev or not code.path.lower().endswith(".md"):
        return ""
    return f"{code.repo}:{code.path}"


def lookups(source: str, path: str, target: str, style: str, text: str = "") -> tuple[str, str]:
    """The names whose change can change how a reference resolves (indexed in the store)."""
    if style == "code":
        return fold(target), fold(_repo_note(text))
    if style in ("url", "label"):
        return (target if style == "url" else fold(target)), ""
    if style == "site":  # the first folder decides between external and dangling
        return fold(target), fold("/" + target.strip("/").split("/")[0])
    if style == "unit":
        return fold(f"{source.split('#', 1)[0]}#{target}"), fold(target)
    second = ""
    if "#" in target:
        second = fold(target.partition("#")[0])
    elif "/" in target and style == "name":
        second = fold(posixpath.normpath(posixpath.join(posixpath.dirname(path), target)))
    elif target.lower().endswith(".md") and style == "name":
        second = fold(target[:-3])
    return fold(target), second


#: Level of a normalised ``url`` in the stored names table (never a name level).
URL = 9


def name_rows(
    key: str,
    path: str,
    doc_id: str,
    title: str,
    dtype: str,
    aliases: str,
    url: str | None,
    roots: Iterable[str] = (),
) -> list[tuple[str, int, str, str]]:
    """Rows (name, level, key, path) of the stored ``names`` table for one ``docs`` row.

    The same entries :class:`Names` builds in memory, so :class:`StoredNames` answers alike.
    """
    seen: set[tuple[str, int]] = set()
    out = []
    for name, level in names_of(key, path, doc_id, title, json.loads(aliases), roots):
        if (name, level) not in seen:
            seen.add((name, level))
            out.append((name, level, key, path))
    if url and dtype in ("entry", "course", "unit"):
        out.append((normalize_url(url), URL, key, path))
    return out


def table_rows(names: Names) -> Iterable[tuple[str, int, str, str]]:
    """Every row of the stored ``names`` table, from a name table built in memory."""
    for name, bucket in names.table.items():
        for level, key in bucket:
            yield name, level, key, names.paths[key]
    for url, keys in names.urls.items():
        for key in keys:
            yield url, URL, key, names.paths[key]


class _Lazy(Mapping[str, Any]):
    """Read-only mapping over the state: one indexed query per key (``one``), everything
    on iteration (``every``)."""

    def __init__(
        self,
        one: Callable[[str], list[tuple[Any, ...]]],
        every: Callable[[], Iterable[tuple[Any, ...]]],
        grouped: bool,
    ) -> None:
        self._one, self._every, self._grouped = one, every, grouped
        self._cache: dict[str, Any] = {}
        self._all: dict[str, Any] | None = None

    def _shape(self, rows: list[tuple[Any, ...]]) -> Any:
        if self._grouped:
            return [row[0] if len(row) == 1 else tuple(row) for row in rows] or None
        return rows[0][0] if rows else None

    def __getitem__(self, key: str) -> Any:
        if self._all is not None:
            return self._all[key]
        if key not in self._cache:
            self._cache[key] = self._shape(self._one(key))
        value = self._cache[key]
        if value is None:
            raise KeyError(key)
        return value

    def _load(self) -> dict[str, Any]:
        if self._all is None:
            out: dict[str, Any] = {}
            for first, *rest in self._every():
                if self._grouped:
                    out.setdefault(first, []).append(rest[0] if len(rest) == 1 else tuple(rest))
                else:
                    out[first] = rest[0]
            self._all = out
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


class StoredNames(Names):
    """The name table read from the state's ``names`` table on demand.

    Resolving one query costs a few indexed lookups instead of building the table of the
    whole vault; iterating ``table`` (for suggestions) loads it all once.
    """

    def __init__(self, tables: Tables, roots: Iterable[str] = ()) -> None:  # pylint: disable=super-init-not-called
        self.roots = tuple(r for r in roots if r not in ("", "."))
        names, docs = tables.names, tables.docs
        self.table = _Lazy(names.levels_of, names.every_level, True)  # type: ignore[assignment]
        self.urls = _Lazy(names.keys_at_url, names.every_url, True)  # type: ignore[assignment]
        self.paths = _Lazy(docs.path_of, docs.every_path, False)  # type: ignore[assignment]
        self.types = _Lazy(docs.type_of, docs.every_type, False)  # type: ignore[assignment]
