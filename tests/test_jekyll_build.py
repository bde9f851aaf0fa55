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
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from test_hugo_build import recipe

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
    for rel, text in SITE.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (site / "_includes").mkdir()
    (site / "_includes" / "studykb-sidebar.html").write_text(recipe("jekyll"), encoding="utf-8")
    prepare()
    out = site / "_data" / "studykb" / "sidebar.json"  # the folders do not exist yet
    result = CliRunner().invoke(
        cli, ["--vault", str(site), "sidebar", "--format", "json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    done = subprocess.run(
        [JEKYLL, "build", "--safe", "-s", str(site), "-d", str(tmp_path / "public")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "public"


def _page(public: Path, href: str) -> Path | None:
    """The generated file an href of the site (below /sub/) leads to, or None."""
    assert href.startswith("/sub/"), href
    rel = unquote(href[len("/sub/") :].split("#", 1)[0])
    target = public / rel
    if rel.endswith("/") or rel == "":
        target = target / "index.html"
    return target if target.is_file() else None


def test_every_rendered_sidebar_link_leads_to_a_generated_page(built: Path) -> None:
    data = json.loads(
        (built.parent / "site" / "_data" / "studykb" / "sidebar.json").read_text(encoding="utf-8")
    )
    assert set(data) == {path for path in SITE if path.endswith(".md")}  # keyed by page.path
    links = []
    for page in sorted(built.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        links.extend(re.findall(r'<a class="studykb-link" href="([^"]+)"', html))
    expected = sum(
        len(sb[part]) for sb in data.values() for part in ("related", "before", "leads_to")
    )
    assert len(links) == expected > 8  # every page found its sidebar by page.path
    missing = [href for href in links if _page(built, href) is None]
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
