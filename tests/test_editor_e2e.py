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
    out = subprocess.run([sys.executable, "-m", "studykb", "--vault", str(root), "check",
                          "--json"], capture_output=True, text=True, env=env, check=False)
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
                ("dangling-ref", 8)]
            note.write_text(typed, encoding="utf-8")  # :w
            watch.expect(r"^  new: notes/memory\.md:9: error dangling-ref "
                         r"'\[\[zero-sharding\]\]' resolves to no document")

            # the quick fix creates the note from its template
            actions = editor.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "context": {"diagnostics": found},
                "range": found[0]["range"]})
            create = next(a for a in actions if a["title"].startswith("Create"))
            since = len(editor.notifications)
            made = editor.request("workspace/executeCommand", create["command"])
            assert made["path"] == "notes/zero-sharding.md"
            editor.wait_for("textDocument/publishDiagnostics",
                            lambda p: p["uri"] == uri and p["diagnostics"] == [], since=since)
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
            editor.wait_for("textDocument/publishDiagnostics",
                            lambda p: p["uri"] == uri and p["version"] == 3
                            and p["diagnostics"] == [], since=since)
            watch.expect(r"^\[[\d:]+\] (added notes/zero-redundancy\.md|"
                         r"removed notes/zero-sharding\.md|modified notes/memory\.md)$")
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
    for line in ("added notes/zero-sharding.md", "added notes/zero-redundancy.md",
                 "removed notes/zero-sharding.md", "modified notes/memory.md"):
        assert line in out, out
    assert "Traceback" not in err
