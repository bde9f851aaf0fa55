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

import hashlib
import json
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.vault.derived import Snapshot

#: Documents that must link with the same label before it names the target.
MIN_SOURCES = 2


def label_names(vault: Snapshot) -> dict[str, list[str]]:
    """Target key -> the labels it is linked with by enough documents (sorted)."""
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    for source, target, text in vault.wiki_labels():
        label = " ".join(text[text.index("|") + 1 : -2].split())
        if label and source.split("#", 1)[0] != target.split("#", 1)[0]:
            sources[(target, label)].add(source)
    out: dict[str, list[str]] = defaultdict(list)
    for (target, label), who in sorted(sources.items()):
        if len(who) >= MIN_SOURCES:
            out[target].append(label)
    return dict(out)


def labels_digest(labels: dict[str, list[str]]) -> str:
    """What names the labels gave (kept with the name table: when it differs after an
    edit, every text is searched again)."""
    text = json.dumps(sorted(labels.items()), ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
