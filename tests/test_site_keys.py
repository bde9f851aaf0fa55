"""studykb's own front-matter keys in a Hugo or Zola site: ``link`` and ``names``.

Hugo reads ``url`` as the page's URL (and fails on one with ``http://``) and ``aliases`` as
old URLs to redirect from, so there studykb writes and reads ``link``/``names`` and warns
(``site-clash``) of the notes that would break the build. Outside such sites ``url`` and
``aliases`` keep studykb's meaning, and ``link``/``names`` are read too.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.vault import Vault

HUGO = shutil.which("hugo")
HUGO_TOML = 'baseURL = "https://x.org/"\ntitle = "T"\ndisableKinds = ["RSS", "sitemap"]\n'


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


def _vault(root: Path) -> Vault:
    vault = Vault.open(root)
    vault.refresh()
    return vault


def test_new_entry_in_a_hugo_site_writes_link_and_hugo_builds(tmp_path: Path) -> None:
    _write(tmp_path, {"hugo.toml": HUGO_TOML, "content/_index.md": "---\ntitle: Home\n---\n"})
    prepare()
    result = CliRunner().invoke(
        cli,
        ["--vault", str(tmp_path), "new", "entry", "GPipe", "--url", "https://arxiv.org/abs/1811"],
    )
    assert result.exit_code == 0, result.output
    made = Path(result.output.strip().splitlines()[-1].split()[-1])
    rel = made.relative_to(tmp_path).as_posix()
    assert rel == "content/notes/entries/gpipe.md"
    text = (tmp_path / rel).read_text("utf-8")
    assert 'link: "https://arxiv.org/abs/1811"' in text and "\nurl:" not in text
    vault = _vault(tmp_path)
    doc = vault.documents()[rel]
    assert doc.url == "https://arxiv.org/abs/1811" and doc.type == "entry"
    vault.close()
    if HUGO is None:
        pytest.skip("the hugo binary is not installed (Debian: apt-get install hugo)")
    done = subprocess.run(
        [HUGO, "-s", str(tmp_path), "-d", str(tmp_path / "public")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hugo_keys_keep_hugos_meaning_and_clashes_are_said(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": HUGO_TOML,
            "content/pp.md": "---\ntitle: Pipeline\nnames: [流水线并行]\n"
            "aliases: [/old/pp/]\nlink: https://a.org/pp\n---\n",
            "content/bad.md": "---\ntitle: Bad\nurl: https://b.org/x\naliases: [张量并行]\n---\n"
            "[[流水线并行]] and [old](/old/pp/)\n",
        },
    )
    vault = _vault(tmp_path)
    docs = vault.documents()
    assert docs["content/pp.md"].aliases == ("流水线并行",)
    assert docs["content/pp.md"].url == "https://a.org/pp"
    assert docs["content/bad.md"].url is None and docs["content/bad.md"].aliases == ()
    targets = {link.ref.text: link.target for link in vault.links()}
    assert targets["[[流水线并行]]"] == "content/pp.md"
    assert targets["/old/pp/"] == "content/pp.md"  # an alias is an old URL that resolves
    clashes = [(p.path, p.line, p.code) for p in vault.problems() if p.code == "site-clash"]
    assert clashes == [("content/bad.md", 3, "site-clash"), ("content/bad.md", 4, "site-clash")]
    vault.close()


def test_outside_hugo_url_and_aliases_are_studykbs_and_link_names_too(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "notes/a.md": "---\ntitle: A\nurl: https://a.org/\naliases: [甲]\n---\n",
            "notes/b.md": "---\ntitle: B\nlink: https://b.org/\nnames: [乙]\n---\n[[甲]] [[乙]]\n",
        },
    )
    vault = _vault(tmp_path)
    docs = vault.documents()
    assert (docs["notes/a.md"].url, docs["notes/a.md"].aliases) == ("https://a.org/", ("甲",))
    assert (docs["notes/b.md"].url, docs["notes/b.md"].aliases) == ("https://b.org/", ("乙",))
    assert not [p for p in vault.problems() if p.code in ("site-clash", "dangling-ref")]
    vault.close()


def test_hugos_own_type_is_not_a_bad_field(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "hugo.toml": HUGO_TOML,
            "content/ranking/_index.md": "---\ntitle: Ranking\ntype: ranking\n---\n",
            "content/courses/c.md": "---\ntitle: C\ntype: course\n---\n",
        },
    )
    vault = _vault(tmp_path)
    assert vault.problems() == []
    docs = vault.documents()
    assert docs["content/ranking/_index.md"].type == "note"
    assert docs["content/courses/c.md"].type == "course"
    vault.close()
