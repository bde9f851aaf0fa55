"""A Hugo site that renders links through a hook of its own (Hugo's documentation turns
``[term](g)`` into a glossary link) is not second-guessed: only site-absolute links are
judged there, and a link written by a shortcode is never judged (712 false
``dangling-link`` warnings on Hugo's own docs before)."""

from __future__ import annotations

import json

FILES = {
    "hugo.toml": 'baseURL = "https://example.org/"\ntitle = "Docs"\n',
    "content/docs/_index.md": "---\ntitle: Docs\n---\n",
    "content/docs/a.md": (
        "---\ntitle: A\n---\n"
        "A [glossary term](g), a [made link]({{% eturl rss %}}), [b](../b/), "
        "and [gone](/docs/nothing-here/).\n"
    ),
    "content/docs/b.md": "---\ntitle: B\n---\nB.\n",
}


def _check(make_vault, run, hook: bool) -> list[tuple[str, str]]:
    files = dict(FILES)
    if hook:
        files["layouts/_markup/render-link.html"] = "<a href={{ .Destination }}>{{ .Text }}</a>\n"
    root = make_vault(files, config=None)
    result = run("check", "--json", vault=root)
    problems = json.loads(result.stdout)["problems"]
    return sorted((p["code"], p["message"].split("'")[1]) for p in problems)


def test_without_a_hook_a_relative_link_to_no_page_is_reported(make_vault, run) -> None:
    found = _check(make_vault, run, hook=False)
    assert ("dangling-link", "g") in found
    assert ("dangling-link", "/docs/nothing-here/") in found
    assert not [t for _c, t in found if "{{" in t]  # a shortcode's link is never judged


def test_with_a_link_hook_only_site_absolute_links_are_judged(make_vault, run) -> None:
    found = _check(make_vault, run, hook=True)
    assert found == [("dangling-link", "/docs/nothing-here/")]
