"""The sidebar: the parser ignores the generated region; formats; ``--write``."""

from __future__ import annotations

from studykb.parse import parse_file
from studykb.parse.markers import SIDEBAR_END, SIDEBAR_START, find_markers

NOTE = (
    "---\nid: a\n---\n# A\n\nBody [[b]].\n\n"
    f"{SIDEBAR_START}\n## Related\n\n- [C](c.md): x [[d]]\n\n{SIDEBAR_END}\n"
    "after [[e]]\n"
)


# -- the parser skips the generated region -------------------------------------------------
def test_parser_skips_links_text_and_headings_between_markers() -> None:
    parsed = parse_file("notes/a.md", NOTE.encode())
    assert [r.target for r in parsed.references] == ["b", "e"]
    assert "Related" not in parsed.text and "C" not in parsed.text.split()
    assert parsed.headings == ("A",)
    assert parsed.documents[0].title == "A"


def test_a_lone_marker_skips_nothing() -> None:
    lone = NOTE.replace(SIDEBAR_END + "\n", "")
    parsed = parse_file("notes/a.md", lone.encode())
    assert [r.target for r in parsed.references] == ["b", "notes/c.md", "d", "e"]


def test_region_lines_with_crlf_bom_and_front_matter() -> None:
    crlf = NOTE.replace("\n", "\r\n")
    assert find_markers(NOTE).region == (7, 12)
    assert find_markers(crlf).region == (7, 12)
    parsed = parse_file("notes/a.md", b"\xef\xbb\xbf" + crlf.encode())
    assert [r.target for r in parsed.references] == ["b", "e"]


def test_markers_in_code_quotes_and_lists_do_not_count() -> None:
    text = (f"```\n{SIDEBAR_START}\n```\n\n> {SIDEBAR_START}\n\n- {SIDEBAR_END}\n\n"
            f"    {SIDEBAR_START}\n")
    found = find_markers(text)
    assert found.absent and found.region is None


def test_a_body_that_is_only_a_sidebar_gives_no_summary() -> None:
    text = f"---\ntitle: T\n---\n{SIDEBAR_START}\n- [[x]] words\n{SIDEBAR_END}\n"
    doc = parse_file("notes/t.md", text.encode()).documents[0]
    assert doc.summary == ""
