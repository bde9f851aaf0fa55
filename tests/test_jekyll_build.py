"""The Jekyll sidebar recipe of docs/guide/sites.md, in a real ``jekyll build``.

A tiny Jekyll site (posts with the default date permalinks and one with its own, a page in
a folder, a page with a space in its name, a ``permalink:`` of its own, a ``baseurl``)
gets its data file from ``studykb sidebar --format json -o _data/studykb/sidebar.json``
and the include exactly as the guide prints it. Jekyll must build the site, every page
studykb knows must show its sidebar (found by ``page.path``), and every rendered link must
lead to a generated page. Needs Debian's ``jekyll`` package (skipped, saying so, without
it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from site_builds import build, generated_page, items, recipe, rendered_links

pytestmark = pytest.mark.slow

JEKYLL = shutil.which("jekyll")

SITE = {
    "_config.yml": 'title: T\nbaseurl: "/sub"\nurl: "https://example.org"\nmarkdown: kramdown\n',
    # each page also prints the URL Jekyll gave it (compared with studykb's hrefs)
    "_layouts/default.html": '<html><body><b data-path="{{ page.path }}" '
    'data-url="{{ page.url | relative_url }}"></b><main>{{ content }}</main>'
    "{% include studykb-sidebar.html %}</body></html>\n",
    "index.md": "---\nlayout: default\ntitle: Home\nrelated: [docs/install.md]\n---\nWelcome.\n",
    "docs/install.md": "---\nlayout: default\ntitle: Install\nrequires: [My Setup]\n---\n"
    "## Steps\n\nRead [the setup](<My Setup.md>).\n",
    "docs/My Setup.md": "---\nlayout: default\ntitle: My Setup\n---\nSetup notes.\n",
    "docs/usage.md": "---\nlayout: default\ntitle: Usage\npermalink: /guide/usage/\n"
    "requires: [docs/install.md]\n---\nSee [install](install.md).\n",
    "_posts/2024-05-01-trip-report.md": "---\nlayout: default\ntitle: A Trip Report\n"
    "related: [docs/usage.md]\n---\nBack to [the docs](../docs/install.md).\n",
    "_posts/2023-02-03-plain.md": "---\nlayout: default\ntitle: Plain Post\n"
    "categories: [notes]\nrelated: [_posts/2024-05-01-trip-report.md, docs/install.md]\n"
    "---\nText.\n",
    "_posts/2022-01-09-own-link.md": "---\nlayout: default\ntitle: Own Link\n"
    "permalink: /archive/own-link.html\nrelated: [_posts/2023-02-03-plain.md]\n---\nText.\n",
}


@pytest.fixture
def built(tmp_path: Path) -> Path:
    if JEKYLL is None:
        pytest.skip("the jekyll program is not installed (Debian: apt-get install jekyll)")
    site = tmp_path / "site"
    files = {**SITE, "_includes/studykb-sidebar.html": recipe("jekyll")}
    command = [JEKYLL, "build", "--safe", "-s", str(site), "-d", str(tmp_path / "public")]
    build(site, files, "_data/studykb/sidebar.json", command)
    return tmp_path / "public"


def test_every_rendered_sidebar_link_leads_to_a_generated_page(built: Path) -> None:
    data = json.loads(
        (built.parent / "site" / "_data" / "studykb" / "sidebar.json").read_text(encoding="utf-8")
    )
    assert set(data) == {path for path in SITE if path.endswith(".md")}  # keyed by page.path
    links = rendered_links(built)
    assert len(links) == items(data) > 8  # every page found its sidebar by page.path
    missing = [href for href in links if generated_page(built, href) is None]
    assert missing == []


def test_hrefs_are_the_urls_jekyll_builds(built: Path) -> None:
    data = json.loads(
        (built.parent / "site" / "_data" / "studykb" / "sidebar.json").read_text(encoding="utf-8")
    )
    jekyll = {}  # page.path -> the URL Jekyll built for it
    for page in sorted(built.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        jekyll.update(re.findall(r'<b data-path="([^"]*)" data-url="([^"]*)">', html))
    assert set(jekyll) == set(data)
    hrefs = [
        (item["page"], item["href"])
        for sidebar in data.values()
        for part in ("related", "before", "leads_to")
        for item in sidebar[part]
    ]
    assert len(hrefs) > 8
    assert [(page, href) for page, href in hrefs if jekyll[page] != href] == []
    assert {jekyll["docs/My Setup.md"], jekyll["_posts/2023-02-03-plain.md"]} == {
        "/sub/docs/My%20Setup.html",
        "/sub/notes/2023/02/03/plain.html",
    }
