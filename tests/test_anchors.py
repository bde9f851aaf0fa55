"""``[[note#heading]]`` naming a heading the note does not have is a ``dangling-anchor``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from studykb.cli.app import cli, prepare
from studykb.vault import heading_slug

prepare()


def test_heading_slug() -> None:
    assert heading_slug("Sub Part") == "sub-part"
    assert heading_slug("  KV Cache: why? ") == "kv-cache-why"
    assert heading_slug("显存 层次") == "显存-层次"


def test_missing_heading_is_a_warning_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A\n\nsee [[b#Nope]] and [[b#Sub Part]]\nand [b](b.md#sub-part) and [[b#^block]]\n",
        encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\n## Sub Part\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path), "check", "--json"])
    assert result.exit_code == 0  # a warning, not an error
    problems = json.loads(result.output)["problems"]
    assert [(p["path"], p["line"], p["code"], p["severity"]) for p in problems] == [
        ("a.md", 3, "dangling-anchor", "warning")]
    # the heading appears: the warning goes away
    (tmp_path / "b.md").write_text("# B\n\n## Sub Part\n\n## Nope\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path), "check", "--json"])
    assert json.loads(result.output)["problems"] == []


def test_anchor_follows_a_reference_that_moves_to_another_target(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "a.md").write_text("see [[Target#Deep]]\n", encoding="utf-8")
    (tmp_path / "x" / "one.md").write_text("---\ntitle: Target\n---\n## Shallow\n",
                                           encoding="utf-8")
    runner = CliRunner()
    out = json.loads(runner.invoke(cli, ["--vault", str(tmp_path), "check", "--json"]).output)
    assert [p["code"] for p in out["problems"]] == ["dangling-anchor"]
    # an id beats a title: the reference now resolves to target.md, which has the heading
    (tmp_path / "target.md").write_text("## Deep\n", encoding="utf-8")
    out = json.loads(runner.invoke(cli, ["--vault", str(tmp_path), "check", "--json"]).output)
    assert out["problems"] == []


def test_heading_slug_keeps_exactly_letters_digits_spaces_dashes_underscores() -> None:
    """Every Basic Multilingual Plane character is kept or dropped after case folding
    as ``str.isalnum`` says (plus ``-``, ``_`` and spaces)."""
    from studykb.vault.checks import heading_slug

    def by_definition(text: str) -> str:
        kept = "".join(c for c in text.casefold().strip() if c.isalnum() or c in " -_")
        return "-".join(kept.split())

    chars = [chr(c) for c in range(0x21, 0x10000) if not 0xD800 <= c < 0xE000]
    assert [heading_slug(f"a {c}b") for c in chars] == [by_definition(f"a {c}b") for c in chars]
    assert heading_slug("  Flash Attention — 2 (IO-aware) ") == "flash-attention-2-io-aware"
    assert heading_slug("显存 管理") == "显存-管理"
