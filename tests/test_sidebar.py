"""The sidebar: the parser ignores the generated region; formats; ``--write``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, tree_hashes
from studykb.outputs.sidebar_write import MarkerError, rewrite
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
    text = (
        f"```\n{SIDEBAR_START}\n```\n\n> {SIDEBAR_START}\n\n- {SIDEBAR_END}\n\n"
        f"    {SIDEBAR_START}\n"
    )
    found = find_markers(text)
    assert found.absent and found.region is None


def test_a_body_that_is_only_a_sidebar_gives_no_summary() -> None:
    text = f"---\ntitle: T\n---\n{SIDEBAR_START}\n- [[x]] words\n{SIDEBAR_END}\n"
    doc = parse_file("notes/t.md", text.encode()).documents[0]
    assert doc.summary == ""


# -- formats: golden files ----------------------------------------------------------------
GOLDEN = Path(__file__).parent / "golden" / "sidebar"
HOSTILE = ("<script>", "{{", "{%", "<img", "<b>")


@pytest.fixture
def rv(tmp_path: Path) -> Path:
    dest = tmp_path / "related_vault"
    shutil.copytree(FIXTURES / "related_vault", dest)
    return dest


def check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update or os.environ.get("STUDYKB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        return
    assert path.exists(), f"{path} is missing: run with STUDYKB_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
@pytest.mark.parametrize("query", ["kv-notes", "victim"])
def test_golden_sidebar(rv: Path, run: Callable, update_golden: bool, fmt: str, query: str) -> None:
    result = run("sidebar", query, "--format", fmt, vault=rv)
    assert result.exit_code == 0, result.stderr
    check_golden(f"{query}.{fmt}", result.stdout, update_golden)


def test_golden_data_file_for_every_document(rv: Path, run: Callable, update_golden: bool) -> None:
    out = rv / "data" / "studykb" / "sidebar.json"
    out.parent.mkdir(parents=True)
    result = run("sidebar", "--format", "json", "-o", str(out), vault=rv)
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    data = json.loads(text)
    # keyed by path (ids are not unique; a site template looks pages up by path)
    assert {"notes/kv-notes.md", "notes/topics/kv-cache.md", "courses/serving.md"} <= set(data)
    assert not any("#" in key for key in data)  # units live inside their course
    check_golden("all.json", text, update_golden)


# -- hostile titles and summaries ----------------------------------------------------------
def test_hostile_text_is_inert_in_every_format(rv: Path, run: Callable) -> None:
    md = run("sidebar", "victim", "--format", "md", vault=rv).stdout
    html = run("sidebar", "victim", "--format", "html", vault=rv).stdout
    raw_json = run("sidebar", "victim", "--format", "json", vault=rv).stdout
    for text in (md, html, raw_json):
        for bad in HOSTILE:
            assert bad not in text
        assert "studykb" not in text or "style=" not in text
    assert "\\<script\\>" in md and "\\|" in md and "\\{\\{" in md and "\\[x\\]" in md
    assert "&lt;script&gt;" in html and "&#123;&#123;" in html
    data = json.loads(raw_json)
    titles = [r["title"] for r in data["related"]]
    assert "<script>alert(1)</script> {{ .Site.Title }} | [x] *bold*" in titles
    # hostile names reach the reasons too (a topic's, or a title mentioned), unescaped in
    # JSON: the data file's reader escapes them
    assert any(
        "Evil <b>topic</b>" in reason or "mentions <script>" in reason
        for r in data["related"]
        for reason in r["reasons"]
    )


def test_markdown_sidebar_renders_as_plain_links(rv: Path, run: Callable) -> None:
    from studykb.parse.markdown import markdown

    md = run("sidebar", "victim", "--format", "md", vault=rv).stdout
    tokens = markdown().parse(md)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert "html_block" not in kinds and "html_inline" not in kinds
    assert "wikilink" not in kinds
    links = [c.attrs["href"] for t in tokens for c in (t.children or []) if c.type == "link_open"]
    assert "hostile.md" in links and all(not h.startswith(("/", "http")) for h in links)


def test_html_is_a_fragment_with_classes_only(rv: Path, run: Callable) -> None:
    html = run("sidebar", "kv-notes", "--format", "html", vault=rv).stdout
    assert html.startswith('<aside class="studykb-sidebar"')
    assert "style=" not in html and "<html" not in html and "<script" not in html
    assert 'href="../courses/serving.html"' in html  # relative to notes/kv-notes.md
    assert 'class="studykb-before"' in html


# -- --write ---------------------------------------------------------------------------------
def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_then_write_again_changes_no_byte(rv: Path, run: Callable) -> None:
    related_before = run("related", "kv-notes", "--json", vault=rv).stdout
    first = run("sidebar", "--write", vault=rv)
    assert first.exit_code == 0, first.stderr
    note = (rv / "notes" / "kv-notes.md").read_text(encoding="utf-8")
    assert note.count(SIDEBAR_START) == 1 and note.count(SIDEBAR_END) == 1
    assert "[Serving notes](serving-notes.md)" in note
    hashes = tree_hashes(rv)
    second = run("sidebar", "--write", vault=rv)
    assert second.exit_code == 0
    assert tree_hashes(rv) == hashes
    # the sidebar's own links did not feed back into the ranking
    assert run("related", "kv-notes", "--json", vault=rv).stdout == related_before


def test_only_notes_are_written(rv: Path, run: Callable) -> None:
    before = tree_hashes(rv)
    run("sidebar", "--write", vault=rv)
    after = tree_hashes(rv)
    changed = {p for p in after if after[p] != before.get(p)}
    assert changed and all(
        p.startswith("notes/") and "/" not in p[len("notes/") :] for p in changed
    )
    assert run("sidebar", "kv-cache", "--write", vault=rv).exit_code == 2


def test_only_between_markers_and_crlf_bom_kept(rv: Path, run: Callable) -> None:
    head = (
        "\ufeff---\r\nid: kv-notes\r\ntitle: My KV cache notes\r\ncourse: serving\r\n"
        "tags: [kv-cache, pagedattention]\r\nrefs: [kv-blog, rare-reading, common-reading]"
        "\r\nrelated: [serving-notes]\r\n---\r\n# My KV cache notes\r\n\r\nBefore.\r\n\r\n"
    )
    tail = "\r\nAfter the sidebar [[ddp-notes]].\r\n"
    body = head + f"{SIDEBAR_START}\r\nstale content [[fsdp-notes]]\r\n{SIDEBAR_END}\r\n" + tail
    note = rv / "notes" / "kv-notes.md"
    note.write_bytes(body.encode("utf-8"))
    assert run("sidebar", "kv-notes", "--write", vault=rv).exit_code == 0
    raw = note.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8")
    assert "\n" not in text.replace("\r\n", "")  # every line end is still CRLF
    assert text.startswith(head) and text.endswith(SIDEBAR_END + "\r\n" + tail)
    assert "stale content" not in text and "[Serving notes](serving-notes.md)" in text
    hashes = tree_hashes(rv)
    run("sidebar", "kv-notes", "--write", vault=rv)
    assert tree_hashes(rv) == hashes


def test_markers_are_added_at_the_end(rv: Path, run: Callable) -> None:
    note = rv / "notes" / "ddp-notes.md"
    original = note.read_bytes()
    run("sidebar", "ddp-notes", "--write", vault=rv)
    raw = note.read_bytes()
    assert raw.startswith(original)
    assert raw[len(original) :].startswith(b"\n" + SIDEBAR_START.encode())
    assert raw.endswith((SIDEBAR_END + "\n").encode())


def test_file_mode_is_kept(rv: Path, run: Callable) -> None:
    note = rv / "notes" / "ddp-notes.md"
    note.chmod(0o640)
    run("sidebar", "ddp-notes", "--write", vault=rv)
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    assert not [p for p in note.parent.iterdir() if p.name.endswith(".tmp")]


def test_one_marker_leaves_the_note_untouched_with_a_warning(rv: Path, run: Callable) -> None:
    note = rv / "notes" / "ddp-notes.md"
    note.write_bytes(note.read_bytes() + f"\n{SIDEBAR_START}\nhalf\n".encode())
    digest = sha(note)
    result = run("sidebar", "--write", vault=rv)
    assert result.exit_code == 1
    assert "warning: notes/ddp-notes.md" in result.stderr and "untouched" in result.stderr
    assert sha(note) == digest
    assert SIDEBAR_START in (rv / "notes" / "kv-notes.md").read_text(encoding="utf-8")


def test_unparseable_notes_are_skipped(rv: Path, run: Callable) -> None:
    broken = rv / "notes" / "broken.md"
    broken.write_text("---\ntitle: [unclosed\ntags: [ddp]\n---\n# Broken\n", encoding="utf-8")
    latin = rv / "notes" / "latin1.md"
    latin.write_bytes("# Caf\xe9\n".encode("latin-1"))
    digests = sha(broken), sha(latin)
    result = run("sidebar", "--write", vault=rv)
    assert result.exit_code == 1
    assert "skipped notes/broken.md" in result.stderr
    assert "skipped notes/latin1.md" in result.stderr
    assert (sha(broken), sha(latin)) == digests


def test_dry_run_prints_a_diff_and_writes_nothing(rv: Path, run: Callable) -> None:
    hashes = tree_hashes(rv)
    result = run("sidebar", "--write", "--dry-run", vault=rv)
    assert result.exit_code == 0
    assert "--- a/notes/kv-notes.md" in result.stdout and "+++ b/notes/kv-notes.md" in result.stdout
    assert f"+{SIDEBAR_START}" in result.stdout
    assert tree_hashes(rv) == hashes
    assert "would change" in result.stderr


def test_write_json_report(rv: Path, run: Callable) -> None:
    result = run("sidebar", "--write", "--json", vault=rv)
    data = json.loads(result.stdout)
    assert "notes/kv-notes.md" in data["written"] and data["skipped"] == []
    again = json.loads(run("sidebar", "--write", "--json", vault=rv).stdout)
    assert again["written"] == [] and "notes/kv-notes.md" in again["unchanged"]


def test_a_concurrent_change_is_detected(rv: Path, open_vault: Callable) -> None:
    from studykb.outputs import sidebar_write
    from studykb.related.sidebar import sidebars

    vault = open_vault(rv)
    outcome = sidebar_write.plan(
        vault, sidebars(vault, ["notes/kv-notes.md", "notes/ddp-notes.md"])
    )
    assert len(outcome.planned) == 2
    note = rv / "notes" / "kv-notes.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nEdited meanwhile.\n", encoding="utf-8")
    edited = note.read_bytes()
    sidebar_write.apply(outcome)
    assert note.read_bytes() == edited
    assert [p for p, _why in outcome.skipped] == ["notes/kv-notes.md"]
    assert outcome.written == ["notes/ddp-notes.md"]


def test_a_change_since_the_index_is_detected(rv: Path, open_vault: Callable) -> None:
    from studykb.outputs import sidebar_write
    from studykb.related.sidebar import sidebars

    vault = open_vault(rv)
    found = sidebars(vault, ["notes/kv-notes.md"])
    note = rv / "notes" / "kv-notes.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    outcome = sidebar_write.plan(vault, found)
    assert outcome.planned == [] and outcome.skipped[0][0] == "notes/kv-notes.md"


# -- properties of the rewrite ----------------------------------------------------------------
_PIECES = st.sampled_from(
    [
        "# Title",
        "text [[link]]",
        "",
        "```",
        "    code",
        "- item",
        "<div>",
        "---",
        "title: x",
        "> quote",
        SIDEBAR_START,
        SIDEBAR_END,
        "中文",
        "a|b",
        "<!-- c -->",
    ]
)
_EOL = st.sampled_from(["\n", "\r\n"])
_MD = "## Related\n\n- [A \\| B](a.md) — same course: X\n"
_MD2 = "## Related\n\n- [C](c.md)\n\n## Leads to\n\n- [D](d.md)\n"


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_PIECES, max_size=12), eol=_EOL, bom=st.booleans(), final=st.booleans())
def test_rewrite_is_idempotent_and_keeps_everything_outside(
    lines: list[str], eol: str, bom: bool, final: bool
) -> None:
    text = eol.join(lines) + (eol if final and lines else "")
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    try:
        once = rewrite(raw, _MD)
    except MarkerError:
        return  # lone or repeated markers, or an open code block at the end: untouched
    assert rewrite(once, _MD) == once
    assert rewrite(rewrite(once, _MD2), _MD) == once  # only the region changes
    assert once.startswith(b"\xef\xbb\xbf") == bom
    body = once.decode("utf-8-sig")
    if "\r\n" in text:  # the file's line ends are kept (a file without any gets "\n")
        assert "\n" not in body.replace("\r\n", "")
    found = find_markers(body)
    assert found.region is not None
    before = find_markers(raw.decode("utf-8-sig"))
    if before.absent:  # markers added at the end: the note itself is a prefix
        assert once.startswith(raw)
    else:  # everything up to the start marker and from the end marker on is kept
        assert before.region is not None
        start, end = before.region
        old = raw.decode("utf-8-sig").splitlines(keepends=True)
        new = body.splitlines(keepends=True)
        assert new[: start + 1] == old[: start + 1]
        assert new[len(new) - (len(old) - end) :] == old[end:]
