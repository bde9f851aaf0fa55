"""Which generator a folder is written for: detect() on small configurations and fixture sites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studykb.parse.slugs import FLAVOURS
from studykb.vault.flavour import GENERATORS, HEADING_FLAVOURS, Site, detect

SITES = Path(__file__).parent / "fixtures" / "sites"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# --- Hugo -------------------------------------------------------------------------------------


def test_hugo_toml_with_languages(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": """
baseURL = "https://example.org/docs/"
defaultContentLanguage = "en"
contentDir = "content/en"
uglyURLs = true
[permalinks]
posts = "/:year/:slug/"
[languages.en]
weight = 1
[languages.zh]
contentDir = "content/zh"
[markup.goldmark.parser]
autoHeadingIDType = "github-ascii"
autoDefinitionTermID = true
[markup.goldmark.parser.attribute]
title = false
""",
            "content/en/_index.md": "",
            "content/zh/_index.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.generator == "hugo"
    assert site.content_dirs == ("content/en", "content/zh")
    assert site.language_dirs == {"zh": "content/zh"}
    assert site.default_language == "en"
    assert site.heading_flavour == "hugo"
    assert site.heading_options == {
        "id_type": "github-ascii",
        "attributes": False,
        "definition_terms": True,
    }
    assert site.static_dirs == ("static",)
    assert site.ugly_urls and site.pretty_urls
    assert site.permalinks == {"posts": "/:year/:slug/"}
    assert site.base_path == "/docs/"
    assert site.config_file == "hugo.toml" and site.warnings == ()


def test_hugo_every_language_has_its_folder(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.yaml": "languages:\n  en:\n    contentDir: content/en\n"
            "  fr:\n    contentDir: content/fr\n",
            "content/en/a.md": "",
            "content/fr/a.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.content_dirs == ("content/en", "content/fr")


def test_hugo_config_dir_and_case_insensitive_keys(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "config/_default/hugo.toml": 'baseurl = "https://x.org/"\ncontentdir = "site"\n',
            "config/_default/languages.toml": '[de]\ncontentDir = "site/de"\n',
            "config/_default/params.yaml": "x: 1\n",
            "config/_default/menus.en.toml": "[[main]]\nname = 'Home'\n",
            "site/de/a.md": "",
            "site/b.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.generator == "hugo"
    assert site.content_dirs == ("site", "site/de")
    assert site.config_file == "config/_default"


def test_hugo_config_toml_needs_hugo_keys_and_content(tmp_path: Path) -> None:
    _write(tmp_path, {"config.toml": 'baseURL = "/"\ntheme = "ananke"\n', "content/a.md": ""})
    assert detect(tmp_path).generator == "hugo"
    other = tmp_path / "other"
    _write(other, {"config.toml": '[tool]\nname = "x"\n', "content/a.md": ""})
    assert detect(other).generator == "github"


def test_hugo_module_mounts(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": """
[[module.mounts]]
source = "docs"
target = "content"
lang = "en"
[[module.mounts]]
source = "assets/images"
target = "static/images"
[[module.mounts]]
source = "public-files"
target = "static"
""",
            "docs/a.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.content_dirs == ("docs",)
    assert site.language_dirs == {"en": "docs"}
    assert site.static_dirs == ("public-files",)
    assert site.static_mounts == (("assets/images", "/images"),)


def test_hugo_json_and_static_dir_list(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"hugo.json": json.dumps({"staticDir": ["static", "assets/static"]}), "content/a.md": ""},
    )
    site = detect(tmp_path)
    assert site.static_dirs == ("static", "assets/static")


def test_old_ascii_only_setting(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": "[markup.goldmark.parser]\nautoHeadingIDAsciiOnly = true\n",
            "content/a.md": "",
        },
    )
    assert detect(tmp_path).heading_options == {"id_type": "github-ascii"}


# --- malformed configuration never raises ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("hugo.toml", 'baseURL = "x"\ncontentDir = \n', 2),
        ("hugo.yaml", "baseURL: x\nlanguages: [\n  - a\n  b: c\n", 3),
        ("hugo.json", '{"baseURL": "x",\n "a": }', 2),
    ],
)
def test_malformed_hugo_config_falls_back(tmp_path: Path, name: str, text: str, line: int) -> None:
    _write(tmp_path, {name: text, "content/a.md": ""})
    site = detect(tmp_path)
    assert site.generator == "hugo"
    assert site.content_dirs == ("content",)
    [warning] = site.warnings
    assert warning.path == name and warning.line == line


def test_config_that_is_not_a_table(tmp_path: Path) -> None:
    _write(tmp_path, {"hugo.yaml": "- just\n- a list\n", "content/a.md": ""})
    site = detect(tmp_path)
    assert site.content_dirs == ("content",)
    assert "not a table" in site.warnings[0].message


def test_malformed_config_toml_is_reported_once(tmp_path: Path) -> None:
    _write(tmp_path, {"config.toml": "base_url = \n", "content/a.md": ""})
    site = detect(tmp_path)
    assert site.generator == "github"
    assert [(w.path, w.line) for w in site.warnings] == [("config.toml", 1)]


def test_bad_dendron_yml(tmp_path: Path) -> None:
    _write(tmp_path, {"dendron.yml": "workspace: [unclosed\n"})
    site = detect(tmp_path)
    assert site.generator == "dendron" and site.content_dirs == (".",)
    assert site.warnings and site.warnings[0].path == "dendron.yml"


def test_unreadable_bytes(tmp_path: Path) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "hugo.toml").write_bytes(b"\xff\xfe\x00bad")
    site = detect(tmp_path)
    assert site.generator == "hugo" and site.warnings


# --- other generators ---------------------------------------------------------------------


def test_zola(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "config.toml": 'base_url = "https://x.org/blog"\ncompile_sass = false\n'
            '[slugify]\nanchors = "safe"\n[markdown]\n',
            "content/_index.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.generator == "zola"
    assert site.content_dirs == ("content",) and site.static_dirs == ("static",)
    assert site.heading_flavour == "zola" and site.heading_options == {"strategy": "safe"}
    assert site.base_path == "/blog/"


def test_zola_needs_content(tmp_path: Path) -> None:
    _write(tmp_path, {"config.toml": 'base_url = "/"\n[extra]\n'})
    assert detect(tmp_path).generator == "github"


def test_dendron(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "dendron.yml": "version: 5\nworkspace:\n  vaults:\n    - fsPath: notes\n"
            "    - fsPath: missing\n",
            "notes/root.md": "",
        },
    )
    site = detect(tmp_path)
    assert site.generator == "dendron" and site.label_first
    assert site.content_dirs == ("notes",) and site.heading_flavour == "github"


def test_obsidian_quartz_jekyll_github(tmp_path: Path) -> None:
    vault = _write(tmp_path / "vault", {".obsidian/app.json": "{}", "a.md": ""})
    assert detect(vault).generator == "obsidian"
    assert detect(vault).heading_flavour == "obsidian"
    quartz = _write(
        tmp_path / "quartz",
        {
            "quartz.config.ts": "export default {}",
            "content/.obsidian/app.json": "{}",
            "content/index.md": "",
        },
    )
    assert detect(quartz).generator == "quartz"
    assert detect(quartz).content_dirs == ("content",)
    jekyll = _write(tmp_path / "jekyll", {"_config.yml": "permalink: pretty\nbaseurl: /blog\n"})
    site = detect(jekyll)
    assert site.generator == "jekyll" and site.pretty_urls and site.base_path == "/blog/"
    plain = _write(tmp_path / "plain", {"README.md": ""})
    assert detect(plain).generator == "github"


def test_hugo_wins_over_a_stray_obsidian_folder(tmp_path: Path) -> None:
    _write(tmp_path, {"hugo.toml": "", ".obsidian/app.json": "{}", "content/a.md": ""})
    assert detect(tmp_path).generator == "hugo"


def test_override(tmp_path: Path) -> None:
    _write(tmp_path, {"README.md": ""})
    site = detect(tmp_path, override="hugo")
    assert site.generator == "hugo" and site.content_dirs == ("content",)
    assert site.warnings  # no content/ folder: said, not raised
    assert detect(tmp_path, override="Obsidian").generator == "obsidian"
    with pytest.raises(ValueError):
        detect(tmp_path, override="vuepress")


def test_every_generator_has_a_known_heading_flavour() -> None:
    assert set(HEADING_FLAVOURS) == set(GENERATORS)
    assert set(HEADING_FLAVOURS.values()) <= set(FLAVOURS)


# --- the fixture sites ---------------------------------------------------------------------------

FIXTURE_GENERATORS = {
    "hugo": "hugo",
    "zola": "zola",
    "obsidian": "obsidian",
    "dendron": "dendron",
    "github": "github",
    "d2lbook": "github",
}


@pytest.mark.parametrize("name", sorted(FIXTURE_GENERATORS))
def test_fixture_sites_detected(name: str) -> None:
    site = detect(SITES / name)
    assert isinstance(site, Site)
    assert site.generator == FIXTURE_GENERATORS[name]
    assert site.warnings == ()
    expected = json.loads((SITES / name / "expected.json").read_text(encoding="utf-8"))
    assert expected["generator"] == site.generator
    assert list(site.content_dirs) == expected["content_dirs"]
