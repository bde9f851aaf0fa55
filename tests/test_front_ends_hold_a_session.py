"""Front ends ask their ``Session``, never the vault behind it.

The import contract ("Front ends hold a Session", ``pyproject.toml``) keeps ``cli/``,
``web/`` and ``editor/`` from importing the layers below the API; this keeps them from
reaching those layers through the session's own attribute (``kb.vault.x``), which no
import contract can see.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "studykb"
FRONT_ENDS = ("cli", "web", "editor")


def _reaches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(SRC)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("vault", "store")
    ]


def test_front_ends_never_reach_into_the_session() -> None:
    found = [
        hit for d in FRONT_ENDS for p in sorted((SRC / d).rglob("*.py")) for hit in _reaches(p)
    ]
    assert found == [], "front ends reaching below the Session:\n" + "\n".join(found)


def test_the_rule_sees_a_reach(tmp_path: Path) -> None:
    global SRC
    sample = tmp_path / "m.py"
    sample.write_text("def f(kb):\n    return kb.vault.file_hashes()\n", encoding="utf-8")
    old, SRC = SRC, tmp_path
    try:
        assert _reaches(sample) == ["m.py:2: .vault"]
    finally:
        SRC = old
