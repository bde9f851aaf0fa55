"""Link labels as names: what other documents call a document when they link to it.

An Obsidian vault links ``[[创建第一篇笔记|创建笔记]]``: the label, not the title, is
what its authors write in running text, so a note saying 创建笔记 without a link names
that document. Anchor text, as web search has long read it: a label counts as a name of
its target once at least :data:`MIN_SOURCES` different documents (other than the target)
link to it with that label (one author's phrasing is not yet a name; and the fewer
names, the fewer times every text must be searched again). The state gives the
labelled wikilinks (:meth:`studykb.vault.state.refs.Refs.wiki_labels`), a vault of 6,500
notes and 18,000 of them in 0.08 s. A Markdown link ``[线段树](../ds/seg-tree.md)``
keeps only its destination in the state, so its label is read from the line of the
file the state gives for it (:func:`markdown_labels`). The labelled links of each file
(both kinds) are kept with the names, so after an edit only the edited files' links are
read again.
"""

from __future__ import annotations

import json
import posixpath
import re
from array import array
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

if TYPE_CHECKING:
    from collections.abc import Iterable

    from studykb.vault.derived import Snapshot
    from studykb.vault.state.rows import Edge

#: Documents that must link with the same label before it names the target.
MIN_SOURCES = 2


class Labels(NamedTuple):
    """The labels that name documents, and the labelled links of each file holding any."""

    names: dict[str, list[str]]
    """Target key -> the labels enough documents link it with (sorted)."""
    paths: list[str]
    """Every file holding a labelled link (sorted): an edit elsewhere changes none."""
    links: Mapping[str, list[str]]
    """File -> its labelled links that may name their target, flat (source, target,
    label, source, ...): what :func:`labels_after` counts again after an edit, without
    querying the whole vault."""

    def to_data(self) -> dict[str, Any]:
        return {"names": self.names, "paths": self.paths, "links": Links.of(self.links).data()}

    @classmethod
    def from_data(cls, data: Any) -> Labels | None:
        """What :meth:`to_data` gave, or None when it is not that."""
        if not isinstance(data, dict):
            return None
        names, paths, links = data.get("names"), data.get("paths"), data.get("links")
        if not isinstance(names, dict) or not isinstance(paths, list):
            return None
        try:
            raw = Blobs.from_data(links)
        except (ValueError, TypeError):
            return None
        if len(raw) != len(paths):
            return None
        return cls(names, paths, Links(raw))  # plain data (msgpack), read only when used


class Links(Mapping[str, list[str]]):
    """:attr:`Labels.links` as kept: each file's flat list as JSON (UTF-8 bytes, so that
    loading it decodes no text), read when that file is asked for. After an edit only
    the edited files' are compared, so loading the name table does not make the vault's
    100,000 small strings (a third of the text vectors' 11 MB entry at 10k documents;
    its decoding went from about 0.03 s to 0.0015 s)."""

    def __init__(self, raw: Mapping[str, bytes], made: dict[str, list[str]] | None = None) -> None:
        self._raw = raw
        self._made: dict[str, list[str]] = dict(made or {})
        self._read: set[str] = set()
        """The files of :attr:`_made` only read from :attr:`_raw` (kept as they were)."""

    @classmethod
    def of(cls, links: Mapping[str, list[str]]) -> Links:
        return links if isinstance(links, Links) else cls({}, dict(links))

    def __getitem__(self, path: str) -> list[str]:
        got = self._made.get(path)
        if got is None:
            got = self._made[path] = _flat(self._raw[path])
            self._read.add(path)
        return got

    def __iter__(self) -> Iterator[str]:
        yield from self._made
        yield from (p for p in self._raw if p not in self._made)

    def __len__(self) -> int:
        return len(self._raw.keys() | self._made.keys())

    def __contains__(self, path: object) -> bool:
        return path in self._made or path in self._raw

    def replaced(self, touched: Iterable[str], now: Mapping[str, list[str]]) -> Links:
        """These links with the files ``touched`` left out and those of ``now`` put in."""
        gone = set(touched)
        raw = {p: v for p, v in self._raw.items() if p not in gone}
        made = {p: v for p, v in self._made.items() if p not in gone}
        made.update(now)
        return Links(raw, made)

    def data(self) -> list[Any]:
        """Plain data: JSON bytes per file (those read unchanged, as they were kept), as
        :class:`Blobs` keeps them."""
        if isinstance(self._raw, Blobs) and self._read.issuperset(self._made):
            return self._raw.data()
        out = {p: v for p, v in self._raw.items() if p not in self._made}
        for path, flat in self._made.items():
            out[path] = self._raw.get(path) or json.dumps(flat, ensure_ascii=False).encode()
        return Blobs.of(out).data()


class Blobs(Mapping[str, bytes]):
    """Files' bytes as kept: the paths joined, the bytes one after the other, and where
    each ends, so that loading them makes three objects, not a dict of 10,000 (a speed
    seam: 0.005 s of every update of the text vectors at 10k documents); a file's are
    cut out when it is asked for."""

    def __init__(self, paths: list[str], blob: bytes, ends: array[int]) -> None:
        self._paths, self._blob, self._ends = paths, blob, ends
        self._place: dict[str, int] | None = None

    @classmethod
    def of(cls, raw: Mapping[str, bytes]) -> Blobs:
        ends = array("q")
        at = 0
        for value in raw.values():
            at += len(value)
            ends.append(at)
        return cls(list(raw), b"".join(raw.values()), ends)

    @classmethod
    def from_data(cls, data: Any) -> Blobs:
        """What :meth:`data` gave (a ``ValueError`` when it is not that)."""
        if not isinstance(data, list) or len(data) != 3:
            raise ValueError("not kept files")
        joined, blob, packed = data
        if not (isinstance(joined, str) and isinstance(blob, bytes) and isinstance(packed, bytes)):
            raise ValueError("not kept files")
        ends = array("q")
        ends.frombytes(packed)
        paths = joined.split("\0") if joined else []
        if len(paths) != len(ends) or (ends and ends[-1] != len(blob)):
            raise ValueError("not kept files")
        return cls(paths, blob, ends)

    def data(self) -> list[Any]:
        return ["\0".join(self._paths), self._blob, self._ends.tobytes()]

    def _at(self) -> dict[str, int]:
        if self._place is None:
            self._place = {p: n for n, p in enumerate(self._paths)}
        return self._place

    def __getitem__(self, path: str) -> bytes:
        n = self._at()[path]
        return self._blob[self._ends[n - 1] if n else 0 : self._ends[n]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def items(self) -> Iterator[tuple[str, bytes]]:  # type: ignore[override]
        """Every file's bytes, in order, cut out one after the other."""
        blob, start = self._blob, 0
        for path, end in zip(self._paths, self._ends, strict=True):
            yield path, blob[start:end]
            start = end

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return path in self._at()


def _flat(text: bytes) -> list[str]:
    """One file's links as :meth:`Links.data` kept them (a ``ValueError`` when they are
    not that: :func:`labels_after` then counts the vault's again)."""
    if not isinstance(text, bytes):
        raise ValueError("not a file's labelled links")
    got = json.loads(text)
    if not (isinstance(got, list) and len(got) % 3 == 0 and all(isinstance(v, str) for v in got)):
        raise ValueError("not a file's labelled links")
    return got


LabelRow = tuple[str, str, str, str]
"""(path, source, target key, the link as written), as the state gives them."""


#: ``[label](destination "title")``, not an image.
_MDLINK = re.compile(r"(?<!!)\[([^\[\]]+)\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")


def markdown_labels(
    vault: Snapshot, paths: Iterable[str] | None = None
) -> dict[str, list[list[str]]]:
    """File -> [source, target key, label] of its resolved Markdown links to documents
    (of ``paths`` only, when given): each link of the state read off its line, where a
    ``[label](destination)`` whose destination is the target's file (``.md`` or not)
    gives its label."""
    edges, targets = _links_and_targets(vault, paths)
    read, lines = "", []  # the lines of one file at a time (a file's links come together)
    out: dict[str, list[list[str]]] = {}
    for e in edges:
        if e.kind != "link" or e.source.split("#", 1)[0] == e.target:
            continue
        target = targets.get(e.target)
        if target is None or target == e.path:
            continue
        if e.path != read:
            read, lines = e.path, _lines(vault, e.path)
        text = lines[e.line - 1] if 0 < e.line <= len(lines) else ""
        if "](" not in text:
            continue
        stem = target[:-3] if target.endswith(".md") else target
        for m in _MDLINK.finditer(text):
            href = unquote(m.group(2)).split("#", 1)[0].split("?", 1)[0]
            if not href or ":" in href:
                continue
            norm = posixpath.normpath(posixpath.join(posixpath.dirname(e.path), href))
            label = " ".join(m.group(1).split())
            if norm in (target, stem) and label:
                row = [e.source, e.target, label]
                if row not in out.setdefault(e.path, []):
                    out[e.path].append(row)
    return {p: sorted(rows) for p, rows in out.items()}


def _links_and_targets(
    vault: Snapshot, paths: Iterable[str] | None
) -> tuple[Iterable[Edge], dict[str, str]]:
    """The links to read (every resolved reference, or those of ``paths``) and the file
    of each document they may lead to. For the whole vault, the links as they are read
    and the files from the name rows (a memory seam: at 50k documents half a million
    links, and a build has let go of the documents, :func:`studykb.related.engine.made_lean`)."""
    if paths is None:
        files = {row[0]: row[1] for row in vault.name_rows()}
        return vault.each_edge(kind="link"), files
    edges = [e for e in vault.edges_in(paths) if e.kind == "link"]
    docs = vault.documents_for({e.target for e in edges})
    return edges, {key: doc.path for key, doc in docs.items()}


def _lines(vault: Snapshot, path: str) -> list[str]:
    try:
        return (vault.root / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def label_names(vault: Snapshot) -> Labels:
    """The labels every labelled wikilink and Markdown link of the vault gives."""
    return _counted(_with_marked(_links(vault.wiki_labels()), markdown_labels(vault)))


def _with_marked(
    links: dict[str, list[str]], marked: dict[str, list[list[str]]]
) -> dict[str, list[str]]:
    """``links`` with each file's Markdown links' [source, target, label] after its
    wikilinks' (flat, as :attr:`Labels.links`)."""
    for path, rows in marked.items():
        flat = links.setdefault(path, [])
        for row in rows:
            flat += row
    return links


def _links(rows: Iterable[LabelRow]) -> dict[str, list[str]]:
    """File -> its labelled links that may name their target (see :attr:`Labels.links`);
    every file of ``rows`` is there, its list empty when none may."""
    out: dict[str, list[str]] = {}
    for path, source, target, text in rows:
        flat = out.setdefault(path, [])
        label = " ".join(text[text.index("|") + 1 : -2].split())
        if label and source.split("#", 1)[0] != target.split("#", 1)[0]:
            flat += (source, target, label)
    return out


def _counted(links: Mapping[str, list[str]]) -> Labels:
    """The labels the links of every file give: a label names its target once at least
    :data:`MIN_SOURCES` documents link it with it."""
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    for flat in links.values():
        for n in range(0, len(flat), 3):
            sources[(flat[n + 1], flat[n + 2])].add(flat[n])
    out: dict[str, list[str]] = defaultdict(list)
    for (target, label), who in sorted(sources.items()):
        if len(who) >= MIN_SOURCES:
            out[target].append(label)
    return Labels(dict(out), sorted(links), links)


def labels_after(kept: Labels | None, vault: Snapshot, touched: set[str]) -> Labels:
    """The labels now, after the files ``touched`` changed: the ``kept`` ones when the
    labelled links of those files are the ones kept (none, or the same), else counted
    again from the kept links of the other files and those of ``touched`` read again
    (the whole vault is queried only when nothing is kept)."""
    if kept is None:
        return label_names(vault)
    now = _with_marked(_links(vault.wiki_labels(touched)), markdown_labels(vault, touched))
    try:
        if all(kept.links.get(p) == now.get(p) for p in touched):
            return kept  # the same labelled links (or none) before and now
        return _counted(Links.of(kept.links).replaced(touched, now))
    except ValueError:  # what was kept of a file is not its links: all counted again
        return label_names(vault)
