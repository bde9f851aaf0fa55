"""Every example in a command's ``--help`` works on the bundled vault as written: it
names documents that exist, with options the command takes."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from studykb.cli.app import cli, prepare
from studykb.launch import COMMANDS

#: Commands that run until stopped, or start a server: their examples are not run.
LONG_RUNNING = frozenset({"serve", "watch", "lsp"})
#: Commands that write into the vault: run on a copy of their own.
WRITING = frozenset({"mark", "mv", "new", "sidebar", "site"})


def _examples(name: str) -> list[list[str]]:
    prepare()
    help_text = cli.commands[name].help or ""
    block = help_text.split("Example:", 1)[1] if "Example:" in help_text else ""
    out = []
    for line in block.split("\n"):
        line = line.strip()
        if not line.startswith("studykb "):
            continue
        command = re.split(r"\s{2,}", line)[0]  # the text after two spaces says what it does
        argv = shlex.split(command)[1:]
        for cut, arg in enumerate(argv):
            if arg in ("|", ">", ">>"):  # the rest is the shell's
                argv = argv[:cut]
                break
        while argv[:1] == ["--vault"]:
            argv = argv[2:]
        out.append(argv)
    return out


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - LONG_RUNNING))
def test_every_help_example_runs_on_the_bundled_vault(
    run, bundled: Path, tmp_path: Path, name: str
) -> None:
    examples = _examples(name)
    assert examples, f"{name} --help has no example"
    vault = bundled
    if name in WRITING:  # the bundled copy is shared with other tests: write in one's own
        vault = tmp_path / "vault"
        shutil.copytree(bundled, vault, ignore=shutil.ignore_patterns(".studykb"))
    for argv in examples:
        if name == "init":
            argv = [*argv, "--dry-run"] if "--dry-run" not in argv else argv
            result = run(*argv, cwd=bundled)
        else:
            result = run(*argv, vault=vault, cwd=tmp_path)
        shown = "studykb " + " ".join(argv)
        assert result.exit_code in (0, 1), f"{shown}: {result.stderr}"
        assert "No document matches" not in result.stderr, shown
        assert "No such option" not in result.stderr, shown
