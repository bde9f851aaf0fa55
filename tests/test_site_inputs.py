"""What a page's inputs digest covers of its sidebar (:mod:`studykb.web.site_inputs`):
what the page shows of it, not the scores behind it."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any

from studykb.related.rank import Related
from studykb.related.sidebar import Neighbour, Sidebar
from studykb.web.contexts import sidebar_context
from studykb.web.links import Linker
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


def _changed(value: Any) -> Any:
    """Another value of the same kind as ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, (list, tuple)):
        return type(value)([*value, "x"])
    if isinstance(value, dict):
        return {**value, "x": 1.0}
    if value is None:
        return 1
    raise AssertionError(f"no other value for {value!r}")


def _variants(sidebar: Sidebar) -> list[tuple[str, Sidebar]]:
    """``sidebar`` with one field changed, for every field of it and of its first related
    document and neighbours (walked from the dataclasses, so a field added later is in)."""
    out: list[tuple[str, Sidebar]] = []
    for f in fields(sidebar):
        value = getattr(sidebar, f.name)
        if isinstance(value, list) and value and is_dataclass(value[0]):
            item = value[0]
            for g in fields(item):
                other = replace(item, **{g.name: _changed(getattr(item, g.name))})
                out.append((f"{f.name}.{g.name}", replace(sidebar, **{f.name: [other]})))
        else:
            out.append((f.name, replace(sidebar, **{f.name: _changed(value)})))
    return out


def test_every_sidebar_field_a_page_shows_moves_the_digest() -> None:
    """What :func:`sidebar_context` (the page's view of a sidebar) shows and what
    :func:`sidebar_digest` covers are listed apart: a field the page starts showing must
    move the digest too, or pages showing it go stale after an edit."""
    link = Linker(root="../", static=True)
    base = _sidebar()
    base = replace(base, leads_to=[Neighbour("d.md", "d", "d.md", "D", "note", 2, "needs A")])
    shown, digest = sidebar_context(base, link), sidebar_digest(base)
    variants = _variants(base)
    assert len(variants) > 20  # every field of Sidebar, Related and Neighbour was walked
    seen = 0
    for name, variant in variants:
        if sidebar_context(variant, link) != shown:
            seen += 1
            assert sidebar_digest(variant) != digest, f"{name} is shown but not in the digest"
    assert seen >= 10  # titles, types, notes, reasons, keys (urls) and the counts are shown
