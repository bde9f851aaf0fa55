"""``studykb site``: every in-page jump lands on an element of its page.

Obsidian's nested heading paths (``[[note#Setup#Linux]]``, the *Linux* under *Setup* when
another section has one too), block references (``[[note#^block]]``: the paragraph that
ends with ``^block`` carries the id) and extensionless relative links (``[x](sub/b)``:
``sub/b.md``) are followed in the built site; every ``#x`` href names an element with id
``x`` in the page it goes to (read with html.parser).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("jinja2")

VAULT = {
    ".obsidian/app.json": "{}",
    "a.md": (
        "# A\n\n"
        "Go to [[b#Usage#Linux]], [[b#Setup#Linux]], [[b#^para-1]], [[b#^table-2]], "
        "[[#Local#Deep]], [x](sub/c), [y](sub/c#two) and [[b#Usage]].\n\n"
        "## Local\n\n### Deep\n"
    ),
    "b.md": (
        "# B\n\n## Setup\n\n### Linux\n\nSetup on Linux.\n\n## Usage\n\n### Linux\n\n"
        "Use it on Linux. ^para-1\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n^table-2\n"
    ),
    "sub/c.md": "# C\n\n## One\n\n## Two\n",
}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.hrefs: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids[str(found["id"])] = tag
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text("utf-8"))
    return page


def _build(run: Callable[..., Any], tmp_path: Path) -> Path:
    vault, out = tmp_path / "v", tmp_path / "out"
    for rel, text in VAULT.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    result = run("site", "-o", str(out), "--json", vault=vault)
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)
    return out


def _jumps(out: Path) -> list[tuple[Path, str, Path, str]]:
    """(page, href, the page it goes to, fragment) of every href with a fragment."""
    found = []
    for page in sorted(out.rglob("*.html")):
        for href in _read(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme or not parts.fragment:
                continue
            target = page
            if parts.path:
                rel = posixpath.join(page.parent.relative_to(out).as_posix(), unquote(parts.path))
                target = out / posixpath.normpath(rel)
                if target.is_dir():
                    target = target / "index.html"
            found.append((page, href, target, unquote(parts.fragment)))
    return found


def test_every_in_page_jump_lands(run: Callable[..., Any], tmp_path: Path) -> None:
    out = _build(run, tmp_path)
    jumps = _jumps(out)
    assert jumps
    missing = [
        (page.name, href) for page, href, target, frag in jumps if frag not in _read(target).ids
    ]
    assert missing == []


def test_nested_paths_blocks_and_extensionless_links(
    run: Callable[..., Any], tmp_path: Path
) -> None:
    out = _build(run, tmp_path)
    from_a = {
        (target.stem, frag)
        for page, _h, target, frag in _jumps(out)
        if page.stem == "a" or page.name == "a.html"
    }
    b = next(p for p in out.rglob("*.html") if p.stem == "b")
    ids = _read(b).ids
    # two "Linux" headings: the one under Usage is the second
    assert ("b", "linux-1") in from_a and ("b", "linux") in from_a
    assert ids["^para-1"] == "p" and ids["^table-2"] == "table"
    assert ("b", "^para-1") in from_a and ("b", "^table-2") in from_a
    html = b.read_text("utf-8")
    assert "Use it on Linux.</p>" in html and "Linux. ^para-1" not in html  # marker hidden
    assert ("c", "two") in from_a
    assert any(frag == "deep" for _p, _h, _t, frag in _jumps(out))
