"""``studykb init``: make a folder a vault, saying first what studykb will read there."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from studykb.config import CONFIG_NAME, Config, load_config
from studykb.errors import StudyError
from studykb.vault import files
from studykb.vault.flavour import detect
from studykb.vault.scan import scan

#: Folders that hold generated or third-party files, excluded by a new studykb.toml when
#: present (a site's build output, dependencies, virtual environments).
USUAL_EXCLUDES = (
    "node_modules",
    "public",
    "_site",
    "site",
    "build",
    "dist",
    "target",
    "venv",
    "env",
    "__pycache__",
    "resources",
    "themes",
    "vendor",
)


@dataclass(frozen=True)
class InitPlan:
    """What ``studykb init`` would write, and what the vault would then read."""

    root: Path
    exclude: tuple[str, ...]
    """Folders a new studykb.toml excludes (those of :data:`USUAL_EXCLUDES` present)."""
    files: int
    """Markdown files studykb would read."""
    by_folder: list[tuple[str, int]] = field(default_factory=list)
    """(top-level folder, or "." for the vault folder itself; Markdown files), most first."""
    exists: bool = False
    """A studykb.toml is there already."""
    generator: str = "github"
    """The site generator the folder is written for (``vault/flavour.py``)."""
    scope: tuple[str, ...] = ()
    """What the generator's settings say of which files are its documents."""
    reason: str = ""
    """Why that generator (``hugo.toml``, ``generator = "hugo" in studykb.toml``)."""

    @property
    def text(self) -> str:
        """The studykb.toml to write."""
        excluded = ", ".join(f'"{e}"' for e in self.exclude)
        return (
            "# studykb settings for this vault (see `studykb --help`).\n"
            "# Folders not read (names match anywhere; paths are vault-relative):\n"
            f"exclude = [{excluded}]\n"
            "# Files larger than this many MB are skipped:\n"
            "# max_file_mb = 5\n"
            "# Problem codes made errors, warnings or ignored:\n"
            "# [severity]\n"
            '# dangling-anchor = "ignore"\n'
        )


def plan(root: Path) -> InitPlan:
    """What a new studykb.toml in ``root`` would say, and what would then be read."""
    if not root.is_dir():
        raise StudyError(f"{root} is not a folder.")
    exclude = tuple(name for name in USUAL_EXCLUDES if (root / name).is_dir())
    site = detect(root, _configured_generator(root))
    found = scan(Config(root=root, exclude=exclude), site.scope)
    counts: Counter[str] = Counter(
        path.split("/", 1)[0] + "/" if "/" in path else "." for path in found.files
    )
    return InitPlan(
        root,
        exclude,
        len(found.files),
        counts.most_common(),
        (root / CONFIG_NAME).exists(),
        site.generator,
        site.scope.said if site.scope is not None else (),
        site.reason,
    )


def _configured_generator(root: Path) -> str | None:
    """The ``generator`` of an existing studykb.toml (None when there is none, or it cannot
    be read: ``init`` then says what it would detect)."""
    if not (root / CONFIG_NAME).is_file():
        return None
    try:
        return load_config(root).generator
    except StudyError:
        return None


def write(made: InitPlan) -> Path:
    """Write the studykb.toml of ``made`` (never over an existing one)."""
    target = made.root / CONFIG_NAME
    if made.exists or target.exists():
        raise StudyError(
            f"{target} exists already; {made.root} is a vault.",
            hint="Edit studykb.toml to change what is read.",
        )
    files.create(made.root, target, made.text.encode("utf-8"))
    os.utime(target)
    return target
