"""The documentation is held to the code: every command shows an example in its help and
has a section in the commands chapter, the site builds with ``mkdocs build --strict``,
and every link between pages of ``docs/`` leads to a page and heading that exist."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
COMMANDS_PAGE = DOCS / "guide" / "commands.md"

prepare()
COMMANDS = sorted(name for name, command in cli.commands.items() if not command.hidden)


def test_every_command_is_found() -> None:
    assert {"build", "check", "search", "before", "init"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_shows_an_example(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    block = re.search(r"^\s*Examples?:\s*\n((?:[ \t]+\S.*\n?)+)", result.output, re.M)
    assert block, f"`studykb {name} --help` has no 'Example:' block"
    assert f"studykb {name}" in block.group(1) or "studykb --vault" in block.group(1), (
        f"the Example block of `studykb {name} --help` shows no `studykb {name}` command line"
    )


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_a_section_in_the_commands_chapter(name: str) -> None:
    page = COMMANDS_PAGE.read_text(encoding="utf-8")
    sections = re.findall(r"^#{2,4} `studykb ([a-z][a-z-]*)`\s*$", page, re.M)
    assert name in sections, (
        f"`studykb {name}` has no section in {COMMANDS_PAGE.relative_to(ROOT)}: add a "
        f"'### `studykb {name}`' heading (synopsis, example, --json, exit codes) and a row "
        "in its table of commands"
    )


def test_site_builds_with_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs comes with the dev extras")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet"]
        + ["--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- links between pages ------------------------------------------------------------------

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of ``text`` outside fenced code blocks."""
    out = []
    fence = ""
    for n, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        out.append((n, line))
    return out


def _slug(text: str) -> str:
    """A heading's id as Python-Markdown's toc extension (which MkDocs uses) makes it."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    """The ids of every heading of ``page``, duplicates numbered as Python-Markdown does."""
    ids: set[str] = set()
    for _n, line in _prose_lines(page.read_text(encoding="utf-8")):
        found = HEADING.match(line)
        if not found:
            continue
        slug = _slug(found.group(2))
        while slug in ids or not slug:
            numbered = re.match(r"^(.*)_([0-9]+)$", slug)
            slug = f"{numbered.group(1)}_{int(numbered.group(2)) + 1}" if numbered else f"{slug}_1"
        ids.add(slug)
    return ids


def _links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image of ``page`` outside code."""
    out: list[tuple[int, str]] = []
    for n, line in _prose_lines(page.read_text(encoding="utf-8")):
        prose = CODE_SPAN.sub("", line)
        out.extend((n, target) for target in LINK.findall(prose))
    return out


def _broken(page: Path, docs: Path = DOCS) -> list[str]:
    """What is wrong with the internal links of ``page`` (in ``docs``), one per link."""
    wrong = []
    where = page.relative_to(docs.parent)
    for line, target in _links(page):
        if EXTERNAL.match(target) or target.startswith("//"):
            continue
        path, _, anchor = target.partition("#")
        if path:
            dest = (page.parent / path).resolve()
            if dest.is_dir():
                dest = dest / "index.md"
            if not dest.is_relative_to(docs.resolve()):
                wrong.append(f"{where}:{line}: {target} leads out of docs/ (no such page)")
                continue
            if not dest.is_file():
                wrong.append(f"{where}:{line}: {target}: no such file")
                continue
        else:
            dest = page
        if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            wrong.append(f"{where}:{line}: {target}: {dest.name} has no heading #{anchor}")
    return wrong


PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_internal_links_resolve(page: Path) -> None:
    assert _broken(page) == []


def test_the_link_checker_finds_broken_links(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\n## Two words `here`\n", encoding="utf-8")
    (docs / "guide" / "a.md").write_text(
        "# A\n\n"
        "[ok](../index.md#two-words-here) [ok](#a) [ok](https://example.com/x.md)\n"
        "[gone](missing.md) [no heading](../index.md#nope) [out](../../README.md)\n"
        "`[not a link](nowhere.md)`\n\n```\n[nor this](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    found = _broken(docs / "guide" / "a.md", docs)
    assert [m.split(": ", 1)[1] for m in found] == [
        "missing.md: no such file",
        "../index.md#nope: index.md has no heading #nope",
        "../../README.md leads out of docs/ (no such page)",
    ]


# -- what the docs say matches what the commands do (issue 28) -----------------------------


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_no_page_installs_studykb_from_pypi() -> None:
    """studykb is not on PyPI: `pip install studykb` installs nothing (or someone else's)."""
    for page in _pages():
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"pip install\s+[\"']?studykb\b(?![\w.-])", line), (
                f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
            )


def test_the_sidebar_json_is_said_to_be_keyed_by_page_path() -> None:
    help_text = _flat(CliRunner().invoke(cli, ["sidebar", "--help"]).output)
    assert "keyed by page path" in help_text
    page = COMMANDS_PAGE.read_text(encoding="utf-8")
    section = page.split("### `studykb sidebar`", 1)[1].split("\n### ", 1)[0]
    assert "keyed by id" not in section and "keyed by page path" in section


def test_lsp_help_finds_the_vault_as_the_editor_guide_says() -> None:
    said = (
        "--vault, else $STUDYKB_VAULT, else the nearest folder with studykb.toml at or "
        "above the editor's workspace folder, else the nearest one at or above the first "
        "file opened"
    )
    help_text = _flat(CliRunner().invoke(cli, ["lsp", "--help"]).output)
    guide = _flat((DOCS / "guide" / "editor.md").read_text(encoding="utf-8").replace("`", ""))
    assert said in help_text
    assert said in guide


def test_serve_ends_with_0_on_ctrl_c_as_the_commands_chapter_says(
    make_vault, run, monkeypatch
) -> None:
    from studykb.web import server

    def interrupted(self: object, sockets: object = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(server.Server, "run", interrupted)
    result = run("serve", vault=make_vault({"a.md": "# A\n"}))
    assert result.exit_code == 0 and "stopped serving" in result.stdout
    page = _flat(COMMANDS_PAGE.read_text(encoding="utf-8"))
    assert "Ctrl-C stops any command with exit 130 (`serve` and `watch`" in page
    assert "Ctrl-C stops it (exit 0)" in page.split("### `studykb serve`", 1)[1]
