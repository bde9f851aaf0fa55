"""Walking the vault: which Markdown files there are, with their mtime and size."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

from studykb.config import Config
from studykb.model import Problem
from studykb.vault import files


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


def scan(config: Config) -> Scan:
    """Walk ``config.root``, skipping hidden folders, ``exclude`` and the state folder.

    Symbolic links are followed only to places inside the vault (or inside a folder of
    ``allow_outside``); a link out of it is reported (``outside-vault``) and not read.
    """
    out = Scan()
    root = str(config.root)
    real_root = os.path.realpath(root)
    allowed = [real_root, *(str(p) for p in config.allow_outside)]

    def inside(path: str) -> bool:
        return any(
            path == base or path.startswith(base.rstrip(os.sep) + os.sep) for base in allowed
        )

    excluded = set(config.exclude)
    patterns = [e for e in config.exclude if any(c in e for c in "*?[")]

    def skip(rel: str, name: str) -> bool:
        if rel in excluded or name in excluded:
            return True
        return bool(patterns) and any(
            fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns
        )

    # the loop below runs once per file: a no-op refresh is mostly this walk
    seen_dirs: set[tuple[int, int]] = set()
    stack = [("", root)]
    while stack:
        rel_dir, abs_dir = stack.pop()
        try:
            st = os.stat(abs_dir)
            ident = (st.st_dev, st.st_ino)
            if ident in seen_dirs:
                out.problems.append(
                    Problem(
                        rel_dir,
                        0,
                        config.severity_of("symlink-loop"),
                        "symlink-loop",
                        "folder link loops back; not read again",
                    )
                )
                continue
            seen_dirs.add(ident)
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            out.problems.append(
                Problem(
                    rel_dir or ".",
                    0,
                    config.severity_of("unreadable"),
                    "unreadable",
                    f"cannot read folder: {exc.strerror}",
                )
            )
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name[0] == ".":
                if name[-4:] in (".tmp", ".bak") and _leftover(name, abs_dir, rel, config, out):
                    out.stale.append(entry.path)
                continue
            if excluded and skip(rel, name):
                continue
            is_md = name[-3:].lower() == ".md"
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError:
                is_link = is_dir = False
            if is_link:
                real = os.path.realpath(entry.path)
                if not inside(real):
                    if is_dir or is_md:
                        out.problems.append(
                            Problem(
                                rel,
                                0,
                                config.severity_of("outside-vault"),
                                "outside-vault",
                                f"a link to {real}, outside the vault; not read (studykb.toml's "
                                "allow_outside can allow it)",
                            )
                        )
                    continue
            if not (name.isascii() or _utf8(name)):  # the state and messages need UTF-8
                if is_dir or is_md:
                    out.problems.append(
                        Problem(
                            os.fsencode(rel).decode("utf-8", "backslashreplace"),
                            0,
                            config.severity_of("unreadable"),
                            "unreadable",
                            "the name is not valid UTF-8; skipped (rename it)",
                        )
                    )
                continue
            if is_dir:
                if is_md:
                    out.problems.append(
                        Problem(
                            rel,
                            0,
                            config.severity_of("not-a-file"),
                            "not-a-file",
                            "a folder named like a note; skipped",
                        )
                    )
                stack.append((rel, entry.path))
                continue
            if not is_md:
                out.attachments[rel.lower()] = rel
                out.attachment_names.setdefault(name.lower(), rel)
                continue
            try:
                st = entry.stat()
            except OSError as exc:
                code = "symlink-loop" if exc.errno == 40 else "unreadable"
                what = "symbolic link loop" if exc.errno == 40 else f"cannot stat: {exc.strerror}"
                out.problems.append(Problem(rel, 0, config.severity_of(code), code, what))
                continue
            if not entry.is_file():
                out.problems.append(
                    Problem(
                        rel,
                        0,
                        config.severity_of("not-a-file"),
                        "not-a-file",
                        "not a regular file; skipped",
                    )
                )
                continue
            if st.st_size > config.max_file_bytes:
                mb = st.st_size / 1024 / 1024
                limit = config.max_file_bytes / 1024 / 1024
                out.problems.append(
                    Problem(
                        rel,
                        0,
                        config.severity_of("too-large"),
                        "too-large",
                        f"{mb:.1f} MB is over the {limit:g} MB limit; skipped",
                    )
                )
                continue
            out.files[rel] = (st.st_mtime_ns, st.st_size)
    return out


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
