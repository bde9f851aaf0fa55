"""One locator of a reference on its line, shared by the editor and ``mv``."""

from __future__ import annotations

from studykb.model import Reference
from studykb.parse import parse_file
from studykb.parse.placing import place


def _placed(text: str) -> list[tuple[str, int, int, int, str]]:
    parsed = parse_file("notes/a.md", text.encode())
    lines = text.split("\n")
    return [(p.ref.text, p.line, p.start, p.end, p.found) for p in place(parsed.references, lines)]


def test_the_same_text_twice_on_a_line_is_placed_left_to_right() -> None:
    found = _placed("# A\n\n[[b]] and [[b]] and [[c]]\n")
    assert found == [
        ("[[b]]", 2, 0, 5, "[[b]]"),
        ("[[b]]", 2, 10, 15, "[[b]]"),
        ("[[c]]", 2, 20, 25, "[[c]]"),
    ]


def test_a_front_matter_reference_is_looked_for_after_its_key() -> None:
    found = _placed("---\nrequires: [requires, b]\n---\n# A\n")
    assert [(t, line, start) for t, line, start, _e, _f in found] == [
        ("requires", 1, 11),
        ("b", 1, 21),
    ]


def test_a_url_written_without_its_scheme_and_text_not_on_its_line() -> None:
    ref = Reference(
        "a.md", "a.md", 1, "link", "https://example.org/x", "https://example.org/x", "url"
    )
    lost = Reference("a.md", "a.md", 2, "link", "[[gone]]", "gone", "name")
    placed = place([ref, lost], ["see example.org/x now", "  [[gone\\]] "])
    assert (placed[0].start, placed[0].end, placed[0].found) == (4, 17, "example.org/x")
    assert (placed[1].start, placed[1].end, placed[1].found) == (2, 11, "")
