"""A tracked repository's own Markdown read into the vault (``notes``): searchable,
linkable, in plans, read-only, and refreshed when the clone's HEAD moves; on small real
git repositories made with dulwich."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_json
from repo_builder import START, GitRepo

README = "# Kernels lab\n\nHow to build the kernels. See [[kernels:Notes/tiling.md]].\n"
TILING = (
    "---\ntitle: Shared-memory tiling\nrequires: [warps]\n---\n"
    "# Shared-memory tiling\n\nTiling loads a block into shared memory; "
    "see [the intro](intro.md) and [the readme](../README.md).\n"
)
INTRO = "# Lab intro\n\nWhat the lab is about: coalescing and occupancy.\n"


@pytest.fixture
def lab(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "clones" / "kernels")
    repo.commit(
        {
            "README.md": README,
            "Notes/tiling.md": TILING,
            "Notes/intro.md": INTRO,
            "src/gemm.cu": "__global__ void gemm() {}\n",
            "docs/other.md": "# Not read\n\nzzzunread\n",
        },
        "lab",
        START,
    )
    return repo


CONFIG = '[repos.kernels]\npath = "../clones/kernels"\nnotes = ["README.md", "Notes/"]\n'


def _vault(make_vault, config: str = CONFIG) -> Path:  # type: ignore[no-untyped-def]
    return make_vault(
        {
            "notes/warps.md": "---\ntitle: Warps\n---\n# Warps\n\nThirty-two threads.\n",
            "notes/gemm.md": "---\ntitle: GEMM\nrequires: ['[[Shared-memory tiling]]']\n---\n"
            "# GEMM\n\nRead [[kernels:Notes/tiling.md]] and [[Lab intro]].\n",
        },
        config=config,
        name="vault",
    )


def test_notes_are_documents_searchable_and_linked(make_vault, run, lab) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    _code, data = run_json(run, "search", "coalescing", vault=vault)
    assert [h["path"] for h in data["hits"]] == ["kernels:Notes/intro.md"]
    _code, data = run_json(run, "search", "zzzunread", vault=vault)
    assert data["hits"] == []  # docs/ is not named in notes
    _code, back = run_json(run, "backlinks", "kernels:Notes/tiling.md", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"notes/gemm.md", "kernels:README.md"}
    _code, back = run_json(run, "backlinks", "Lab intro", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"notes/gemm.md", "kernels:Notes/tiling.md"}
