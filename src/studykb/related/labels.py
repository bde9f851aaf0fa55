"""Link labels as names: what other documents call a document when they link to it.

An Obsidian vault links ``[[创建第一篇笔记|创建笔记]]``: the label, not the title, is
what its authors write in running text, so a note saying 创建笔记 without a link names
that document. Anchor text, as web search has long read it: a label counts as a name of
its target once at least :data:`MIN_SOURCES` different documents (other than the target)
link to it with that label (one author's phrasing is not yet a name; and the fewer
names, the fewer times every text must be searched again). Only labelled wikilinks
carry a label here (a Markdown link's label is not kept with the reference); the state
gives the labelled links (:meth:`studykb.vault.state.refs.Refs.wiki_labels`), a
vault of 6,500 notes and 18,000 of them in 0.08 s.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

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

    def to_data(self) -> dict[str, Any]:
        return {"names": self.names, "paths": self.paths}

    @classmethod
    def from_data(cls, data: Any) -> Labels | None:
        """What :meth:`to_data` gave, or None when it is not that."""
        if not isinstance(data, dict):
            return None
        names, paths = data.get("names"), data.get("paths")
        if not isinstance(names, dict) or not isinstance(paths, list):
            return None
        return cls({str(k): list(v) for k, v in names.items()}, [str(p) for p in paths])


def label_names(vault: Snapshot) -> Labels:
    """The labels every labelled wikilink of the vault gives."""
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    paths: set[str] = set()
    for path, source, target, text in vault.wiki_labels():
        paths.add(path)
        label = " ".join(text[text.index("|") + 1 : -2].split())
        if label and source.split("#", 1)[0] != target.split("#", 1)[0]:
            sources[(target, label)].add(source)
    out: dict[str, list[str]] = defaultdict(list)
    for (target, label), who in sorted(sources.items()):
        if len(who) >= MIN_SOURCES:
            out[target].append(label)
    return Labels(dict(out), sorted(paths))


def labels_after(kept: Labels | None, vault: Snapshot, touched: set[str]) -> Labels:
    """The labels now, after the files ``touched`` changed: the ``kept`` ones when no
    labelled link was written in those files before nor is now (no query of the whole
    vault), else read again."""
    if kept is not None and touched.isdisjoint(kept.paths) and not vault.wiki_labels(touched):
        return kept
    return label_names(vault)
