"""Data-driven parser tests: tests/fixtures/parse/NAME.md in, NAME.json expected.

The input is read as bytes (so BOMs, CRLF and bad bytes survive). Its vault path is
the file name with ``__`` standing for ``/`` (``courses__cs1.md`` -> ``courses/cs1.md``);
a name without ``__`` is placed in ``notes/``. The expected file lists the documents
(without ``meta``), the references (line, kind, target, style, anchor, text, reason,
optional) and the problems (line, severity, code; messages are free to change).

Regenerate after a deliberate change with ``pytest --update-golden`` (or
``STUDYKB_UPDATE_GOLDEN=1``), then read the diff: a golden file is only as right as
the person who reviewed it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from studykb.parse import parse_file

HERE = Path(__file__).parent / "fixtures" / "parse"
CASES = sorted(HERE.glob("*.md"))

DOC_FIELDS = (
    "key",
    "id",
    "title",
    "type",
    "line",
    "aliases",
    "tags",
    "covers",
    "date",
    "level",
    "status",
    "url",
    "kind",
    "minutes",
    "explicit_id",
    "parent",
    "summary",
)


def vault_path(fixture: Path) -> str:
    name = fixture.name
    return name.replace("__", "/") if "__" in name else f"notes/{name}"


def observe(fixture: Path) -> dict[str, Any]:
    path = vault_path(fixture)
    parsed = parse_file(path, fixture.read_bytes())
    return {
        "path": path,
        "documents": [
            {f: (list(v) if isinstance(v := getattr(d, f), tuple) else v) for f in DOC_FIELDS}
            for d in parsed.documents
        ],
        "references": [
            {
                "source": r.source,
                "line": r.line,
                "kind": r.kind,
                "target": r.target,
                "style": r.style,
                "anchor": r.anchor,
                "text": r.text,
                "reason": r.reason,
                "optional": r.optional,
            }
            for r in parsed.references
        ],
        "problems": [
            {"line": p.line, "severity": p.severity, "code": p.code} for p in parsed.problems
        ],
        "headings": list(parsed.headings),
    }


def test_there_are_fixtures() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("fixture", CASES, ids=[c.stem for c in CASES])
def test_parse_fixture(fixture: Path, update_golden: bool) -> None:
    expected_file = fixture.with_suffix(".json")
    got = observe(fixture)
    if update_golden or not expected_file.exists():
        expected_file.write_text(
            json.dumps(got, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        if not update_golden:
            pytest.fail(f"{expected_file.name} was missing and has been written; review it")
        return
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    assert got["path"] == expected["path"]
    assert got["documents"] == expected["documents"]
    assert got["references"] == expected["references"]
    assert got["problems"] == expected["problems"]
    assert got["headings"] == expected["headings"]


@pytest.mark.parametrize("fixture", CASES, ids=[c.stem for c in CASES])
def test_reference_lines_hold_the_reference(fixture: Path) -> None:
    """Independent of the golden files: every body link's text is on the line it names."""
    parsed = parse_file(vault_path(fixture), fixture.read_bytes())
    lines = fixture.read_bytes().decode("utf-8-sig", errors="replace").splitlines()
    for ref in parsed.references:
        assert 1 <= ref.line <= max(len(lines), 1), ref
        if ref.kind == "link" and ref.text.startswith(("[[", "![[")):
            assert ref.text.replace("\\|", "|") in lines[ref.line - 1].replace("\\|", "|"), ref
    for problem in parsed.problems:
        assert 1 <= problem.line <= max(len(lines), 1), problem
