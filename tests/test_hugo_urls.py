"""The URLs studykb gives Hugo pages, judged by a real ``hugo`` build (Debian's package).

A bilingual site (Chinese by default, English in its own content folder, a page translated
by file name) with ``[permalinks]`` using ``:slugorfilename``, ``:sections[1:]``, ``:slug``
and ``:title``, a numeric ``slug``, a ``url``, bundles, Chinese titles
and file names, a page never rendered and an expired one. Every page prints its
``.File.Path`` and ``.RelPermalink``: studykb's URL of each page must be Hugo's, each link of
the sidebar data file must be the URL of its page, and pages Hugo does not write must not
be linked. Skipped, saying so, without the binary.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from site_builds import build
from studykb.vault import Vault

pytestmark = pytest.mark.slow

HUGO = shutil.which("hugo")
ALL = "[trip, 流水线 并行, by-id, moved, hidden, old, guide, 翻译, deep, plain]"

SITE = {
    "hugo.toml": 'baseURL = "https://example.org/"\ntitle = "T"\n'
    'defaultContentLanguage = "zh"\n'
    'disableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
    "[permalinks]\n"
    'posts = "/:year/:month/:slugorfilename/"\n'
    'notes = "/n/:sections[1:]/:slug/"\n'
    'essays = "/e/:title/"\n'
    "[languages.zh]\nweight = 1\n"
    '[languages.en]\nweight = 2\ncontentDir = "content_en"\n',
    "content/posts/trip/index.md": "---\ntitle: trip\ndate: 2024-05-01\n"
    f"related: {ALL}\n---\nText.\n",
    "content/posts/流水线 并行.md": "---\ntitle: 流水线 并行\ndate: 2023-02-03\n"
    f"related: {ALL}\n---\n见 [旅行](/2024/05/trip/)。\n",
    "content/posts/by-id.md": "---\ntitle: by-id\ndate: 2022-11-09\nslug: 123\n"
    f"related: {ALL}\n---\nText.\n",
    "content/posts/moved.md": "---\ntitle: moved\ndate: 2022-01-01\nurl: /elsewhere/moved/\n"
    f"aliases: [/old-moved/]\nrelated: {ALL}\n---\nText.\n",
    "content/posts/hidden.md": "---\ntitle: hidden\ndate: 2022-01-01\n"
    f"_build:\n  render: never\nrelated: {ALL}\n---\nText.\n",
    "content/posts/old.md": "---\ntitle: old\ndate: 2020-01-01\nexpiryDate: 2021-01-01\n"
    f"related: {ALL}\n---\nText.\n",
    "content/notes/ml/deep/guide.md": "---\ntitle: guide\nslug: the-guide\n"
    f"related: {ALL}\n---\nSee [the trip](/2024/05/trip/) and [gone](/2024/05/gone/).\n",
    "content/notes/ml/_index.md": "---\ntitle: ML\n---\n",
    "content/notes/ml/deep.md": f"---\ntitle: deep\nrelated: {ALL}\n---\nText.\n",
    "content/essays/翻译.md": "---\ntitle: 张量 并行：入门\n"
    f"related: {ALL}\n---\n[回到](../../n/ml/the-guide/)\n",
    "content/essays/翻译.en.md": f"---\ntitle: Tensor Parallel\nrelated: {ALL}\n---\nText.\n",
    "content_en/posts/plain.md": "---\ntitle: plain\ndate: 2021-03-04\n"
    f"related: {ALL}\n---\nText.\n",
    "layouts/_default/single.html": '<p data-path="{{ .File.Path }}" '
    'data-url="{{ .RelPermalink }}"></p>{{ partial "links.html" . }}\n',
    "layouts/_default/list.html": '{{ with .File }}<p data-path="{{ .Path }}" '
    'data-url="{{ $.RelPermalink }}"></p>{{ end }}\n',
    "layouts/partials/links.html": "{{ $page := . }}{{ with site.Data.studykb.sidebar }}"
    "{{ with $page.File }}{{ with index site.Data.studykb.sidebar .Path }}"
    '{{ range .related }}<i data-href="{{ .href }}" data-getpage="'
    '{{ with site.GetPage .page }}{{ .RelPermalink }}{{ end }}"></i>{{ end }}'
    "{{ end }}{{ end }}{{ end }}\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if HUGO is None:
        pytest.skip("the hugo binary is not installed (Debian: apt-get install hugo)")
    root = tmp_path_factory.mktemp("hugo-urls")
    site = root / "site"
    command = [HUGO, "-s", str(site), "-d", str(root / "public")]
    build(site, SITE, "data/studykb/sidebar.json", command)
    return root


def _hugo_pages(public: Path) -> dict[str, str]:
    """``.File.Path`` -> ``.RelPermalink`` of every page Hugo wrote."""
    out = {}
    for page in public.rglob("*.html"):
        found = re.search(r'data-path="([^"]*)" data-url="([^"]*)"', page.read_text("utf-8"))
        if found:
            out[found.group(1)] = found.group(2)
    return out


def test_studykb_gives_each_page_the_url_hugo_gives_it(built: Path) -> None:
    from urllib.parse import unquote

    hugo = _hugo_pages(built / "public")
    assert len(hugo) == 10  # the page never rendered and the expired one are not written
    vault = Vault.open(built / "site")
    vault.refresh()
    docs = {d.path: d for d in vault.documents().values()}
    vault.close()
    ours = {}
    for path, doc in docs.items():
        rel = path.split("/", 1)[1]
        if doc.site_urls:
            ours[rel] = doc.site_urls[0]
    theirs = {path: unquote(url).rstrip("/") or "/" for path, url in hugo.items()}
    assert ours.keys() == theirs.keys()
    assert {k: v.casefold() for k, v in ours.items()} == {
        k: v.casefold() for k, v in theirs.items()
    }


def test_each_sidebar_link_is_the_url_of_its_page(built: Path) -> None:
    hugo = _hugo_pages(built / "public")
    data = json.loads((built / "site" / "data/studykb/sidebar.json").read_text("utf-8"))
    items = [item for sidebar in data.values() for item in sidebar["related"]]
    assert len(items) > 50
    assert [(i["page"], i["href"]) for i in items if hugo.get(i["page"]) != i["href"]] == []
    pairs = []  # and Hugo's own site.GetPage finds the same page (in the page's language)
    for page in (built / "public").rglob("*.html"):
        if "en" in page.relative_to(built / "public").parts:
            continue  # site.GetPage finds the English translation of a Chinese page there
        html = page.read_text(encoding="utf-8")
        pairs.extend(re.findall(r'<i data-href="([^"]*)" data-getpage="([^"]+)">', html))
    assert len(pairs) > 30
    assert [(h, g) for h, g in pairs if h != g] == []
    linked = {item["page"] for item in items}
    assert "posts/hidden.md" not in linked and "posts/old.md" not in linked
    assert "posts/trip/index.md" in linked


def test_links_by_url_resolve_and_a_broken_one_is_said(built: Path) -> None:
    vault = Vault.open(built / "site")
    vault.refresh()
    links = {(link.ref.path, link.ref.text): link for link in vault.links()}
    states = {link.ref.text: link.state for link in vault.links()}
    problems = [p for p in vault.problems() if p.code == "dangling-link"]
    vault.close()
    guide = "content/notes/ml/deep/guide.md"
    assert links[(guide, "/2024/05/trip/")].target == "content/posts/trip/index.md"
    assert links[("content/essays/翻译.md", "../../n/ml/the-guide/")].target == guide
    assert links[("content/posts/流水线 并行.md", "/2024/05/trip/")].state == "ok"
    assert states["/2024/05/gone/"] == "dangling"
    assert [(p.path, p.line) for p in problems] == [(guide, 6)]


# -- without hugo: what 0.111 cannot build ------------------------------------------------


def test_names_become_paths_as_hugo_makes_them() -> None:
    from studykb.parse.site_urls import sanitize

    assert sanitize("悬崖边的踟蹰-——-CSP-S-2019") == "悬崖边的踟蹰--csp-s-2019"  # hugo 0.111
    assert sanitize("流水线 并行：入门") == "流水线-并行入门"
    assert sanitize("My  Setup") == "my-setup"
    assert sanitize("My Setup", keep_case=True) == "My-Setup"


def test_newer_permalink_tokens_and_numeric_slugs() -> None:
    from studykb.parse.site_urls import HugoUrls, page_url

    urls = HugoUrls(
        (("posts", "/:year/:slugorcontentbasename/"), ("docs", "/d/:sections[last]/:filename/"))
    )
    meta = {"date": "2024-05-01T10:00:00+08:00"}
    assert page_url("posts/trip/index.md", meta, urls) == "/2024/trip/"
    assert page_url("posts/a.md", {**meta, "slug": 42}, urls) == "/2024/42/"
    assert page_url("docs/x.md", {}, urls) == "/d/docs/x/"
    assert page_url("other/a b.md", {"slug": 7}, HugoUrls(ugly=True)) == "/other/7.html"


def test_taxonomy_lists_and_pagers_are_hugos_own(tmp_path: Path) -> None:
    files = {
        "hugo.toml": 'baseURL = "https://x.org/"\n[taxonomies]\ncollection = "collections"\n',
        "content/posts/a.md": "---\ntitle: a\n---\n[c](/collections/web/) [p](/posts/page/2/) "
        "[t](/tags/x/) [b](/posts/b/) [gone](/posts/gone/) [s](/posts/)\n",
        "content/posts/b.md": "---\ntitle: b\n---\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    vault = Vault.open(tmp_path)
    vault.refresh()
    states = {link.ref.text: link.state for link in vault.links()}
    vault.close()
    assert states == {
        "/collections/web/": "external",
        "/posts/page/2/": "external",
        "/tags/x/": "external",  # no page is in /tags/
        "/posts/b/": "ok",
        "/posts/gone/": "dangling",
        "/posts/": "external",
    }
