"""Finding the vault and reading its ``studykb.toml``: defaults <- file <- flags.

Which folder is the vault: ``--vault DIR``, else ``$STUDYKB_VAULT``, else the nearest
folder at or above the current one holding a ``studykb.toml`` (or a ``.studykb/`` state
folder studykb made there before), else the current folder itself when it looks like a
folder of notes: Markdown files, not too many files, and not the home folder, the root
or the temporary folder. Anything else is :class:`NoVault`: the command line then asks
on a terminal, or says how to make one (``studykb init``).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from studykb.errors import VaultError
from studykb.model import Problem

CONFIG_NAME = "studykb.toml"
STATE_DIR = ".studykb"

#: Every problem code studykb reports, with its default severity; ``[severity]`` in
#: studykb.toml overrides them (error, warning or ignore).
DEFAULT_SEVERITY = MappingProxyType(
    {
        "dangling-ref": "error",
        "dangling-link": "warning",
        "site-clash": "warning",
        "ambiguous-ref": "warning",
        "duplicate-id": "error",
        "bad-front-matter": "error",
        "unreadable": "error",
        "cycle": "error",
        "outside-vault": "error",
        "too-large": "warning",
        "too-complex": "warning",
        "bad-field": "warning",
        "bad-config": "warning",
        "empty-file": "warning",
        "symlink-loop": "warning",
        "not-a-file": "warning",
        "dangling-anchor": "warning",
        "missing-attachment": "warning",
        "interrupted-write": "warning",
        "half-done-move": "error",
        "dangling-code": "error",
        "unreadable-code": "warning",
        "bad-repo": "warning",
        "bad-progress": "warning",
        "missing-notes": "warning",
        "skipped-note": "warning",
    }
)
SEVERITIES = ("error", "warning", "ignore")

#: Site generators whose way of rendering Markdown studykb follows (``generator`` in
#: studykb.toml; detected from the vault's files when not set).
GENERATORS = ("hugo", "zola", "obsidian", "dendron", "quartz", "mkdocs", "jekyll", "github")
#: Heading-anchor rules (``headings`` in studykb.toml; the generator's when not set).
HEADING_RULES = ("github", "gitlab", "hugo", "zola", "obsidian")

#: A folder without studykb.toml is read as a vault only with fewer files than this.
LOOKS_LIKE_VAULT_MAX_FILES = 5000


@dataclass(frozen=True)
class Config:
    """Settings of one vault."""

    root: Path
    """The vault folder (absolute)."""
    exclude: tuple[str, ...] = ()
    """Folders (vault-relative, or bare names matched anywhere) that are not read."""
    max_file_bytes: int = 5 * 1024 * 1024
    """Files larger than this are skipped with a ``too-large`` warning."""
    severity: dict[str, str] = field(default_factory=dict)
    """Problem code -> ``error`` / ``warning`` / ``ignore``."""
    workers: int = 0
    """Processes used to parse many files at once (0: one per core; at most one per core)."""
    templates: str = ".studykb-templates"
    """Folder (vault-relative) holding templates that override the built-in ones."""
    allow_outside: tuple[Path, ...] = ()
    """Folders outside the vault that symbolic links inside it may lead to (resolved)."""
    warnings: tuple[tuple[int, str], ...] = ()
    """(line, message) of what in studykb.toml was ignored (unknown keys, codes)."""
    explicit: bool = True
    """Whether the folder was named or holds studykb.toml (False: taken because it looks
    like a folder of notes)."""
    generator: str | None = None
    """The site generator to read the vault as (one of :data:`GENERATORS`); None: detect it."""
    headings: str | None = None
    """Heading-anchor rules (one of :data:`HEADING_RULES`); None: the generator's."""
    title: str | None = None
    """The vault's name shown by the web view and the static site; None: not set."""
    repos: tuple[tuple[str, str, str, int], ...] = ()
    """Tracked repositories of ``[repos.NAME]``: (name, local clone path as written,
    url, line of the table in studykb.toml)."""
    repo_notes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """What of a ``[repos.NAME]``'s Markdown is read into the vault: (name, the files and
    folders of its ``notes``), for those that say."""
    repo_progress: tuple[tuple[str, str], ...] = ()
    """Where a ``[repos.NAME]`` states its progress as task items: (name, the file of its
    ``progress``), for those that say."""
    active_days: int = 14
    """A course unit whose repository folder had a commit this many days ago or less
    counts as being read."""

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def path(self) -> Path:
        return self.root / CONFIG_NAME

    def severity_of(self, code: str) -> str:
        """The severity of problems of ``code`` here: the configured one, else its default."""
        return self.severity.get(code) or DEFAULT_SEVERITY.get(code, "warning")

    def level(self, code: str, found: str) -> str:
        """The severity of a problem of ``code`` found with severity ``found``: the
        configured one, else as found (``ignore``: not reported). The one rule every
        list of problems applies (``check``, the counts of a build, the editor)."""
        return self.severity.get(code, found)

    def as_configured(self, problem: Problem) -> Problem | None:
        """``problem`` with the configured severity, or None when it is ignored."""
        level = self.level(problem.code, problem.severity)
        if level == "ignore":
            return None
        return problem if level == problem.severity else replace(problem, severity=level)

    @property
    def worker_count(self) -> int:
        """Worker processes to use: ``workers``, at most one per core."""
        cores = os.cpu_count() or 1
        return min(self.workers, cores) if self.workers > 0 else cores


class NoVault(VaultError):
    """No vault here or above, and the current folder does not look like one. Exit 2."""

    def __init__(self, folder: Path, why: str) -> None:
        super().__init__(
            f"no vault here ({why}): run `studykb init` to make {folder} one, or pass --vault DIR."
        )
        self.folder = folder
        self.why = why


def find_vault(vault: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The vault folder (see the module docstring); raises NoVault or VaultError."""
    root, _explicit = locate(vault, cwd)
    return root


def locate(
    vault: str | os.PathLike[str] | None = None, cwd: Path | None = None
) -> tuple[Path, bool]:
    """(the vault folder, whether it was named or marked by studykb.toml / .studykb)."""
    chosen = vault or os.environ.get("STUDYKB_VAULT")
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise VaultError(f"Vault folder {str(root)!r} does not exist or is not a folder.")
        return root.resolve(), True
    here = (cwd or Path.cwd()).resolve()
    special = _special_folders()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder, True
        if folder not in special and (folder / STATE_DIR / "trust").is_file():
            return folder, True
    why = looks_unlike_vault(here, special)
    if why:
        raise NoVault(here, why)
    return here, False


def _special_folders() -> set[Path]:
    """Folders never taken as a vault without studykb.toml: home, root, temp."""

    out = {Path(Path.cwd().anchor or "/").resolve()}
    temp = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    for folder in (os.path.expanduser("~"), *filter(None, temp), "/tmp", "/var/tmp"):
        try:
            out.add(Path(folder).resolve())
        except OSError:
            continue
    return out


def looks_unlike_vault(folder: Path, special: set[Path] | None = None) -> str | None:
    """Why ``folder`` (without studykb.toml) should not be read as a vault, or None."""
    if folder in (special if special is not None else _special_folders()):
        return f"{folder} is your home, the root or the temporary folder"
    count = 0
    markdown = 0
    stack = [str(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            count += 1
            if count > LOOKS_LIKE_VAULT_MAX_FILES:
                return f"{folder} holds more than {LOOKS_LIKE_VAULT_MAX_FILES} files"
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.lower().endswith(".md"):
                    markdown += 1
            except OSError:
                continue
    if not markdown:
        return f"there are no Markdown files in {folder}"
    return None


# -- studykb.toml ----------------------------------------------------------------------------

#: The keys studykb.toml may hold, and what each must be.
KEYS = MappingProxyType(
    {
        "exclude": "a list of folder names or paths",
        "max_file_mb": "a number of megabytes above 0",
        "severity": "a table of problem code = error, warning or ignore",
        "workers": "a whole number (0: one per core)",
        "templates": "a folder path inside the vault",
        "allow_outside": "a list of folders outside the vault that links may lead to",
        "generator": f"one of {', '.join(GENERATORS)}",
        "headings": f"one of {', '.join(HEADING_RULES)}",
        "title": "a line of text (the vault's name in the web view and the site)",
        "repos": "a table of [repos.NAME] tables with a path and/or url string",
        "active_days": "a whole number of days",
    }
)


def load_config(root: Path, explicit: bool = True) -> Config:
    """Read ``studykb.toml`` in ``root`` if present.

    A value of the wrong kind is a VaultError naming the key and its line; unknown keys
    and problem codes are kept in :attr:`Config.warnings` (with a "did you mean").
    """
    text, section = _read(root / CONFIG_NAME)
    values = _Values(text, section)
    values.warn_unknown()
    return Config(
        root=root,
        exclude=tuple(e.strip("/") for e in values.strings("exclude")),
        max_file_bytes=int(values.megabytes() * 1024 * 1024),
        severity=values.severity(),
        workers=values.count("workers"),
        templates=values.inside("templates", ".studykb-templates"),
        allow_outside=tuple(
            Path(os.path.realpath(os.path.join(root, os.path.expanduser(a))))
            for a in values.strings("allow_outside")
        ),
        warnings=tuple(values.warnings),
        explicit=explicit,
        generator=values.choice("generator", GENERATORS),
        headings=values.choice("headings", HEADING_RULES),
        title=values.line_of_text("title"),
        repos=values.repos(),
        repo_notes=values.repo_notes(),
        repo_progress=values.repo_progress(),
        active_days=values.count("active_days") if "active_days" in section else 14,
    )


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    """(the text, the settings table) of a studykb.toml; empty when there is none."""
    # deferred: only this path reads TOML
    import tomllib

    if not path.is_file():
        return "", {}
    try:
        text = path.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise VaultError(f"{CONFIG_NAME} is not valid UTF-8.") from None
    except OSError as exc:
        raise VaultError(f"cannot read {CONFIG_NAME}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise VaultError(f"{CONFIG_NAME}: {exc}") from None
    section = data.get("studykb", data)
    if not isinstance(section, dict):
        raise VaultError(f"{CONFIG_NAME}: [studykb] must be a table.")
    return text, section


class _Values:
    """The settings table of a studykb.toml, each value checked as it is read."""

    def __init__(self, text: str, section: dict[str, Any]) -> None:
        self.text = text
        self.section = section
        self.warnings: list[tuple[int, str]] = []

    def line(self, key: str) -> int:
        return _line_of(self.text, key)

    def bad(self, key: str) -> VaultError:
        value = self.section.get(key)
        return VaultError(f"{CONFIG_NAME}:{self.line(key)}: {key} = {value!r} is not {KEYS[key]}.")

    def warn_unknown(self) -> None:
        for key in self.section:
            if key not in KEYS:
                self.warnings.append(
                    (self.line(key), f"unknown key {key!r}{_did_you_mean(key, KEYS)}; ignored")
                )

    def repos(self) -> tuple[tuple[str, str, str, int], ...]:
        table = self.section.get("repos", {})
        if not isinstance(table, dict):
            raise self.bad("repos")
        out = []
        for name, spec in table.items():
            fields = spec if isinstance(spec, dict) else None
            if fields is None or not all(
                isinstance(fields.get(k, ""), str) for k in ("path", "url")
            ):
                raise self.bad("repos")
            line = _table_line(self.text, f"repos.{name}") or self.line("repos")
            out.append((str(name), fields.get("path", ""), fields.get("url", ""), line))
        return tuple(out)

    def repo_notes(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(name, notes) of every ``[repos.NAME]`` with ``notes`` (a list of strings)."""
        out = []
        for name, spec in self.section.get("repos", {}).items():
            notes = spec.get("notes")
            if notes is None:
                continue
            if isinstance(notes, str):
                notes = [notes]
            if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
                line = _table_line(self.text, f"repos.{name}") or self.line("repos")
                raise VaultError(
                    f"{CONFIG_NAME}:{line}: [repos.{name}] notes = {notes!r} is not a list "
                    'of the repository\'s files and folders (like ["README.md", "notes/"]).'
                )
            out.append((str(name), tuple(n for n in notes if n.strip())))
        return tuple(out)

    def repo_progress(self) -> tuple[tuple[str, str], ...]:
        """(name, file) of every ``[repos.NAME]`` with ``progress`` (a file's path)."""
        out = []
        for name, spec in self.section.get("repos", {}).items():
            progress = spec.get("progress")
            if progress is None:
                continue
            if not isinstance(progress, str) or not progress.strip():
                line = _table_line(self.text, f"repos.{name}") or self.line("repos")
                raise VaultError(
                    f"{CONFIG_NAME}:{line}: [repos.{name}] progress = {progress!r} is not the "
                    'path of a file of the repository (like "README.md").'
                )
            out.append((str(name), progress.strip()))
        return tuple(out)

    def strings(self, key: str) -> list[str]:
        value = self.section.get(key, [])
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.bad(key)
        return value

    def count(self, key: str) -> int:
        value: object = self.section.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.bad(key)
        return value

    def megabytes(self) -> float:
        value = self.section.get("max_file_mb", 5)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not 0 < value <= 1 << 20
        ):
            raise self.bad("max_file_mb")
        return float(value)

    def folder(self, key: str, default: str) -> str:
        value = self.section.get(key, default)
        if not isinstance(value, str) or not value.strip():
            raise self.bad(key)
        return value

    def inside(self, key: str, default: str) -> str:
        """A folder path inside the vault: relative, and not climbing out with ``..``
        (what is read from it is the vault's own, like its notes)."""
        value = self.folder(key, default)
        parts = value.replace("\\", "/").split("/")
        if os.path.isabs(value) or value.startswith("~") or ".." in parts:
            raise VaultError(
                f"{CONFIG_NAME}:{self.line(key)}: {key} = {value!r} must be a folder "
                f'inside the vault, written from the vault folder (e.g. {key} = "{default}").'
            )
        return value

    def line_of_text(self, key: str) -> str | None:
        """A one-line text, spaces collapsed; None when absent or blank."""
        value = self.section.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.bad(key)
        return " ".join(value.split()) or None

    def choice(self, key: str, allowed: tuple[str, ...]) -> str | None:
        value = self.section.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            raise self.bad(key)
        return value.strip().lower()

    def severity(self) -> dict[str, str]:
        table = self.section.get("severity", {})
        if not isinstance(table, dict):
            raise self.bad("severity")
        kept: dict[str, str] = {}
        for code, level in table.items():
            if level not in SEVERITIES:
                raise VaultError(
                    f"{CONFIG_NAME}:{self.line(code)}: severity of {code!r} "
                    "must be error, warning or ignore."
                )
            if code not in DEFAULT_SEVERITY:
                self.warnings.append(
                    (
                        self.line(code),
                        f"unknown problem code {code!r}"
                        f"{_did_you_mean(code, DEFAULT_SEVERITY)}; ignored",
                    )
                )
                continue
            kept[code] = level
        return kept


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _table_line(text: str, name: str) -> int:
    """The line of ``[name]`` (or ``[studykb.name]``) in ``text``; 0 when not found."""
    pattern = re.compile(rf"^[ \t]*\[[ \t]*(?:studykb\.)?{re.escape(name)}[ \t]*\]", re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 0


def _line_of(text: str, key: str) -> int:
    """The line of ``text`` (a TOML file) where ``key`` is set; 1 when not found."""
    pattern = re.compile(rf"""^[ \t]*["']?{re.escape(key)}["']?\s*=""", re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1
