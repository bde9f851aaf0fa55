"""Walking the vault: which Markdown files there are, with their mtime and size."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

from studykb.config import Config
from studykb.model import Problem
from studykb.parse.reading import DRAWING
from studykb.vault import files
from studykb.vault.scope import Scope


@dataclass
class Scan:
    """The result of one walk."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Vault path -> (mtime_ns, size) of every Markdown file to read."""
    attachments: dict[str, str] = field(default_factory=dict)
    """Other files (images, PDFs): lower-cased vault path -> vault path."""
    attachment_names: dict[str, str] = field(default_factory=dict)
    """Other files by lower-cased name -> the vault path of the first found, for
    ``![[x.png]]``."""
    problems: list[Problem] = field(default_factory=list)
    """Files that could not be read as documents: loops, folders named ``x.md``, huge files."""
    stale: list[str] = field(default_factory=list)
    """Absolute paths of temporary files a killed studykb left (removed by the refresh)."""


def scan(config: Config, scope: Scope | None = None) -> Scan:
    """Walk ``config.root``, skipping hidden folders, ``exclude`` and the state folder;
    with ``scope``, only the Markdown files the site generator renders are documents (the
    others are still files that links may name).

    Symbolic links are followed only to places inside the vault (or inside a folder of
    ``allow_outside``); a link out of it is reported (``outside-vault``) and not read.
    """
    walk = _Walk(config, scope)
    # the loop below runs once per file: a no-op refresh is mostly this walk
    stack = [("", str(config.root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        for entry in walk.folder(rel_dir, abs_dir):
            folder = walk.entry(rel_dir, abs_dir, entry)
            if folder is not None:
                stack.append(folder)
    return walk.out


def unread(config: Config, rel: str) -> str | None:
    """Why the scan would not read a note at vault path ``rel`` (None: it would): a
    hidden file or folder on the way, a name or folder ``exclude`` skips, a folder
    that is a link out of the vault. For commands that put a note somewhere."""
    walk = _Walk(config)
    parts = rel.split("/")
    for n, name in enumerate(parts, 1):
        if name.startswith("."):
            return f"{name!r} is hidden, and studykb does not read hidden files or folders"
        if walk.excluded and walk.skip("/".join(parts[:n]), name):
            return f"{'/'.join(parts[:n])!r} is excluded by exclude in studykb.toml"
    folder = os.path.join(config.root, *parts[:-1])
    while not os.path.isdir(folder) and folder != str(config.root):
        folder = os.path.dirname(folder)  # the deepest folder that exists (new ones follow it)
    real = os.path.realpath(folder)
    if not walk.inside(real):
        return f"{'/'.join(parts[:-1])!r} leads to {real}, outside the vault"
    return None


def _clones_inside(config: Config) -> frozenset[str]:
    """The vault paths of the clones ``[repos.NAME]`` places inside the vault: a clone is
    the repository's, not the vault's (its Markdown comes in through ``notes``, read from
    git, never from the working tree)."""
    root = str(config.root)
    out = set()
    for _name, written, _url, _line in config.repos:
        if not written.strip():
            continue
        clone = os.path.normpath(os.path.join(root, os.path.expanduser(written.strip())))
        rel = os.path.relpath(clone, root)
        if rel != "." and not rel.startswith(".." + os.sep) and rel != "..":
            out.add(rel.replace(os.sep, "/"))
    return frozenset(out)


class _Walk:
    """What one walk has found, and its rules (see :func:`scan`)."""

    def __init__(self, config: Config, scope: Scope | None = None) -> None:
        self.config = config
        self.scope = scope if scope is not None and (scope.within or scope.ignore) else None
        self.out = Scan()
        self.allowed = [os.path.realpath(config.root), *(str(p) for p in config.allow_outside)]
        self.excluded = set(config.exclude)
        self.patterns = [e for e in config.exclude if any(c in e for c in "*?[")]
        self.clones = _clones_inside(config)
        self.seen_dirs: set[tuple[int, int]] = set()

    def problem(self, path: str, code: str, message: str) -> None:
        self.out.problems.append(Problem(path, 0, self.config.severity_of(code), code, message))

    def inside(self, path: str) -> bool:
        return any(
            path == base or path.startswith(base.rstrip(os.sep) + os.sep) for base in self.allowed
        )

    def skip(self, rel: str, name: str) -> bool:
        if rel in self.excluded or name in self.excluded:
            return True
        return bool(self.patterns) and any(
            fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in self.patterns
        )

    def folder(self, rel_dir: str, abs_dir: str) -> list[os.DirEntry[str]]:
        """The entries of a folder; none when it cannot be read or was seen already (a
        folder link that loops back)."""
        try:
            st = os.stat(abs_dir)
            ident = (st.st_dev, st.st_ino)
            if ident in self.seen_dirs:
                self.problem(rel_dir, "symlink-loop", "folder link loops back; not read again")
                return []
            self.seen_dirs.add(ident)
            return list(os.scandir(abs_dir))
        except OSError as exc:
            self.problem(rel_dir or ".", "unreadable", f"cannot read folder: {exc.strerror}")
            return []

    def entry(self, rel_dir: str, abs_dir: str, entry: os.DirEntry[str]) -> tuple[str, str] | None:
        """Take in one entry of a folder; (vault path, path) of a folder to walk next."""
        name = entry.name
        rel = f"{rel_dir}/{name}" if rel_dir else name
        if name[0] == ".":
            if name[-4:] in (".tmp", ".bak") and _leftover(
                name, abs_dir, rel, self.config, self.out
            ):
                self.out.stale.append(entry.path)
            return None
        if self.excluded and self.skip(rel, name):
            return None
        if self.clones and rel in self.clones:
            return None  # a tracked repository's clone: its notes are read from git, if named
        is_md = name[-3:].lower() == ".md" and not name.lower().endswith(DRAWING)
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir()
        except OSError:
            is_link = is_dir = False
        if is_link and not self.followed(entry, rel, is_dir or is_md):
            return None
        if not (name.isascii() or _utf8(name)):  # the state and messages need UTF-8
            if is_dir or is_md:
                self.problem(
                    os.fsencode(rel).decode("utf-8", "backslashreplace"),
                    "unreadable",
                    "the name is not valid UTF-8; skipped (rename it)",
                )
            return None
        if is_dir:
            if is_md:
                self.problem(rel, "not-a-file", "a folder named like a note; skipped")
            return rel, entry.path
        if is_md and (self.scope is None or self.scope.reads(rel)):
            self.note(rel, entry)
        elif not is_md:
            self.out.attachments[rel.lower()] = rel
            self.out.attachment_names.setdefault(name.lower(), rel)
            if name.lower().endswith(DRAWING):  # ![[x.excalidraw]] names x.excalidraw.md
                self.out.attachments[rel[:-3].lower()] = rel
                self.out.attachment_names.setdefault(name[:-3].lower(), rel)
        return None

    def followed(self, entry: os.DirEntry[str], rel: str, report: bool) -> bool:
        """Whether a symbolic link leads inside the vault (else, if ``report``, say so)."""
        real = os.path.realpath(entry.path)
        if self.inside(real):
            return True
        if report:
            self.problem(
                rel,
                "outside-vault",
                f"a link to {real}, outside the vault; not read (studykb.toml's "
                "allow_outside can allow it)",
            )
        return False

    def note(self, rel: str, entry: os.DirEntry[str]) -> None:
        """A Markdown file: kept with its mtime and size, unless it cannot be read."""
        try:
            st = entry.stat()
        except OSError as exc:
            code = "symlink-loop" if exc.errno == 40 else "unreadable"
            what = "symbolic link loop" if exc.errno == 40 else f"cannot stat: {exc.strerror}"
            self.problem(rel, code, what)
            return
        if not entry.is_file():
            self.problem(rel, "not-a-file", "not a regular file; skipped")
            return
        limit = self.config.max_file_bytes
        if st.st_size > limit:
            mb, most = st.st_size / 1024 / 1024, limit / 1024 / 1024
            self.problem(rel, "too-large", f"{mb:.1f} MB is over the {most:g} MB limit; skipped")
            return
        self.out.files[rel] = (st.st_mtime_ns, st.st_size)


def _leftover(name: str, folder: str, rel: str, config: Config, out: Scan) -> bool:
    """Whether the hidden file ``name`` is a temporary file a killed studykb left (to be
    removed); the copy an interrupted in-place rewrite kept is reported instead."""
    if files.stale_temporary(name, folder):
        return True
    if name.endswith(".bak") and files.TEMPORARY.match(name[:-4] + ".tmp"):
        out.problems.append(
            Problem(
                rel,
                0,
                config.severity_of("interrupted-write"),
                "interrupted-write",
                "a copy kept by a rewrite that was interrupted; compare it "
                "with the note beside it, then delete it",
            )
        )
    return False


def _utf8(name: str) -> bool:
    """Whether a file name decoded by the OS is real text (no surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
