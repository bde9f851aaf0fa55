"""`next` never recommends first a reading with nothing to read (issue 26): a course unit
that is only a title ranks after every ready document that has text, however much it
unlocks."""

from __future__ import annotations

import json
from pathlib import Path

COURSE = """---
id: gpu-course
title: GPU Course
units:
  - id: memory-hierarchy
    title: "GPU memory hierarchy"
  - id: gemm-lab
    title: "GEMM lab"
    summary: "Write a tiled GEMM in CUDA and measure it against cuBLAS."
---
A course.
"""


def _vault(make_vault) -> Path:
    # the title-only unit unlocks three topics, the unit with text only one: by what they
    # unlock alone, the title-only unit would come first
    files = {"courses/gpu-course.md": COURSE}
    for name in ("coalescing", "shared-memory", "bank-conflicts"):
        files[f"notes/topics/{name}.md"] = (
            f"---\nid: {name}\nrequires: [gpu-course#memory-hierarchy]\n---\n# {name}\n\ntext\n"
        )
    files["notes/topics/tiling.md"] = (
        "---\nid: tiling\nrequires: [gpu-course#gemm-lab]\n---\n# Tiling\n\ntext\n"
    )
    return make_vault(files)


def test_next_puts_a_unit_that_is_only_a_title_after_one_with_text(make_vault, run) -> None:
    root = _vault(make_vault)
    result = run("next", "--json", vault=root)
    assert result.exit_code == 0, result.output
    ids = [step["id"] for step in json.loads(result.stdout)["next"]]
    assert ids == ["gpu-course#gemm-lab", "gpu-course#memory-hierarchy"]
