"""The sidebar of every document: made into text where it is made (in the workers for a
whole vault), with the same output as the sidebars made first and formatted after."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from conftest import write_files
from studykb.api import Session
from studykb.outputs import sidebar as fmt
from studykb.outputs.site_pages import SitePages
from studykb.related import sidebar as sidebar_mod
from studykb.runtime import pools

HUGO = {
    "hugo.toml": 'defaultContentLanguage = "en"\ncontentDir = "content/en"\n'
    '[languages.en]\n[languages.zh]\ncontentDir = "content/zh"\n',
    # the same page path in two languages: the second gets its language in front
    "content/en/docs/a.md": "---\ntags: [gpu]\n---\n# A <b> & {{ .Site }} {% x %}\n\n[[b]] [[c]]\n",
    "content/zh/docs/a.md": "---\ntags: [gpu]\n---\n# 甲 <i>\n\n[[b]] [[content/en/docs/a.md]]\n",
    "content/en/docs/b.md": "---\ntags: [gpu]\nrequires: [c]\n---\n# B\n\n[[c]] kernels\n",
    "content/en/docs/c.md": "---\ntags: [gpu, cuda]\n---\n# C\n\nkernels [[a]]\n",
}


@pytest.fixture
def hugo(tmp_path: Path) -> Session:
    root = write_files(tmp_path / "site", HUGO)
    kb = Session.open(root)
    kb.refresh()
    return kb


def test_keyed_json_is_to_json_of_keyed(hugo: Session) -> None:
    found = hugo.sidebars()
    pages = SitePages(hugo.site, hugo.documents())
    for ext, site in ((".md", None), (".html", None), (".md", pages)):
        whole = fmt.to_json(fmt.keyed(found, ext, site), indent=None)
        pieces = fmt.keyed_json([fmt.keyed_entry(sb, ext, site) for sb in found], site)
        assert pieces == whole
    assert '"zh/docs/a.md": ' in pieces and "\\u007b\\u007b" in pieces and "<" not in pieces
    assert fmt.keyed_json([], None) == fmt.to_json({}, indent=None)


def test_whole_vault_in_workers_is_the_same(hugo: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    if not pools.can_fork():
        pytest.skip("no fork")
    alone = hugo.sidebars()
    shape = partial(fmt.keyed_entry, ext=".md", pages=None)
    serial = hugo.sidebars_as(shape)
    monkeypatch.setattr(sidebar_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sidebar_mod, "cores", lambda: 2)
    forked = hugo.sidebars_as(shape)
    assert forked == serial == [shape(sb) for sb in alone]
    assert len(forked) == 4 and all(sb.related for sb in alone)
    assert hugo.sidebars() == alone  # the objects too, in the workers and back


def test_cli_whole_vault_formats(hugo: Session, run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    found = hugo.sidebars()
    pages = SitePages(hugo.site, hugo.documents())
    want = {
        "json": fmt.to_json(fmt.keyed(found, ".md", pages), indent=None),
        "html": "\n".join(fmt.to_html(sb, ".html") for sb in found),
        "md": "\n".join(f"<!-- {sb.path} -->\n{fmt.to_markdown(sb, '.md')}" for sb in found),
    }
    monkeypatch.setattr(sidebar_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sidebar_mod, "cores", lambda: 2)
    for name, text in want.items():
        result = run("sidebar", "--format", name, vault=hugo.root)
        assert result.exit_code == 0, result.output
        assert result.stdout == text
