"""Vault-wide problems: duplicate ids, prerequisite loops, missing headings and attachments."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from studykb.graph import loops
from studykb.model import ERROR, WARNING
from studykb.parse.outline import Outline
from studykb.parse.reading import GITHUB, Reading, checkable
from studykb.vault.includes import Includes, expanding, pending_rows
from studykb.vault.outside import repository_notes
from studykb.vault.state.rows import AnchorProblem, AttachmentRef, StoredProblem

if TYPE_CHECKING:
    from studykb.vault.includes import Includes
    from studykb.vault.state import Tables

__all__ = ["AttachmentRef", "Files", "attachment_path"]

_ID_LINE = re.compile(r"""^\s*["']?id["']?\s*[:=]""")


def vault_problems(
    state: Tables, root: Path, recompute_cycles: bool, ids: set[str] | None = None
) -> None:
    """Recompute ``duplicate-id`` and ``cycle`` (when the requires rows changed).

    ``ids``: the (folded) ids an incremental change declared or dropped, the only ones
    whose duplicates can have changed; None checks every id. ``recompute_cycles`` is
    the caller's hint that loops may have changed; the stored signature of the rows
    decides (a bulk load deletes it to force the work).
    """
    out = _duplicates(state, root, ids)
    # The loops depend on the resolved ``requires`` rows only, and those also change when
    # an edit elsewhere makes a name resolve differently: compare a signature of all of
    # them. Unchanged rows, unchanged loops (and no networkx import), which is the common
    # case of an edit to one note; when the caller knows no ``requires`` row changed
    # target, even the signature is skipped.
    if recompute_cycles:
        out.extend(_changed_cycles(state))
    state.problems.insert(out)


def _duplicates(state: Tables, root: Path, ids: set[str] | None) -> list[StoredProblem]:
    """Delete the ``duplicate-id`` problems of ``ids`` (None: of every id) and return them
    anew, one per file declaring an id another file declares too."""
    if ids is None:
        state.problems.delete_vault("duplicate-id")
        rows = state.docs.duplicate_ids()
    else:
        rows = []
        for _id in sorted(ids):
            state.problems.delete_vault("duplicate-id", _duplicate_message(_id, ""))
            rows += state.docs.duplicate_ids(_id)
    out = []
    for _id, declaring in rows:
        paths = sorted(declaring)
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            line = _id_line(root, path)
            message = _duplicate_message(_id, others)
            out.append(StoredProblem(path, line, ERROR, "duplicate-id", message, "vault"))
    return out


def _changed_cycles(state: Tables) -> list[StoredProblem]:
    """The ``cycle`` problems anew when the resolved ``requires`` rows differ from the
    signature stored in ``meta`` (the old ones deleted, the signature updated); else none."""
    edges = state.refs.requires_resolved()
    signature = hashlib.blake2b(repr(sorted(edges)).encode(), digest_size=16).hexdigest()
    if state.meta.get("requires") == signature:
        return []
    state.problems.delete_vault("cycle")
    cycles = _cycles(edges)
    state.meta.put({"requires": signature})
    return cycles


def _duplicate_message(folded_id: str, others: str) -> str:
    return f"id {folded_id!r} is also declared in {others}"


def _id_line(root: Path, path: str) -> int:
    """The line that declares ``id`` in the front matter (1 when it cannot be found)."""
    try:
        with open(root / path, encoding="utf-8-sig", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if _ID_LINE.match(line):
                    return n
                if n > 200:
                    break
    except OSError:
        pass
    return 1


def _cycles(edges: list[tuple[str, str, str, int]]) -> list[StoredProblem]:
    """One ``cycle`` problem per prerequisite loop (strongly connected component)."""
    edges = _on_loops(edges)
    if not edges:  # the common case: no loop, and networkx is not even imported
        return []

    out = []
    for members, where in loops(edges):
        first_path, first_line = where[0]
        chain = " -> ".join(members + [members[0]])
        places = ", ".join(f"{p}:{ln}" for p, ln in where)
        message = f"prerequisite loop: {chain} (requires at {places})"
        out.append(StoredProblem(first_path, first_line, ERROR, "cycle", message, "vault"))
    return out


def _on_loops(edges: list[tuple[str, str, str, int]]) -> list[tuple[str, str, str, int]]:
    """The edges between documents that may be on a loop.

    A document nothing requires, or that requires nothing (among the rest), is on no
    loop: peeling those off again and again leaves the loops and what runs between
    them, a handful of the ~10k edges of a large vault, for networkx to take apart.
    """
    succ: dict[str, set[str]] = {}
    pred: dict[str, set[str]] = {}
    for source, target, _path, _line in edges:
        succ.setdefault(source, set()).add(target)
        pred.setdefault(target, set()).add(source)
    alive = succ.keys() | pred.keys()
    outs = {n: len(succ.get(n, ())) for n in alive}
    ins = {n: len(pred.get(n, ())) for n in alive}
    stack = [n for n in alive if not outs[n] or not ins[n]]
    while stack:
        node = stack.pop()
        if node not in alive:
            continue
        alive.discard(node)
        for other in succ.get(node, ()):
            if other in alive:
                ins[other] -= 1
                if not ins[other]:
                    stack.append(other)
        for other in pred.get(node, ()):
            if other in alive:
                outs[other] -= 1
                if not outs[other]:
                    stack.append(other)
    return [e for e in edges if e[0] in alive and e[1] in alive]


def anchor_problems(
    state: Tables,
    changed: list[str] | None,
    reading: Reading = GITHUB,
    root: Path | None = None,
) -> None:
    """Recompute ``[[note#heading]]`` checks for references from or into ``changed`` files.

    ``None`` means everything (a full build). Block references (``#^id``) and anchors
    that name a course unit are not headings and are left alone; headings are matched by
    ``reading``'s rules (``parse.outline``). With ``root``, the headings of files a page
    includes are the page's too (``vault/includes.py``); a page with includes is checked
    again on every change, as an included file may be the one that changed.
    """
    including = [] if root is None else state.texts.including()
    if changed is not None and including:
        changed = list(dict.fromkeys([*changed, *(path for path, _o in including)]))
    if changed is None:
        state.anchors.clear()
        rows = state.refs.anchored()
    else:
        state.anchors.delete_touching(changed)
        rows = state.refs.anchored(changed)
        # a reference that now resolves to a changed file may have had a problem with
        # its former target: forget it, it is recomputed below
        state.anchors.forget((r.path, r.line, r.text) for r in rows)

    includes = Includes(root, reading) if root is not None and including else None
    found = missing_anchors(rows, state.texts.outline, reading, includes)
    if includes is not None:
        wanted = None if changed is None else set(changed)
        found += pending_rows(
            ((p, o) for p, o in including if wanted is None or p in wanted), includes
        )
    state.anchors.insert(found)


def wants_anchor_check(anchor: str, target_key: str | None) -> bool:
    """Whether ``[[target#anchor]]`` names a heading to look for (not a block or a unit)."""
    return target_key is not None and "#" not in target_key and checkable(anchor)


def missing_anchors(
    rows: Iterable[tuple[str, int, str, str, str]],
    outlines: Callable[[str], str | None],
    reading: Reading = GITHUB,
    includes: Includes | None = None,
) -> list[AnchorProblem]:
    """Rows of the ``anchors`` table for (path, line, text, anchor, target path) references
    whose target has no such heading or label; ``outlines`` gives a file's outline (JSON);
    ``includes``: the headings of files a target includes count too."""
    read = expanding(outlines, includes)
    checked = [row for row in dict.fromkeys(rows) if checkable(row[3])]
    missing: dict[str, dict[str, bool]] = {}  # target -> anchor -> whether it has none
    for _path, _line, _text, anchor, target in checked:
        missing.setdefault(target, {})[anchor] = False
    # each target's outline read and let go in turn (a memory seam: a first build of 50k
    # documents held every target's parsed outline and anchor index, about 75 MB)
    for target, anchors in missing.items():
        outline = read(target)
        if not any(made_by_code(h.text) for h in outline.headings):
            for anchor in anchors:
                anchors[anchor] = outline.find(anchor, reading) is None
    return [
        AnchorProblem(path, line, f"{text!r}: the target has no heading {anchor!r}", target)
        for path, line, text, anchor, target in checked
        if missing[target][anchor]
    ]


_COMMENT = re.compile(r"<!--.*?-->", re.S)


def made_by_code(heading: str) -> bool:
    """Whether a heading is only an HTML comment (``#### <!-- md:setting x -->``): a
    marker the site's own code (an mkdocs hook, a plugin, a template) turns into a
    heading whose id studykb cannot know, so anchors into its page are not judged."""
    return bool(heading.strip()) and not _COMMENT.sub("", heading).strip()


# --- attachments ---------------------------------------------------------------------------

#: Generators that serve site-absolute files from places studykb does not read (themes,
#: ``static/``, ``assets/``, generated feeds): such links are never reported missing.
_SERVED_ELSEWHERE = ("hugo", "zola", "jekyll", "quartz")


@dataclass(frozen=True)
class Files:
    """The vault's files that are not documents, as the scan found them."""

    root: Path
    #: Lower-cased vault path -> vault path.
    paths: dict[str, str]
    #: Lower-cased file name -> the vault path of the first file of that name.
    names: dict[str, str]

    def at(self, path: str) -> str | None:
        """The file at vault path ``path`` (any case; hidden and excluded ones too)."""
        found = self.paths.get(path.lower())
        if (
            found is None
            and not path.startswith("../")
            and os.path.isfile(os.path.join(self.root, path))
        ):
            return path
        return found


#: Generators that find a Markdown link's file by its name anywhere in the vault.
BY_NAME = ("obsidian", "quartz")


def attachment_path(ref: AttachmentRef, files: Files, reading: Reading = GITHUB) -> str | None:
    """The vault path of the file ``ref`` names, or None when there is none.

    Wikilink embeds find a file by path, beside the note, or by its name anywhere in the
    vault (as Obsidian does; there and in Quartz Markdown links do too); a relative link
    on a page served as a folder (Hugo, Zola) may also start at the page's URL.
    """
    if ref.style == "name":
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(ref.path), ref.target))
        return (
            files.at(ref.target)
            or files.at(rel)
            or files.names.get(posixpath.basename(ref.target).lower())
        )
    for candidate in _path_candidates(ref, reading):
        found = files.at(candidate)
        if found is not None:
            return found
    if reading.generator in BY_NAME:
        # Obsidian, and Quartz's "shortest" link resolution, find ![](x.png) by its name
        return files.names.get(posixpath.basename(ref.target).lower())
    return None


def _path_candidates(ref: AttachmentRef, reading: Reading) -> list[str]:
    out = [ref.target]
    written = unquote(ref.text).partition("#")[0].split("?", 1)[0]
    if written.startswith("/"):  # served from the site's static folders
        out.extend(
            posixpath.normpath(f"{d}/{written.lstrip('/')}")
            for d in reading.static_dirs
            if d != "."
        )
    elif reading.page_urls and written and not written.startswith("@/"):
        out.append(posixpath.normpath(posixpath.join(reading.page_folder(ref.path), written)))
    return out


def reported_missing(ref: AttachmentRef, generator: str) -> bool:
    """Whether a missing file behind ``ref`` is a problem: not for site-absolute links of a
    generator that serves them from its theme, ``static/`` or generated files."""
    return not (generator in _SERVED_ELSEWHERE and ref.text.lstrip("!").startswith("/"))


def attachment_problems(
    state: Tables, files: Files, reading: Reading = GITHUB, paths: list[str] | None = None
) -> None:
    """Recompute ``missing-attachment`` for the references to files that are not documents
    written in ``paths`` (None: everywhere, when the files themselves changed)."""
    state.problems.delete_found_by("attach", paths)
    rows = state.refs.assets(paths)
    notes = repository_notes(state)
    out = []
    for ref in rows:
        if not reported_missing(ref, reading.generator) or ref.path in notes:
            continue  # a repository's note names the repository's files, not the vault's
        if attachment_path(ref, files, reading) is None:
            message = f"{ref.text!r}: no file {ref.target!r} in the vault"
            out.append(
                StoredProblem(ref.path, ref.line, WARNING, "missing-attachment", message, "attach")
            )
    out += _include_problems(state, files.root, reading, paths)
    state.problems.insert(out)


def _include_problems(
    state: Tables, root: Path, reading: Reading, paths: list[str] | None
) -> list[StoredProblem]:
    """``missing-attachment`` for each include (of a page in ``paths``; None: every page)
    whose file is not in the vault: the generator would fail or paste nothing there."""
    notes = repository_notes(state)
    includes = Includes(root, reading)
    return [
        StoredProblem(path, line, WARNING, "missing-attachment", message, "attach")
        for path, text in state.texts.including(paths)
        if path not in notes
        for line, message in includes.missing(path, Outline.from_json(text))
    ]
