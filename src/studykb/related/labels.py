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
file the state gives for it (:func:`markdown_labels`), and kept by file: after an edit
only the files edited are read again.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

if TYPE_CHECKING:
    from studykb.vault.derived import Snapshot

#: Documents that must link with the same label before it names the target.
MIN_SOURCES = 2


class Labels(NamedTuple):
    """The labels that name documents, and the files any labelled link is written in."""

    names: dict[str, list[str]]
    """Target key -> the labels enough documents link it with (sorted)."""
    paths: list[str]
    """Every file holding a labelled wikilink (sorted): an edit elsewhere changes none."""
    marked: dict[str, list[list[str]]]
    """File -> the [source, target, label] of its labelled Markdown links."""

    def to_data(self) -> dict[str, Any]:
        return {"names": self.names, "paths": self.paths, "marked": self.marked}

    @classmethod
    def from_data(cls, data: Any) -> Labels | None:
        """What :meth:`to_data` gave, or None when it is not that."""
        if not isinstance(data, dict):
            return None
        names, paths, marked = data.get("names"), data.get("paths"), data.get("marked")
        if not isinstance(names, dict) or not isinstance(paths, list):
            return None
        if not isinstance(marked, dict):
            return None
        return cls(
            {str(k): list(v) for k, v in names.items()},
            [str(p) for p in paths],
            {str(k): [[str(x) for x in row] for row in v] for k, v in marked.items()},
        )


#: ``[label](destination "title")``, not an image.
_MDLINK = re.compile(r"(?<!!)\[([^\[\]]+)\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")


def markdown_labels(
    vault: Snapshot, paths: Iterable[str] | None = None
) -> dict[str, list[list[str]]]:
    """File -> [source, target key, label] of its resolved Markdown links to documents
    (of ``paths`` only, when given): each link of the state read off its line, where a
    ``[label](destination)`` whose destination is the target's file (``.md`` or not)
    gives its label."""
    edges = vault.edges(kind="link") if paths is None else vault.edges_in(paths)
    edges = [e for e in edges if e.kind == "link" and e.source.split("#", 1)[0] != e.target]
    targets = vault.documents_for({e.target for e in edges})
    lines: dict[str, list[str]] = {}
    out: dict[str, list[list[str]]] = {}
    for e in edges:
        target = targets.get(e.target)
        if target is None or target.path == e.path:
            continue
        if e.path not in lines:
            try:
                lines[e.path] = (vault.root / e.path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                lines[e.path] = []
        text = lines[e.path][e.line - 1] if 0 < e.line <= len(lines[e.path]) else ""
        if "](" not in text:
            continue
        stem = target.path[:-3] if target.path.endswith(".md") else target.path
        for m in _MDLINK.finditer(text):
            href = unquote(m.group(2)).split("#", 1)[0].split("?", 1)[0]
            if not href or ":" in href:
                continue
            norm = posixpath.normpath(posixpath.join(posixpath.dirname(e.path), href))
            label = " ".join(m.group(1).split())
            if norm in (target.path, stem) and label:
                row = [e.source, e.target, label]
                if row not in out.setdefault(e.path, []):
                    out[e.path].append(row)
    return {p: sorted(rows) for p, rows in out.items()}


def label_names(vault: Snapshot, marked: dict[str, list[list[str]]] | None = None) -> Labels:
    """The labels every labelled wikilink and Markdown link of the vault gives
    (``marked``: the Markdown links' labels by file, when already read)."""
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    paths: set[str] = set()
    for path, source, target, text in vault.wiki_labels():
        paths.add(path)
        label = " ".join(text[text.index("|") + 1 : -2].split())
        if label and source.split("#", 1)[0] != target.split("#", 1)[0]:
            sources[(target, label)].add(source)
    marked = markdown_labels(vault) if marked is None else marked
    for rows in marked.values():
        for source, target, label in rows:
            sources[(target, label)].add(source)
    out: dict[str, list[str]] = defaultdict(list)
    for (target, label), who in sorted(sources.items()):
        if len(who) >= MIN_SOURCES:
            out[target].append(label)
    return Labels(dict(out), sorted(paths), {p: marked[p] for p in sorted(marked)})


def labels_after(kept: Labels | None, vault: Snapshot, touched: set[str]) -> Labels:
    """The labels now, after the files ``touched`` changed: the ``kept`` ones when no
    labelled link was written in those files before nor is now (no query of the whole
    vault), else made again, the Markdown links' labels read again in ``touched`` only."""
    if kept is None:
        return label_names(vault)
    now = markdown_labels(vault, touched)
    same = all(kept.marked.get(p, []) == now.get(p, []) for p in touched)
    if same and touched.isdisjoint(kept.paths) and not vault.wiki_labels(touched):
        return kept
    marked = {p: rows for p, rows in kept.marked.items() if p not in touched}
    marked.update(now)
    return label_names(vault, marked)
