"""The repository as it is kept, config included, is read as the starter vault.

The root holds ``mkdocs.yml`` for the project's own documentation; studykb must still read
``notes/`` and ``courses/`` (``generator = "github"`` in ``studykb.toml``), not the mkdocs
site's ``docs/``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO


def test_the_repository_with_its_mkdocs_config_reads_the_notes(run, tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("notes", "courses", "docs"):
        shutil.copytree(REPO / name, copy / name)
    for name in ("studykb.toml", "mkdocs.yml", "README.md"):
        shutil.copy2(REPO / name, copy / name)
    result = run("init", "--dry-run", "--json", cwd=copy)
    assert result.exit_code == 0, result.output
    result = run("before", "FSDP2", "--json", vault=copy)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["target"]["path"] == "notes/topics/fsdp2.md"
    result = run("check", "--json", vault=copy)
    data = json.loads(result.stdout)
    assert not [p for p in data["problems"] if p["path"].startswith("docs/")]
    result = run("search", "FSDP", "--json", vault=copy)
    hits = json.loads(result.stdout)["hits"]
    assert hits and all(h["path"].startswith(("notes/", "courses/")) for h in hits)
