"""``studykb sidebar --write``: the Markdown sidebar written into each note, between markers.

The sidebar goes between ``<!-- studykb:sidebar -->`` and ``<!-- /studykb:sidebar -->``;
only what lies between them is replaced, and a note without them gets them at its end.
Everything else is kept byte for byte: the BOM, the line ends (CRLF stays CRLF), the
front matter and the body. The parser skips the region (:mod:`studykb.parse.markers`),
so the sidebar's own links never feed back into the ranking and a second run changes
no byte.

Writing is two steps. :func:`plan` reads every file and computes its new content,
skipping files that could not be parsed, that changed since the last index, or that
have only one marker (a warning names them). :func:`apply` then replaces each changed
file atomically (a temporary file in the same folder, its mode copied, ``os.replace``),
and only if the file still holds the bytes :func:`plan` read.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from studykb.errors import StudyError
from studykb.model import is_daily
from studykb.outputs.sidebar import to_markdown
from studykb.parse.markers import SIDEBAR_END, SIDEBAR_START, find_markers
from studykb.related.sidebar import Sidebar
from studykb.vault.files import FileChanged, read_for_edit, replace
from studykb.vault.outside import is_outside

if TYPE_CHECKING:
    from studykb.vault import Vault
    from studykb.vault.files import Read

#: Document types whose files get a sidebar written into them: personal notes only.
#: Entries are the user's summary of a resource, topics a definition and courses a
#: syllabus; their bodies feed hovers, plans and site pages, so they are left alone.
WRITE_TYPES = ("note",)
#: Problems that make a file unsafe to rewrite.
UNPARSEABLE = ("bad-front-matter", "unreadable")
BOM = b"\xef\xbb\xbf"
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass
class Planned:
    """One file and what it should hold."""

    path: str
    """Vault-relative path."""
    file: Path
    old: bytes
    new: bytes
    read: Read | None = None
    """The file as read (what :func:`apply` replaces only if unchanged)."""

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        old = _decode(self.old)
        new = _decode(self.new)
        return "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"a/{self.path}",
                tofile=f"b/{self.path}",
            )
        )


@dataclass
class Outcome:
    """What planning and writing did, file by file."""

    planned: list[Planned] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of files left alone."""
    warnings: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of notes with a lone or repeated marker, left untouched."""


def plan(vault: Vault, sidebars: list[Sidebar]) -> Outcome:
    """Read every target file and compute its new bytes; nothing is written."""
    out = Outcome()
    bad = {p.path: p.message for p in vault.problems() if p.code in UNPARSEABLE}
    stored = {path: digest for path, _mtime, digest in vault.file_rows()}
    for sb in sidebars:
        if sb.type not in WRITE_TYPES or "#" in sb.key or is_daily(sb.path):
            continue
        if is_outside(stored.get(sb.path, "")):
            continue  # a repository's note: studykb writes no file of a repository
        if sb.path in bad:
            out.skipped.append((sb.path, f"could not be parsed ({bad[sb.path]}); not written"))
            continue

        file = vault.root / sb.path
        try:
            read = read_for_edit(vault.root, sb.path)
        except StudyError as exc:
            out.skipped.append((sb.path, exc.message.removeprefix(f"{sb.path} ")))
            continue
        raw = read.data
        if hashlib.blake2b(raw, digest_size=16).hexdigest() != stored.get(sb.path):
            out.skipped.append(
                (sb.path, "changed since the index was brought up to date; run again")
            )
            continue
        sidebar = to_markdown(sb, ext=".md")
        if not sidebar.strip() and SIDEBAR_START.encode() not in raw:
            out.planned.append(Planned(sb.path, file, raw, raw, read))  # no empty block
            continue
        try:
            new = rewrite(raw, sidebar)
        except UnicodeDecodeError:
            out.skipped.append((sb.path, "is not valid UTF-8; not written"))
            continue
        except MarkerError as exc:
            out.warnings.append((sb.path, str(exc)))
            continue
        out.planned.append(Planned(sb.path, file, raw, new, read))
    return out


def apply(outcome: Outcome) -> Outcome:
    """Write every changed file of the plan, atomically and only if it is unchanged."""
    for item in outcome.planned:
        if not item.changed:
            outcome.unchanged.append(item.path)
            continue
        assert item.read is not None
        try:
            replace(item.read, item.new)
        except FileChanged:
            outcome.skipped.append(
                (item.path, "changed while the sidebars were computed; not written")
            )
            continue
        except StudyError as exc:
            outcome.skipped.append((item.path, exc.message))
            continue
        outcome.written.append(item.path)
    return outcome


class MarkerError(ValueError):
    """A note whose markers do not make one region."""


def rewrite(raw: bytes, markdown: str) -> bytes:
    """``raw`` with ``markdown`` between the sidebar markers (added at the end if absent)."""
    bom = BOM if raw.startswith(BOM) else b""
    text = raw[len(bom) :].decode("utf-8")
    markers = find_markers(text)
    eol = _line_end(text)
    block = "".join(line + eol for line in markdown.split("\n")[:-1]) if markdown else ""
    if block:
        block += eol  # a blank line before the end marker closes any list
    lines = _LINES.findall(text)
    region = markers.region
    if region is not None:
        start, end = region
        new = "".join(lines[: start + 1]) + block + "".join(lines[end:])
    elif markers.absent:
        sep = ""
        if text and not text.endswith(("\n", "\r")):
            sep = eol
        if text.strip() and not _ends_blank(text + sep):
            sep += eol
        new = text + sep + SIDEBAR_START + eol + block + SIDEBAR_END + eol
        if find_markers(new).region is None:  # e.g. the note ends inside an open code fence
            raise MarkerError(
                "ends inside a code block or HTML block, so markers added at the "
                "end would not count; left untouched (add them by hand)"
            )
    else:
        raise MarkerError(_marker_problem(markers.starts, markers.ends))
    return bom + new.encode("utf-8")


def _marker_problem(starts: tuple[int, ...], ends: tuple[int, ...]) -> str:
    if starts and not ends:
        what = f"has {SIDEBAR_START} (line {starts[0] + 1}) but no {SIDEBAR_END}"
    elif ends and not starts:
        what = f"has {SIDEBAR_END} (line {ends[0] + 1}) but no {SIDEBAR_START}"
    elif len(starts) > 1 or len(ends) > 1:
        what = "has more than one sidebar marker of a kind"
    else:
        what = "has the sidebar end marker before the start marker"
    return f"{what}; left untouched (fix the markers or remove them)"


def _line_end(text: str) -> str:
    match = re.search(r"\r\n|\r|\n", text)
    return match.group() if match else "\n"


def _ends_blank(text: str) -> bool:
    lines = _LINES.findall(text)
    return bool(lines) and not lines[-1].strip()


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")
