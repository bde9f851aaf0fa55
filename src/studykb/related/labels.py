"""Link labels as names: what other documents call a document when they link to it.

An Obsidian vault links ``[[创建第一篇笔记|创建笔记]]``: the label, not the title, is
what its authors write in running text, so a note saying 创建笔记 without a link names
that document. Anchor text, as web search has long read it: a label counts as a name of
its target once at least :data:`MIN_SOURCES` different documents (other than the target)
link to it with that label (one author's phrasing is not yet a name; and the fewer
names, the fewer times every text must be searched again). Only labelled wikilinks
carry a label here (a Markdown link's label is not kept with the reference); the state
gives the labelled links (:meth:`studykb.vault.state.refs.Refs.wiki_labels`), a
vault of 6,500 notes and 18,000 of them in 0.08 s. The labelled links of each file are
kept with the names, so after an edit only the edited files' links are read again.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

    from studykb.vault.derived import Snapshot

#: Documents that must link with the same label before it names the target.
MIN_SOURCES = 2


class Labels(NamedTuple):
    """The labels that name documents, and the labelled links of each file holding any."""

    names: dict[str, list[str]]
    """Target key -> the labels enough documents link it with (sorted)."""
    paths: list[str]
    """Every file holding a labelled wikilink (sorted): an edit elsewhere changes none."""
    links: dict[str, list[str]]
    """File -> its labelled links that may name their target, flat (source, target,
    label, source, ...): what :func:`labels_after` counts again after an edit, without
    querying the whole vault."""

    def to_data(self) -> dict[str, Any]:
        return {"names": self.names, "paths": self.paths, "links": self.links}

    @classmethod
    def from_data(cls, data: Any) -> Labels | None:
        """What :meth:`to_data` gave, or None when it is not that."""
        if not isinstance(data, dict):
            return None
        names, paths, links = data.get("names"), data.get("paths"), data.get("links")
        if not isinstance(names, dict) or not isinstance(paths, list):
            return None
        if not isinstance(links, dict) or len(links) != len(paths):
            return None
        if any(not isinstance(v, list) or len(v) % 3 for v in links.values()):
            return None
        return cls(names, paths, links)  # plain data (msgpack), counted again only after an edit


LabelRow = tuple[str, str, str, str]
"""(path, source, target key, the link as written), as the state gives them."""


def label_names(vault: Snapshot) -> Labels:
    """The labels every labelled wikilink of the vault gives."""
    return _counted(_links(vault.wiki_labels()))


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


def _counted(links: dict[str, list[str]]) -> Labels:
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
    now = _links(vault.wiki_labels(touched))
    if all(kept.links.get(p) == now.get(p) for p in touched):
        return kept  # the same labelled links (or none) before and now
    links = {p: flat for p, flat in kept.links.items() if p not in touched}
    links.update(now)
    return _counted(links)
