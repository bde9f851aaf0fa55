"""``graph --format dot`` as Graphviz's ``dot`` command lays it out (Debian's graphviz).

Real vaults of a few thousand links made ``dot`` run for more than five minutes: one label
per edge (each laid out as a node) and every parallel reference kept. The export merges
the references between two documents into one edge, labels none, and asks for ``sfdp``
in a large graph, so the plain ``dot -Tsvg`` command draws it. Skipped without ``dot``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.outputs import graph_export as ge

DOT = shutil.which("dot")


def _vault(root: Path, notes: int) -> None:
    for n in range(notes):
        links = " ".join(f"[[n{(n * 7 + k) % notes}]]" for k in range(1, 6))
        (root / f"n{n}.md").write_text(
            f"---\nrequires: [n{(n + 1) % notes}]\nrelated: [n{(n + 1) % notes}]\n---\n"
            f"# N{n}\n\n{links} [[n{(n + 1) % notes}]]\n",
            "utf-8",
        )


def _dot_text(root: Path) -> str:
    prepare()
    result = CliRunner().invoke(cli, ["--vault", str(root), "graph", "--format", "dot"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_parallel_references_are_one_unlabelled_edge(tmp_path: Path) -> None:
    _vault(tmp_path, 20)
    text = _dot_text(tmp_path)
    edges = [line for line in text.splitlines() if " -> " in line]
    pairs = [line.split(" [", 1)[0] for line in edges]
    assert len(pairs) == len(set(pairs))  # n0 -> n1 by link, requires and related: once
    assert not any("label=" in line for line in edges)
    assert '"n0.md" -> "n1.md" [tooltip="link, related, requires", style=solid];' in text
    assert "layout=sfdp" not in text


def test_a_large_graph_is_drawn_by_the_plain_dot_command(tmp_path: Path) -> None:
    if DOT is None:
        pytest.skip("Graphviz is not installed (Debian: apt-get install graphviz)")
    _vault(tmp_path, ge.DOT_MAX_NODES * 2)
    text = _dot_text(tmp_path)
    assert "layout=sfdp" in text
    done = subprocess.run(
        [DOT, "-Tsvg"], input=text, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('<g id="node') == ge.DOT_MAX_NODES * 2
