"""Note bodies as HTML (parse/render.py): vault links where the vault resolved them, and
nothing a note could use to run code in the reader's browser."""

from __future__ import annotations

import re

import pytest

from studykb.parse.render import heading_anchor, render_note


class Links:
    """Resolves ``[[known]]`` and ``known.md``; images under ``img/``."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def reference(self, written: str, anchor: str) -> str | None:
        self.asked.append((written, anchor))
        if "known" not in written:
            return None
        return "/d/known.html" + (f"#{heading_anchor(anchor)}" if anchor else "")

    def local(self, anchor: str) -> str:
        return heading_anchor(anchor)

    def title(self, written: str) -> str | None:
        return None

    def asset(self, target: str) -> str | None:
        return f"/files/{target}" if target.startswith("img/") else None


def html_of(body: str, title: str = "") -> str:
    return render_note(body, Links(), title=title).html


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x]( javascript:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](vbscript:msgbox(1))",
        "<javascript:alert(1)>",
        "[x](file:///etc/passwd)",
        "![x](javascript:alert(1))",
        "![x](data:image/svg+xml;base64,PHN2Zz4=)",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "[x](java&#x73;cript:alert(1))",
        "[x](&#106;avascript:alert(1))",
    ],
)
def test_unsafe_links_never_become_links(link: str) -> None:
    html = html_of(f"Click {link} here.\n")
    assert not re.search(r'(href|src)="\s*(javascript|data|vbscript|file)', html, re.I), html
    assert "<a " not in html and "<img" not in html


@pytest.mark.parametrize(
    "raw",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src=x></iframe>",
        '<a href="javascript:alert(1)">x</a>',
        "<div onclick=alert(1)>x</div>",
        "<style>body{display:none}</style>",
        "<!-- comment --><svg onload=alert(1)>",
    ],
)
def test_raw_html_is_shown_as_text(raw: str) -> None:
    html = html_of(f"Before\n\n{raw}\n\nInline {raw} too.\n")
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert (
        "<svg" not in html
        and "<style" not in html
        and "onclick=alert" not in html.replace("&lt;div onclick=alert", "")
    )
    assert "&lt;" in html


def test_vault_links_safe_addresses_and_images() -> None:
    links = Links()
    html = render_note(
        "See [[known|Known doc]], [[known#Some Heading]], [rel](known.md#Setup), [[missing]], "
        "[site](https://example.org/a?b=1&c=2), <https://example.org/auto>, "
        "[mail](mailto:me@example.org), [up](#local-part).\n\n"
        "![diagram](img/d.png) ![[img/e.png]] ![remote](https://example.org/x.png)\n",
        links,
    ).html
    assert '<a class="wikilink" href="/d/known.html">Known doc</a>' in html
    assert 'href="/d/known.html#some-heading"' in html
    assert 'href="/d/known.html#setup"' in html
    assert '<span class="wikilink dead-link" title="not found in the vault">missing</span>' in html
    assert (
        'href="https://example.org/a?b=1&amp;c=2" class="external" rel="noopener noreferrer"'
        in html
    )
    assert 'href="mailto:me@example.org"' in html and 'href="#local-part"' in html
    assert '<img src="/files/img/d.png" alt="diagram"' in html
    assert '<img class="embed" src="/files/img/e.png"' in html
    assert '<img src="https://' not in html  # remote images are links, never loaded
    assert 'class="external image-link" href="https://example.org/x.png"' in html
    assert ("[[known|Known doc]]", "") in links.asked  # looked up as written


def test_math_code_and_headings() -> None:
    rendered = render_note(
        "# Title\n\nInline $a<b$ and $$\\sum x$$.\n\n$$\nE = mc^2\n$$\n\n"
        "```python\nif a < b: print('<x>')\n```\n\n```nosuchlang\n<raw>\n```\n\n"
        "    indented <code>\n\n## Setup\n\n## Setup\n\n## 中文 标题\n",
        Links(),
        title="Title",
    )
    html = rendered.html
    assert "<h1" not in html  # the title is in the page's header already
    assert '<span class="math inline">a&lt;b</span>' in html
    assert '<span class="math display">\\sum x</span>' in html
    assert '<div class="math display">\nE = mc^2\n</div>' in html
    assert '<div class="highlight"><pre><span></span><span class="k">if</span>' in html
    assert "&lt;raw&gt;" in html and "indented &lt;code&gt;" in html
    assert [h.anchor for h in rendered.headings] == ["setup", "setup-1", "中文-标题"]
    assert '<h2 id="setup-1">Setup</h2>' in html


def test_the_generated_sidebar_region_is_left_out() -> None:
    html = html_of(
        "---\nid: a\n---\nMine.\n\n<!-- studykb:sidebar -->\n## Related\n\n"
        "- [[known]]\n<!-- /studykb:sidebar -->\n\nAfter.\n"
    )
    assert "Mine." in html and "After." in html
    assert "Related" not in html and "known" not in html and "studykb:sidebar" not in html


def test_front_matter_is_not_body() -> None:
    html = html_of("---\ntitle: Secret <b>\ntags: [x]\n---\nBody.\n")
    assert html.strip() == "<p>Body.</p>"
