"""One front-matter fence rule: the parser, the editor's quick fix and its completion
all find the front matter where ``parse.frontmatter.fences`` does."""

from __future__ import annotations

import pytest

from studykb.editor.actions import requires_edit
from studykb.editor.completion import completion_context
from studykb.parse.frontmatter import fence_format, fences, split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: A\n---\nbody\n", (0, 2)),
        ("\n\n---\ntitle: A\n...\nbody\n", (2, 4)),
        ("+++\ntitle = 'A'\n+++\nbody\n", (0, 2)),
        ("\ufeff---\ntitle: A\n---\n", (0, 2)),
        ("---\ntitle: A\n", None),
        ("# A\n---\n", None),
        ("+++\ntitle = 'A'\n---\n", None),
    ],
)
def test_fences_follow_the_parser(text: str, expected: tuple[int, int] | None) -> None:
    lines = text.split("\n")
    assert fences(lines) == expected
    if expected is not None:  # the parser's body starts right after the closing fence
        assert split(text.lstrip("\ufeff")).body_line == expected[1] + 2


def test_open_ended_front_matter_runs_to_the_end() -> None:
    lines = ["---", "title: A", "requires: [x"]
    assert fences(lines) is None
    assert fences(lines, open_ended=True) == (0, 3)
    assert fence_format("+++ ") == "toml"
    assert fence_format("---") == "yaml"
    assert fence_format("# A") is None


def test_requires_edit_by_the_shared_rule() -> None:
    yaml = requires_edit(["", "---", "title: A", "---", "body"], "b")
    assert yaml is not None and (yaml.line, yaml.text) == (3, "requires: [b]\n")
    toml = requires_edit(["+++", "title = 'A'", "+++"], "b")
    assert toml is not None and toml.text == 'requires = ["b"]\n'
    assert requires_edit(['{"title": "A"}', "body"], "b") is None  # JSON: not edited
    assert requires_edit(["---", "title: A"], "b") is None  # never closed
    fresh = requires_edit(["# A"], "b")
    assert fresh is not None and fresh.text == "---\nrequires: [b]\n---\n"


def test_completion_inside_front_matter_still_being_typed() -> None:
    lines = ["---", "title: A", "requires: [tok"]
    found = completion_context(lines, 2, len(lines[2]))
    assert found is not None and (found.kind, found.prefix, found.key) == (
        "front",
        "tok",
        "requires",
    )
    assert completion_context(["# A", "requires: [tok"], 1, 14) is None  # not front matter
