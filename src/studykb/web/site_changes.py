"""Which documents' pages a site made again must make (the site's seam for not
computing every page's inputs after an edit).

A page's inputs (:func:`studykb.web.site_inputs.page_inputs`) are what every page shares
(:func:`studykb.web.site_inputs.shared`), its document's file, its sidebar, its
backlinks (with the line of each source file quoted) and the outlines of the files its
links to a heading go into. The manifest keeps, beside each page's inputs digest, the vault's file
digests the site was made from, the shared digest, and for each document the vault
files its inputs read (:func:`depends_on`). When the shared digest is the one recorded,
a document's inputs can differ only when

* its related lists are ranked again (``rank``), or were not kept;
* a file its inputs read changed (its own file, a backlink's source, a link's target:
  the recorded ones cover a link or backlink an edit removed);
* it is the target of a link in a changed file (a backlink an edit added: the links of
  a file that did not change, and what they resolve to, are the same while the shared
  digest is);
* it had no page in the last site, or a kept page's file is gone or was altered.

A document found here has its inputs computed; its pages are made again only when they
differ from the recorded ones (most do not: a backlink's source changed elsewhere than
the quoted line). Every other page keeps its recorded digest, inputs and vault files
without its inputs being read. When the shared digest differs (a title, a new or
deleted document, the configuration, the code), every page's inputs are computed as
before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document
    from studykb.web.pages import Pages
    from studykb.web.site_output import Output


def depends_on(pages: Pages, doc: Document) -> list[str]:
    """The vault files whose content ``doc``'s page inputs read (as
    :func:`studykb.web.site_inputs.page_inputs` reads them)."""
    found = {doc.path}
    found.update(b.ref.path for b in pages.backlinks_of(doc))
    found.update(f.target.split("#", 1)[0] for f in pages.outgoing(doc) if f.target)
    return sorted(found)


def changed_files(old: dict[str, str], new: dict[str, str]) -> set[str]:
    """The files that came, went or changed between two path -> digest maps."""
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def same_shared(output: Output, common: str) -> bool:
    """Whether what every page shares is what the last site recorded (``common``:
    :func:`studykb.web.site_inputs.shared`): only then is anything of it kept."""
    return bool(output.old_common) and output.old_common == common


def to_make(
    kb: Session,
    output: Output,
    docs: list[str],
    changed: set[str],
    common: str,
    rank: set[str] | None,
    lists: dict[str, str],
) -> set[str] | None:
    """The documents (of ``docs``) whose pages' inputs may differ from the last site's
    (see the module's docstring), ``changed``: the vault files that changed since
    (:func:`changed_files`); None: every one (no usable record, or the shared digest
    changed)."""
    if rank is None or not same_shared(output, common):
        return None
    in_changed = [d for d in kb.documents().values() if d.path in changed]
    make = set(rank) | {d.key for d in in_changed}
    for doc in in_changed:
        make.update(f.target for f in kb.outgoing(doc) if f.target)
    for key in docs:
        if key in make:
            continue
        recorded = output.old_docs.get(key)
        if recorded is None or key not in lists or not changed.isdisjoint(recorded[1]):
            make.add(key)
            continue
        for path in recorded[0]:
            inputs = output.old_inputs.get(path)
            if inputs is None or output.kept(path, inputs[0]) is None:
                make.add(key)
                break
    return make & set(docs)
