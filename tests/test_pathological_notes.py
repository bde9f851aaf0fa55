"""Pathological notes under ``max_file_mb`` are read in linear work, or skipped with a
``too-complex`` problem naming them (issue 30, Medium).

No test here times anything: each counts the work (characters scanned, calls made,
lines of Python run) at two sizes and holds it to grow linearly, or checks that a
note whose Markdown would make too many pieces is reported and not parsed.
Timings are in ``benchmarks/bench_pathological.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from studykb.parse import body as body_module
from studykb.parse import markdown as markdown_module
from studykb.parse import slugs
from studykb.parse.body import Body
from studykb.parse.document import parse_file
from studykb.parse.slugs import Heading


class Scanned(str):
    """A string that adds up how many characters its ``count`` calls look at."""

    scanned = 0

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        lo = 0 if start is None else start
        hi = len(self) if end is None else end
        Scanned.scanned += max(0, hi - lo)
        return str.count(self, sub, lo, hi)


def _lines_run(module_file: str, action: Callable[[], object]) -> int:
    """How many lines of Python in ``module_file`` ``action()`` runs (its steps)."""
    steps = 0

    def tracer(frame: FrameType, event: str, _arg: object) -> Any:
        nonlocal steps
        if frame.f_code.co_filename != module_file:
            return None
        if event == "line":
            steps += 1
        return tracer

    sys.settrace(tracer)
    try:
        action()
    finally:
        sys.settrace(None)
    return steps


def _c_calls(name: str, action: Callable[[], object]) -> int:
    """How many calls of the built-in method ``name`` (``str.count``...) ``action()`` makes."""
    calls = 0

    def profiler(_frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "c_call" and getattr(arg, "__name__", "") == name:
            calls += 1

    sys.setprofile(profiler)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


# -- bare URLs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit", ["http://a.com/x ", "<http://a"], ids=["bare-urls-on-one-line", "lt-http"]
)
def test_the_lines_of_bare_urls_are_counted_once(unit: str) -> None:
    """Each URL's line was counted from the start of its text: quadratic in URLs x
    length (40,000 URLs on one line 12 s; 3.6 MB of ``<http://a`` over 15 minutes)."""
    for n in (2_000, 8_000):
        text = Scanned((unit * n + "\n") * 3)
        out = Body()
        Scanned.scanned = 0
        body_module._bare_urls(text, 1, out)
        assert len(out.refs) == 3 * n
        assert Scanned.scanned <= len(text), (n, Scanned.scanned, len(text))
        assert [out.refs[i].line for i in (0, n - 1, n, 2 * n, 3 * n - 1)] == [1, 1, 2, 3, 3]


def test_a_url_ending_in_brackets_is_trimmed_in_one_count() -> None:
    """A ``)`` that closes nothing is dropped; the brackets were counted again for each."""
    for n in (1_000, 4_000):
        text = "see http://a.com/x_(y)" + ")" * n + " end"
        found: list[tuple[int, str]] = []
        calls = _c_calls("count", lambda t=text, f=found: f.extend(markdown_module.bare_urls(t)))
        assert found == [(4, "http://a.com/x_(y)")]
        assert calls <= 4, (n, calls)


# -- headings ---------------------------------------------------------------------------------


def test_equal_headings_get_their_numbers_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """``# h`` a thousand times: h, h-1, h-2... Each number was searched for from 1."""
    looked = [0]
    real = slugs._Taken.has

    def counting(self: slugs._Taken, name: str) -> bool:
        looked[0] += 1
        return real(self, name)

    monkeypatch.setattr(slugs._Taken, "has", counting)
    for n in (1_000, 4_000):
        looked[0] = 0
        headings = [Heading("h", 2, i + 1) for i in range(n)]
        headings.append(Heading("h 1", 2, n + 1))  # its slug h-1 is taken: h-1-1
        found = slugs.anchors(headings, "github")
        assert found[:3] == ["h", "h-1", "h-2"] and found[-2:] == [f"h-{n - 1}", "h-1-1"]
        assert looked[0] <= 3 * n, (n, looked[0])


def test_a_nested_obsidian_anchor_is_found_in_linear_work() -> None:
    """``[[note#A#h]]`` in a note of thousands of ``h`` headings: each one's ancestors
    were looked for again, from where it stands back to the top."""
    steps = []
    for n in (500, 2_000):
        headings = [Heading("Top", 1, 1)]
        headings += [Heading("h", 2, i + 2) for i in range(n)]
        headings += [Heading("A", 1, n + 2), Heading("h", 2, n + 3)]
        index = slugs.index(headings, "obsidian")
        found: list[Heading | None] = []
        steps.append(_lines_run(slugs.__file__, lambda i=index, f=found: f.append(i.find("A#h"))))
        assert found == [headings[-1]]
    assert steps[1] <= 5 * steps[0], steps  # four times the headings: about four times


# -- bodies too big for the Markdown parser ---------------------------------------------------

BIG = {
    "headings-1M": lambda: "# h\n" * 1_000_000,
    "table-4.2MB": lambda: "| a | b | c |\n|---|---|---|\n" + "| x | y | z |\n" * 300_000,
    "list-1M": lambda: "- a\n" * 1_000_000,
    "lt-http-3.6MB": lambda: "<http://a" * 400_000 + "\n",
}


@pytest.fixture
def no_markdown(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the bodies given to markdown-it."""
    parsed = [0]
    real = body_module.markdown

    def counted(*args: Any) -> Any:
        md = real(*args)

        class Counting:
            def parse(self, src: str, env: Any = None) -> Any:
                parsed[0] += 1
                return md.parse(src, env)

        return Counting()

    monkeypatch.setattr(body_module, "markdown", counted)
    yield parsed


@pytest.mark.parametrize("name", sorted(BIG))
def test_a_body_too_big_to_parse_is_skipped_as_too_complex(
    name: str, no_markdown: list[int]
) -> None:
    text = "---\ntitle: Big\n---\n" + BIG[name]()
    assert len(text.encode()) < 5 * 1024 * 1024  # under max_file_mb
    parsed = parse_file("notes/big.md", text.encode())
    assert no_markdown == [0]  # markdown-it never saw it
    (problem,) = parsed.problems
    assert (problem.path, problem.line, problem.code) == ("notes/big.md", 4, "too-complex")
    assert "too complex to read" in problem.message
    (doc,) = parsed.documents
    assert doc.title == "Big" and parsed.references == ()


def test_the_bound_leaves_ordinary_notes_alone(no_markdown: list[int]) -> None:
    """Just under the bound the note is read in full; just over, skipped."""
    limit = markdown_module.MAX_PIECES
    n = limit // 11 - 10  # a heading and a paragraph: 11 pieces
    under = "".join(f"# h{i}\n\ntext {i}\n\n" for i in range(n))
    assert markdown_module.pieces(under) <= limit
    parsed = parse_file("a.md", under.encode())
    assert no_markdown == [1] and parsed.problems == ()
    assert len(parsed.headings) == n
    over = "# h\n" * (limit // 7 + 10)
    assert markdown_module.pieces(over) > limit
    assert [p.code for p in parse_file("b.md", over.encode()).problems] == ["too-complex"]
    assert no_markdown == [1]


def test_the_estimate_bounds_what_markdown_it_makes() -> None:
    """The estimate is an upper bound of the tokens markdown-it makes, within a small
    factor, for each shape of block (so the bound means what it says)."""
    md = markdown_module.markdown()
    for text in (
        "# h\n" * 3_000,
        "| a | b |\n|---|---|\n" + "| x | y |\n" * 2_000,
        "- a\n" * 3_000,
        "> a\n" * 3_000,
        "word\n" * 3_000,
        "para\n\n" * 3_000,
        "[[a]] [b](c) http://d.com " * 1_000,
        "1. a\n   - b\n" * 1_000,
    ):
        tokens = md.parse(text)
        made = len(tokens) + sum(len(t.children or ()) for t in tokens)
        estimate = markdown_module.counted(text)
        assert made <= estimate + 10 and estimate <= 4 * made + 10, (text[:12], made, estimate)
        assert markdown_module.pieces(text) >= estimate


def test_a_build_reports_the_note_and_reads_the_others(
    make_vault: Callable[..., Path], run: Callable[..., Any]
) -> None:
    root = make_vault({"notes/big.md": BIG["headings-1M"](), "notes/ok.md": "# OK\n\n[[big]]\n"})
    result = run("check", "--json", vault=root)
    problems = json.loads(result.stdout)["problems"]
    assert [(p["path"], p["code"]) for p in problems] == [("notes/big.md", "too-complex")]
    shown = run("backlinks", "big", "--json", vault=root)
    assert shown.exit_code == 0 and "notes/ok.md" in shown.stdout


# -- the inline parser's budget: counted, never timed ----------------------------------------


def test_a_file_whose_paragraphs_together_cost_too_much_ends_as_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each paragraph is under the per-paragraph bound; once the file's sum would pass
    MAX_FILE_INLINE_COST, the paragraphs after are plain text (their links not read) and
    the file is too complex; the ones before are parsed."""
    from studykb.parse.body import read_body

    paragraph = "See [[a]] and [[b]] here."  # 4 special characters, 25 long: cost 100
    monkeypatch.setattr(markdown_module, "MAX_FILE_INLINE_COST", 100 * 10)
    body = read_body("\n\n".join([paragraph] * 15) + "\n", 1, "many.md")
    assert body.too_complex
    assert [r.target for r in body.refs] == ["a", "b"] * 10


def test_the_inline_budget_does_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large ordinary note (12,000 paragraphs, 24,000 links) is read whole however slow
    the machine: with a clock that jumps ten seconds at every reading, every link is
    still found and nothing is plain text (a wall-clock budget made the site of a busy
    machine differ from an idle one's)."""
    import time

    from studykb.parse.body import read_body

    now = [0.0]

    def jumping() -> float:
        now[0] += 10.0
        return now[0]

    monkeypatch.setattr(time, "perf_counter", jumping)
    monkeypatch.setattr(time, "monotonic", jumping)
    text = "".join(
        f"Line {i} sees [[other]] and [[missing-{i % 500}]] here.\n\n" for i in range(12_000)
    )
    body = read_body(text, 1, "large.md")
    assert not body.too_complex
    assert len(body.refs) == 24_000
