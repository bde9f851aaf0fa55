"""Shared steps of the tests that build a real site with a sidebar recipe (Hugo, Jekyll):
write the site, write studykb's sidebar data file into it, run the generator, and read
what it made."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

from click.testing import CliRunner

from studykb.cli.app import cli, prepare

GUIDE = Path(__file__).parents[1] / "docs" / "guide" / "sites.md"
PARTS = ("related", "before", "leads_to")


def recipe(name: str) -> str:
    """The code block after ``<!-- recipe: NAME -->`` in the sites guide."""
    text = GUIDE.read_text(encoding="utf-8")
    after = text.split(f"<!-- recipe: {name} -->", 1)[1]
    found = re.search(r"```[\w-]*\n(.*?)\n```", after, re.S)
    assert found is not None
    return found.group(1) + "\n"


def build(site: Path, files: dict[str, str], data_file: str, command: list[str]) -> None:
    """Write ``files`` into ``site``, then ``studykb sidebar --format json -o DATA_FILE``
    (its folders do not exist yet), then run the generator's ``command``."""
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    prepare()
    result = CliRunner().invoke(
        cli, ["--vault", str(site), "sidebar", "--format", "json", "-o", str(site / data_file)]
    )
    assert result.exit_code == 0, result.output
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def generated_page(public: Path, href: str, base: str = "/sub/") -> Path | None:
    """The generated file an href of the site (below ``base``) leads to, or None."""
    assert href.startswith(base), href
    rel = unquote(href[len(base) :].split("#", 1)[0])
    target = public / rel
    if rel.endswith("/") or rel == "":
        target = target / "index.html"
    return target if target.is_file() else None


def rendered_links(public: Path) -> list[str]:
    """The href of every sidebar link in the generated pages."""
    links = []
    for page in sorted(public.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        links.extend(re.findall(r'<a class="studykb-link" href="([^"]+)"', html))
    return links


def items(data: dict) -> int:
    """How many links the sidebar data file holds."""
    return sum(len(sidebar[part]) for sidebar in data.values() for part in PARTS)
