"""``studykb repos add NAME --path P [--url U]``: a ``[repos.NAME]`` table written into
studykb.toml.

The file is edited with tomlkit, which keeps every other byte of it (comments, blank
lines, the order and layout of the other tables), and rewritten atomically
(:mod:`studykb.vault.files`): a new file is created, an existing one is replaced only if
it still holds what was read. Before anything is written the clone is checked: it must
be a git repository studykb can read (:func:`studykb.repos.git.safe_clone`); the name
must be one a code link can write (``[[NAME:path]]``) and not already a ``[repos.X]``
of the file, nor the address one of theirs. Without ``--url`` the address is the clone's
``origin`` remote (its ``user:password@`` left out: studykb.toml is often committed).

A relative ``--path`` is taken from the current folder and written relative to the
vault's folder (where studykb.toml reads it from); an absolute one, or one starting with
``~``, is written as given.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from studykb.config import CONFIG_NAME
from studykb.errors import StudyError, UsageError
from studykb.model import fold
from studykb.parse.code_links import NAME
from studykb.parse.urls import normalize_url
from studykb.repos.git import Clone, GitError
from studykb.repos.tracked import Tracked
from studykb.vault import Vault
from studykb.vault.files import create, read_for_edit, replace


@dataclass(frozen=True)
class Added:
    """What ``repos add`` wrote."""

    name: str
    path: str
    """The clone's path as written into studykb.toml."""
    clone: Path
    url: str
    """The address written ('' when none: neither given nor an ``origin`` remote)."""
    head: str
    """The clone's HEAD commit (hex; '' for a repository without commits)."""
    config: Path
    created: bool
    """Whether studykb.toml was made (it did not exist)."""
    document: str | None
    """The key of the course or entry whose repository this gives a clone (None: none)."""


def add_repo(
    vault: Vault, repos: dict[str, Tracked], name: str, path: str, url: str | None = None
) -> Added:
    """Write ``[repos.NAME]`` with ``path`` (and ``url``) into the vault's studykb.toml;
    a UsageError (exit 2) for a name no code link can write, a StudyError (exit 1) when
    the path is no readable clone or the name or address is taken. Nothing is written
    then."""
    root = vault.root
    if not re.fullmatch(NAME, name) or ":" in name:
        raise UsageError(
            f"{name!r} cannot name a repository: a name starts with a letter or digit and "
            "holds only letters, digits, '_', '-' and '.' (it is written [[NAME:path]])."
        )
    folder = Path(os.path.expanduser(path))
    folder = folder if folder.is_absolute() else Path.cwd() / folder
    folder = Path(os.path.normpath(folder))
    head, origin = _read_clone(folder)
    url = _without_password((url if url is not None else origin).strip())
    written = _written_path(path, folder, root)
    config = root / CONFIG_NAME
    text = _config_text(config)
    nested = _refuse_taken(text, name, url)
    new = _with_table(text, name, written, url, nested)
    _check(text, new, name)
    if text is None:
        create(root, config, new.encode())
    else:
        read = read_for_edit(root, CONFIG_NAME)
        if read.data.decode("utf-8") != text:
            raise StudyError(f"{config} changed while it was read; nothing was written.")
        replace(read, new.encode())
    mine = repos.get(fold(name))
    document = mine.key if mine is not None and mine.key is not None else None
    return Added(name, written, folder, url, head, config, text is None, document)


def _read_clone(folder: Path) -> tuple[str, str]:
    """(HEAD's commit or '', the ``origin`` remote's address or '') of the clone at
    ``folder``; a StudyError when it is none studykb can read."""
    try:
        clone = Clone(folder)
    except GitError as exc:
        raise StudyError(f"{folder}: {exc}; nothing was written.") from None
    try:
        try:
            head = clone.commit().id.decode()
        except GitError:
            head = ""  # a repository without commits yet
        try:
            origin = clone.repo.get_config().get((b"remote", b"origin"), b"url")
        except (KeyError, OSError, ValueError):
            origin = b""
        return head, origin.decode("utf-8", "replace")
    finally:
        clone.close()


def _without_password(url: str) -> str:
    """``url`` without the ``user:password@`` of an http(s) address."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host))


def _written_path(given: str, folder: Path, root: Path) -> str:
    """How the clone's path is written: as given when absolute or from ``~``, else
    relative to the vault's folder."""
    if given.startswith("~") or Path(given).is_absolute():
        return given
    return Path(os.path.relpath(folder, root.resolve())).as_posix()


def _config_text(config: Path) -> str | None:
    """The text of studykb.toml (None: there is none)."""
    try:
        return config.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise StudyError(f"{config} is not UTF-8 text; nothing was written.") from None
    except OSError as exc:
        raise StudyError(f"cannot read {config}: {exc.strerror}") from None


def _section(data: dict[str, object]) -> dict[str, object]:
    section = data.get("studykb", data)
    return section if isinstance(section, dict) else data


def _refuse_taken(text: str | None, name: str, url: str) -> bool:
    """Refuse a name or address ``text`` (studykb.toml) has already; whether its
    settings are in a ``[studykb]`` table."""
    if text is None:
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{CONFIG_NAME}: {exc}; nothing was written.") from None
    nested = isinstance(data.get("studykb"), dict)
    table = _section(data).get("repos", {})
    if not isinstance(table, dict) or _inline(text, nested):
        raise StudyError(
            f"{CONFIG_NAME}:{_value_line(text)}: repos is written as a value, not as "
            "[repos.NAME] tables; nothing was written (add the repository there by hand)."
        )
    for other, spec in table.items():
        line = _line(text, f"repos.{other}")
        if fold(other) == fold(name):
            raise StudyError(
                f"{CONFIG_NAME}:{line}: [repos.{other}] names a repository {name!r} already; "
                "nothing was written (edit that table to change it)."
            )
        theirs = spec.get("url", "") if isinstance(spec, dict) else ""
        if url and isinstance(theirs, str) and normalize_url(theirs) == normalize_url(url):
            raise StudyError(
                f"{CONFIG_NAME}:{line}: [repos.{other}] tracks {url} already; nothing was written."
            )
    return nested


def _inline(text: str, nested: bool) -> bool:
    """Whether ``repos`` is an inline table (``repos = {...}``), which no ``[repos.X]``
    may extend."""
    # deferred: tomlkit loads only to edit studykb.toml
    import tomlkit

    # deferred: tomlkit loads only to edit studykb.toml
    from tomlkit.items import InlineTable

    doc = tomlkit.parse(text)
    section = doc.get("studykb") if nested else doc
    repos = section.get("repos") if section is not None else None
    return isinstance(repos, InlineTable)


def _value_line(text: str) -> int:
    found = re.search(r"^\s*(?:studykb\.)?repos\s*=", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _line(text: str, table: str) -> int:
    pattern = re.compile(rf"^[ \t]*\[[ \t]*(?:studykb\.)?{re.escape(table)}[ \t]*\]", re.M)
    found = pattern.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _with_table(text: str | None, name: str, path: str, url: str, nested: bool) -> str:
    """``text`` with ``[repos.NAME]`` (``[studykb.repos.NAME]`` when ``nested``) appended:
    tomlkit writes the table (quoting what must be), and every byte of ``text`` stays
    where it is. (Inserted by tomlkit beside the other ``[repos.X]``, a comment above
    the next table would move above the new one.)"""
    # deferred: tomlkit loads only to edit studykb.toml
    import tomlkit

    entry = tomlkit.table()
    entry.add("path", path)
    if url:
        entry.add("url", url)
    repos = tomlkit.table(is_super_table=True)
    repos.add(name, entry)
    doc = tomlkit.document()
    if nested:
        outer = tomlkit.table(is_super_table=True)
        outer.add("repos", repos)
        doc.add("studykb", outer)
    else:
        doc.add("repos", repos)
    table = tomlkit.dumps(doc).lstrip("\n")
    if not text:
        return table
    return text + ("\n" if text.endswith("\n") else "\n\n") + table


def _check(text: str | None, new: str, name: str) -> None:
    """The new text must read back as the old with the table added (never write a
    broken file, nor change what the file said)."""
    try:
        before = tomllib.loads(text or "")
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(
            f"{CONFIG_NAME} would not be valid TOML ({exc}); nothing was written."
        ) from None
    repos = _section(after).get("repos", {})
    if isinstance(repos, dict):
        repos.pop(name, None)
        if not repos and "repos" not in _section(before):
            _section(after).pop("repos")
    if after != before:
        raise StudyError(f"{CONFIG_NAME}: [repos.{name}] could not be added; nothing was written.")
