"""Finding the vault and reading its ``studykb.toml``: defaults <- file <- flags."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import VaultError

CONFIG_NAME = "studykb.toml"
STATE_DIR = ".studykb"

#: Default severities per problem code; ``[severity]`` in studykb.toml overrides them.
DEFAULT_SEVERITY = {
    "dangling-ref": "error",
    "ambiguous-ref": "warning",
    "duplicate-id": "error",
    "bad-front-matter": "error",
    "unreadable": "error",
    "cycle": "error",
    "outside-vault": "error",
    "too-large": "warning",
    "bad-field": "warning",
    "symlink-loop": "warning",
    "not-a-file": "warning",
    "dangling-anchor": "warning",
}


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
    """Processes used to parse many files at once (0: one per core)."""
    templates: str = ".studykb-templates"
    """Folder (vault-relative) holding templates that override the built-in ones."""

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def severity_of(self, code: str) -> str:
        return self.severity.get(code) or DEFAULT_SEVERITY.get(code, "warning")


def find_vault(vault: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """``--vault``, else ``$STUDYKB_VAULT``, else the nearest folder with studykb.toml, else cwd."""
    chosen = vault or os.environ.get("STUDYKB_VAULT")
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise VaultError(f"Vault folder {str(root)!r} does not exist or is not a folder.")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    return here


def load_config(root: Path) -> Config:
    """Read ``studykb.toml`` in ``root`` if present; a malformed file is a VaultError."""
    import tomllib

    path = root / CONFIG_NAME
    data: dict = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise VaultError(f"{CONFIG_NAME}: {exc}") from None
    section = data.get("studykb", data)
    exclude = section.get("exclude", [])
    if isinstance(exclude, str):
        exclude = [exclude]
    severity = section.get("severity", {}) or {}
    if not isinstance(exclude, list) or not isinstance(severity, dict):
        raise VaultError(f"{CONFIG_NAME}: 'exclude' must be a list and 'severity' a table.")
    for code, level in severity.items():
        if level not in ("error", "warning", "ignore"):
            raise VaultError(
                f"{CONFIG_NAME}: severity of {code!r} must be error, warning or ignore."
            )
    max_mb = section.get("max_file_mb", 5)
    return Config(
        root=root,
        exclude=tuple(str(e).strip("/") for e in exclude),
        max_file_bytes=int(float(max_mb) * 1024 * 1024),
        severity=dict(severity),
        workers=int(section.get("workers", 0)),
        templates=str(section.get("templates", ".studykb-templates")),
    )
