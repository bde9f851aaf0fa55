"""The Hugo sidebar recipe of docs/guide/sites.md, in a real ``hugo`` build.

A tiny Hugo site (a section, a bundle, a page with a space in its name, a ``slug``, a
``[permalinks]`` pattern, a base URL below the host's root, a page without any ``id``) gets
its data file from ``studykb sidebar --format json -o data/studykb/sidebar.json`` and the
partial exactly as the guide prints it. Hugo must build the site, every page studykb knows
must show its sidebar, and every rendered link must lead to a generated page, the same one
``site.GetPage`` finds. Needs Debian's ``hugo`` package (skipped, saying so, without it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from site_builds import build, generated_page, items, recipe, rendered_links

pytestmark = pytest.mark.slow

HUGO = shutil.which("hugo")

LAYOUT = (
    '<main>{{ .Content }}</main>{{ partial "studykb-sidebar.html" . }}'
    '{{ partial "getpage.html" . }}\n'
)

SITE = {
    "hugo.toml": 'baseURL = "https://example.org/sub/"\ntitle = "T"\n'
    'disableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
    '[permalinks]\nposts = "/:year/:slug/"\n',
    "content/_index.md": "---\ntitle: Home\n---\nWelcome.\n",
    "content/docs/_index.md": "---\ntitle: Docs\nrelated: [docs/install.md]\n---\n",
    "content/docs/install.md": "---\ntitle: Install\nrequires: [My Setup]\n---\n"
    '## Steps\n\nRead [the setup]({{< ref "My Setup.md" >}}).\n',
    "content/docs/My Setup.md": "---\ntitle: My Setup\nslug: the-setup\n---\nSetup notes.\n",
    "content/docs/usage.md": "---\ntitle: Usage\nrequires: [docs/install.md]\n---\n"
    'See [install](../install/) and {{< relref "install.md" >}}.\n',
    "content/docs/中文 笔记.md": "---\ntitle: 中文笔记\nrelated: [docs/usage.md]\n---\n"
    "见 [安装](../install/)。\n",
    "content/posts/trip/index.md": "---\ntitle: A Trip Report\ndate: 2024-05-01\n"
    "related: [docs/usage.md]\n---\nBack to [docs](/docs/).\n",
    "content/posts/plain.md": "---\ntitle: Plain Post\ndate: 2023-02-03\nslug: plain-one\n"
    "related: [posts/trip/index.md, docs/install.md, docs/中文 笔记.md]\n---\nText.\n",
    "layouts/_default/single.html": LAYOUT,
    "layouts/_default/list.html": LAYOUT,
    # what site.GetPage makes of every "page" the data file names (compared with "href")
    "layouts/partials/getpage.html": (
        "{{ $page := . }}{{ with site.Data.studykb.sidebar }}{{ with $page.File }}"
        "{{ with index $.Site.Data.studykb.sidebar .Path }}"
        "{{ range (slice .related .before .leads_to) }}{{ range . }}"
        '<i data-href="{{ .href }}" data-getpage="{{ with site.GetPage .page }}'
        '{{ .RelPermalink }}{{ end }}"></i>{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}\n'
    ),
}


@pytest.fixture
def built(tmp_path: Path) -> Path:
    if HUGO is None:
        pytest.skip("the hugo binary is not installed (Debian: apt-get install hugo)")
    site = tmp_path / "site"
    files = {**SITE, "layouts/partials/studykb-sidebar.html": recipe("hugo")}
    command = [HUGO, "-s", str(site), "-d", str(tmp_path / "public")]
    build(site, files, "data/studykb/sidebar.json", command)
    return tmp_path / "public"


def test_every_rendered_sidebar_link_leads_to_a_generated_page(built: Path) -> None:
    data = json.loads(
        (built.parent / "site" / "data" / "studykb" / "sidebar.json").read_text(encoding="utf-8")
    )
    assert set(data) == {
        "_index.md",
        "docs/_index.md",
        "docs/install.md",
        "docs/My Setup.md",
        "docs/usage.md",
        "docs/中文 笔记.md",
        "posts/trip/index.md",
        "posts/plain.md",
    }
    links = rendered_links(built)
    assert len(links) == items(data) > 10  # every page found its sidebar by .File.Path
    missing = [href for href in links if generated_page(built, href) is None]
    assert missing == []


def test_hrefs_are_the_urls_hugo_builds(built: Path) -> None:
    pairs = []
    for page in sorted(built.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        pairs.extend(re.findall(r'<i data-href="([^"]*)" data-getpage="([^"]*)">', html))
    assert pairs
    assert [(h, g) for h, g in pairs if h != g] == []
    hrefs = {h for h, _g in pairs}
    assert {
        "/sub/docs/the-setup/",
        "/sub/2024/a-trip-report/",
        "/sub/2023/plain-one/",
        "/sub/docs/install/",
        "/sub/docs/%E4%B8%AD%E6%96%87-%E7%AC%94%E8%AE%B0/",
    } <= hrefs
