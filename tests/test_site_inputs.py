"""What a page's inputs digest covers of its sidebar (:mod:`studykb.web.site_inputs`):
what the page shows of it, not the scores behind it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from studykb.related.rank import Related
from studykb.related.sidebar import Neighbour, Sidebar
from studykb.web.site_inputs import plan_inputs, sidebar_digest


def _sidebar(score: float = 0.5, reasons: tuple[str, ...] = ("links here",)) -> Sidebar:
    related = Related("b.md", "b", "b.md", "B", "note", score, list(reasons), {"L": score}, 1)
    before = Neighbour("c.md", "c", "c.md", "C", "note", None, "for D")
    return Sidebar("a.md", "a", "a.md", "A", "note", [related], [before], [], 0, 0)


def test_a_sidebar_digest_ignores_the_scores_and_names_what_is_shown() -> None:
    base = sidebar_digest(_sidebar())
    assert sidebar_digest(_sidebar(score=0.25)) == base  # the same list shown
    assert sidebar_digest(_sidebar(reasons=("mentions B",))) != base
    assert sidebar_digest(replace(_sidebar(), more_before=2)) != base
    assert sidebar_digest(replace(_sidebar(), before=[])) != base
    assert sidebar_digest(None) != base


def test_a_plan_page_is_made_from_what_pages_share_and_its_topic() -> None:
    from studykb.model import Document

    topic = Document.__new__(Document)
    object.__setattr__(topic, "key", "t.md")
    other = Document.__new__(Document)
    object.__setattr__(other, "key", "u.md")
    assert plan_inputs(topic, "x") == plan_inputs(topic, "x")
    assert plan_inputs(topic, "x") != plan_inputs(topic, "y")
    assert plan_inputs(topic, "x") != plan_inputs(other, "x")


def test_a_manifest_read_ahead_is_taken_only_while_the_file_is_the_same(tmp_path: Any) -> None:
    import json
    import os

    from studykb.web.site_output import MANIFEST, Output, read_ahead

    out = tmp_path / "site"
    out.mkdir()
    manifest = out / MANIFEST
    manifest.write_text(json.dumps({"version": 1, "state": "s1", "files": {}}))
    read_ahead(out)
    assert Output(out).old_state == "s1"  # the one read ahead (or read again: the same)
    read_ahead(out)
    manifest.write_text(json.dumps({"version": 1, "state": "s22", "files": {}}))
    os.utime(manifest, ns=(1, 1))  # another file, whatever the clock's resolution
    assert Output(out).old_state == "s22"  # read again: it changed since
    read_ahead(out)
    manifest.unlink()
    assert Output(out).old_state == ""  # gone since: nothing kept is used
