"""Renaming a document: ``studykb mv OLD NEW`` and the editor's rename.

:func:`plan` finds every reference to the document (and to its course units) in every
form it can be written, and says how each is rewritten:

* ``[[old]]``, ``[[old|label]]``, ``[[old#heading]]``, ``![[old]]``: the name becomes
  the new id (a path written ``[[notes/old]]`` becomes the new path, in the same form);
* ``[label](../notes/old.md#heading)``: the new path, relative to the file it is in;
* a bare name in a front-matter list (``requires: [old]``, ``{ref: old, reason: ...}``,
  ``course: old``): the new id (or path);
* links in the sidebar a note holds between its ``studykb:sidebar`` markers (the parser
  skips that region, so the state does not know them): rewritten as links are;
* a topic's old id in ``tags`` and ``covers`` (a unit's too) and inline ``#tags``, when
  the topic's id changes (:mod:`studykb.study.rename_tags`);
* references by alias, title or URL still fit after the move and are left as written.

The moved file's own relative links are rewritten for its new folder, and its ``id``
in the front matter, when it named the file, becomes the new one. Nothing is written
here: the command line applies a :class:`Move` to the files (:func:`apply`: all or
nothing, through the journal of :mod:`studykb.vault.journal`), the language server
hands it to the editor as a workspace edit.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from studykb.errors import StudyError, UsageError
from studykb.model import Document, Reference
from studykb.parse import parse_file
from studykb.parse.fm_items import unproven
from studykb.parse.markers import SIDEBAR_START, find_markers
from studykb.parse.placing import place
from studykb.study import rename_tags
from studykb.vault import journal
from studykb.vault.outside import read_only, refuse
from studykb.vault.resolve import Names, fold

if TYPE_CHECKING:
    from studykb.parse.reading import Reading
    from studykb.vault import Vault

_ID_LINE = re.compile(r"""^(\s*["']?id["']?\s*[:=]\s*["']?)([^"'\s#]+)""")
#: Reads the text of a file at a vault path (an editor's buffer, or the disk).
Reader = Callable[[str], str]


@dataclass(frozen=True)
class Edit:
    """One piece of text replaced: a reference, or the ``id`` of the moved document."""

    path: str
    """Vault path of the file, before the move."""
    line: int
    """0-based line."""
    start: int
    """Code-point column where the replaced text starts."""
    end: int
    old: str
    """The text replaced (it may span lines: then ``end`` is a column of the last one)."""
    new: str

    @property
    def end_line(self) -> int:
        """0-based line where the replaced text ends."""
        return self.line + self.old.count("\n")


@dataclass(frozen=True)
class Move:
    """What renaming one document does."""

    doc: Document
    old_path: str
    new_path: str
    new_id: str
    edits: list[Edit] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    """The text each edited file had when planned (what the edits apply to)."""
    kept: list[str] = field(default_factory=list)
    """The repositories' notes that name it, left as they are (studykb writes no file
    of a repository)."""

    @property
    def files(self) -> list[str]:
        """The files whose text changes (before the move), the moved one first."""
        paths = {e.path for e in self.edits} - {self.old_path}
        return [self.old_path, *sorted(paths)]


def target_path(doc: Document, new: str) -> str:
    """The vault path ``new`` names: a path (with ``/`` or ``.md``) from the vault
    folder, else a new file name in the document's own folder."""
    new = new.strip().replace("\\", "/").strip("/")
    if not new or new in (".", "..") or any(p in ("", ".", "..") for p in new.split("/")):
        raise UsageError(f"{new!r} is not a name or a path inside the vault.")
    if "/" not in new and not new.lower().endswith(".md"):
        folder = posixpath.dirname(doc.path)
        new = posixpath.join(folder, new) if folder else new
    return new if new.lower().endswith(".md") else new + ".md"


def plan(vault: Vault, doc: Document, new: str, read: Reader) -> Move:
    """How renaming ``doc`` to ``new`` (a name or a vault path) rewrites the vault."""
    if doc.type == "unit":
        raise UsageError(f"{doc.id} is a unit of a course; rename the course instead.")
    refuse(vault, doc.path, "mv")
    journal.refuse_unfinished(vault.config.state_dir)
    new_path = target_path(doc, new)
    if new_path == doc.path:
        raise UsageError(f"{doc.path} is already there.")
    if fold(new_path) != fold(doc.path) and (vault.root / new_path).exists():
        raise StudyError(f"{new_path} exists already; not moving {doc.path} over it.")
    stem = _stem(doc.path)
    new_stem = _stem(new_path)
    keeps_id = doc.explicit_id and fold(doc.id) != fold(stem)
    new_id = doc.id if keeps_id else new_stem
    names = vault.names()
    taken = [
        k
        for _l, k in names.table.get(fold(new_id), ())
        if k != doc.key and not k.startswith(doc.key + "#")
    ]
    if new_id != doc.id and taken:
        raise StudyError(
            f"the name {new_id!r} is taken by {names.paths.get(taken[0], taken[0])}.",
            hint="Choose another name.",
        )
    move = Move(doc, doc.path, new_path, new_id)
    renamer = _Renamer(move, stem, vault.reading)
    tag = rename_tags.renamed_name(doc, stem, new_id)
    tagged = (
        {d.path for d in vault.documents().values() if rename_tags.names_topic(d, tag)}
        if tag
        else set()
    )
    sources = sorted(
        {link.ref.path for link in vault.backlinks(doc.key)}
        | {link.ref.path for key in _unit_keys(vault, doc) for link in vault.backlinks(key)}
        | {doc.path}
        | tagged
        | _with_sidebars(vault.root, [p for p, _m, _h in vault.file_rows()], doc.path)
    )
    for path in sources:
        if read_only(vault, path):  # a repository's note: its links are its own
            move.kept.append(path)
            continue
        text = read(path)
        renamer.file(path, text, names)
        if tag and path in tagged:
            for line, start, end, old, new_text in rename_tags.spans(
                path, text, tag, new_id, vault.reading
            ):
                move.edits.append(Edit(path, line, start, end, old, new_text))
        if path == doc.path or any(e.path == path for e in move.edits):
            move.texts[path] = text
    move.edits[:] = dict.fromkeys(move.edits)  # one place found twice is one edit
    move.edits.sort(key=lambda e: (e.path != move.old_path, e.path, e.line, e.start))
    _no_overlaps(move.edits)
    _prove(move)
    return move


def _prove(move: Move) -> None:
    """Each rewritten file's front matter must parse to the old mapping with only the
    references renamed (a new name that YAML reads otherwise, ``a: b``, would change
    what the file says): else nothing is changed, and the file is named."""
    by_file: dict[str, list[Edit]] = {}
    for edit in move.edits:
        by_file.setdefault(edit.path, []).append(edit)
    for path, edits in by_file.items():
        text = move.texts[path]
        why = unproven(text, applied(text, edits), [(e.old, e.new) for e in edits])
        if why is not None:
            raise StudyError(
                f"{path}: renaming it there would change its front matter ({why}); "
                "nothing was changed.",
                hint="Choose another name, or rename it there by hand first.",
            )


def _with_sidebars(root: Path, paths: list[str], moved: str) -> set[str]:
    """The files holding a sidebar region whose text may name the moved file (they are
    read; the parser skips the region, so the state cannot say)."""
    name = posixpath.basename(moved)[:-3].encode("utf-8", "surrogateescape")
    out = set()
    for path in paths:
        try:
            data = (root / path).read_bytes()
        except OSError:
            continue
        if SIDEBAR_START.encode() in data and name in data:
            out.add(path)
    return out


def _no_overlaps(edits: list[Edit]) -> None:
    """Two edits of one place (a name read both as a link and as a tag) would garble it."""
    for a, b in zip(edits, edits[1:], strict=False):
        if a.path == b.path and (a.end_line, a.end) > (b.line, b.start):
            raise StudyError(
                f"{a.path}:{b.line + 1}: {b.old!r} would be rewritten twice; nothing was changed.",
                hint="Rename it there by hand first.",
            )


def _unit_keys(vault: Vault, doc: Document) -> list[str]:
    if doc.type != "course":
        return []
    return [key for key in vault.keys_in([doc.path]) if key.startswith(doc.key + "#")]


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name[:-3] if name.lower().endswith(".md") else name


class _Renamer:
    """Finds the edits of one file after another."""

    def __init__(self, move: Move, stem: str, reading: Reading) -> None:
        self.move = move
        self.reading = reading
        """The vault's parse rules (its site generator's), as the state was read."""
        doc = move.doc
        self.old_names = {fold(doc.id), fold(stem), fold(doc.path), fold(doc.path[:-3])}

    def file(self, path: str, text: str, names: Names) -> None:
        move = self.move
        lines = text.split("\n")
        moved = path == move.old_path
        parsed = parse_file(path, text.encode("utf-8", errors="surrogatepass"), self.reading)
        self.references(path, lines, parsed.references, names)
        region = _sidebar(text)
        if region is not None:
            only = "\n".join(
                line if region[0] < n < region[1] else "" for n, line in enumerate(lines)
            )
            inside = parse_file(path, only.encode("utf-8", errors="surrogatepass"), self.reading)
            self.references(path, lines, inside.references, names)
        if moved and move.doc.explicit_id and move.new_id != move.doc.id:
            self.id_line(path, lines)

    def references(
        self, path: str, lines: list[str], refs: tuple[Reference, ...], names: Names
    ) -> None:
        """The edits of the references ``refs`` of the file at ``path``."""
        move = self.move
        moved = path == move.old_path
        for placed in place(refs, lines):
            ref, line, start = placed.ref, placed.line, placed.start
            if placed.found != ref.text:
                continue  # not written as parsed (an escape): left alone
            key, _state, _note = names.resolve(
                ref.source, ref.path, ref.target, ref.style, ref.anchor, ref.optional, ref.text
            )
            here = key is not None and (key == move.doc.key or key.startswith(move.doc.key + "#"))
            new = None
            if here:
                new = self.rewritten(ref, path)
            elif moved and ref.style == "path" and key is not None:
                new = _relative_url(ref.text, names.paths.get(key, ""), move.new_path)
            if new is not None and new != ref.text:
                move.edits.append(Edit(path, line, start, start + len(ref.text), ref.text, new))

    def rewritten(self, ref: Reference, path: str) -> str | None:
        """The new text of a reference to the document, or None to leave it."""
        move = self.move
        source = move.new_path if path == move.old_path else path
        if ref.style == "path":
            return _relative_url(ref.text, move.new_path, source)
        text = ref.text
        if text.startswith(("[[", "![[")):
            bang = "!" if text.startswith("!") else ""
            inner = text[len(bang) + 2 : -2] if text.endswith("]]") else text[len(bang) + 2 :]
            cut = min(
                (i for i in (inner.find("#"), inner.find("|")) if i != -1), default=len(inner)
            )
            name = self.name_for(inner[:cut])
            if name is None:
                return None
            return f"{bang}[[{name}{inner[cut:]}" + ("]]" if text.endswith("]]") else "")
        return self.name_for(text)

    def name_for(self, written: str) -> str | None:
        """The new way to write a name that named the document (None: an alias, a title)."""
        bare = written.strip()
        head, hash_, unit = bare.partition("#")
        if fold(head) not in self.old_names:
            return None
        move = self.move
        if "/" in head:  # a path: keep its form (with or without .md)
            new = move.new_path if head.lower().endswith(".md") else move.new_path[:-3]
        else:
            new = move.new_id
        return new + hash_ + unit

    def id_line(self, path: str, lines: list[str]) -> None:
        """The front matter's ``id`` of the moved document."""
        for n, text in enumerate(lines[:200]):
            match = _ID_LINE.match(text)
            if match and fold(match.group(2)) == fold(self.move.doc.id):
                start = match.start(2)
                self.move.edits.append(
                    Edit(path, n, start, match.end(2), match.group(2), self.move.new_id)
                )
                return


def _sidebar(text: str) -> tuple[int, int] | None:
    """(start, end) lines of the sidebar markers of ``text``, when it has a region."""
    if SIDEBAR_START not in text:
        return None
    return find_markers(text.removeprefix("\ufeff")).region


def _relative_url(url: str, target: str, source: str) -> str | None:
    """``url`` (a Markdown link in the file at ``source``) pointing at ``target`` instead,
    in the same form: relative or from the site root, with or without ``.md``, escaped
    alike, its ``#anchor`` kept."""
    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I):
        return None
    path, hash_, anchor = url.partition("#")
    escaped = "%" in path
    path = unquote(path) if escaped else path
    if path.startswith("/"):
        new = "/" + target
    else:
        new = posixpath.relpath(target, posixpath.dirname(source) or ".")
    if not path.lower().endswith(".md"):
        new = new[:-3]
    if escaped:
        new = quote(new)
    return new + hash_ + anchor


def applied(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` (all of one file) made, from the last one back."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    for edit in sorted(edits, key=lambda e: (e.line, e.start), reverse=True):
        at = starts[edit.line] + edit.start if edit.line < len(starts) - 1 else -1
        if at < 0 or text[at : at + len(edit.old)] != edit.old:
            raise StudyError(
                f"{edit.path}:{edit.line + 1} changed since the rename was "
                "planned; nothing was changed. Run it again."
            )
        text = text[:at] + edit.new + text[at + len(edit.old) :]
    return text


@dataclass(frozen=True)
class Done:
    """What :func:`apply` wrote."""

    moved: tuple[str, str]
    rewritten: list[str]
    """Other files whose references were rewritten."""


def apply(root: Path, state_dir: Path, move: Move) -> Done:
    """Write the move all or nothing (:func:`studykb.vault.journal.run`): the document
    at its new path (its own edits made), every other file rewritten, then the old file
    removed, each only if it still holds the text the move was planned from. A file
    that changed stops it with FileChanged, and what was done is undone."""
    by_file: dict[str, list[Edit]] = {}
    for edit in move.edits:
        by_file.setdefault(edit.path, []).append(edit)

    def data(text: str) -> bytes:
        return text.encode("utf-8", "surrogateescape")

    old = move.texts[move.old_path]
    moved = applied(old, by_file.get(move.old_path, []))
    rewritten = [path for path in move.files[1:] if by_file.get(path)]
    steps = [journal.Step(move.new_path, None, data(moved))]
    steps += [
        journal.Step(path, data(move.texts[path]), data(applied(move.texts[path], by_file[path])))
        for path in rewritten
    ]
    steps.append(journal.Step(move.old_path, data(old), None))
    journal.run(root, state_dir, f"move {move.old_path} -> {move.new_path}", steps)
    return Done((move.old_path, move.new_path), rewritten)


def read_disk(root: Path) -> Reader:
    """A reader of the files on disk (as the command line plans a move)."""

    def read(path: str) -> str:
        return (root / path).read_bytes().decode("utf-8", errors="surrogateescape")

    return read
