"""The Low attacks of issue 30, each planted or provoked; every test fails on the code
before its fix (see docs/guide/reliability.md for the promise each one holds)."""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

NOTE = "---\ntitle: Race\nstatus: todo\n---\n# Race\n\nsave 0\n"


# -- leftovers of a killed writer ------------------------------------------------------------


def test_a_fresh_temporary_file_of_a_dead_process_is_removed(make_vault, run) -> None:
    """A writer killed a moment ago: its temporary file is not kept for being young."""
    root = make_vault({"a.md": NOTE})
    dead = root / ".a.md.studykb-999999999-0badf00d.tmp"  # no such process
    dead.write_text("leftover", encoding="utf-8")  # written now: well under a second old
    ours = root / f".a.md.studykb-{os.getpid()}-0badf00d.tmp"  # a live process's: kept
    ours.write_text("being written", encoding="utf-8")
    assert run("check", vault=root).exit_code == 0
    assert not dead.exists()
    assert ours.exists()


# -- the web view -------------------------------------------------------------------------------


@pytest.fixture
def web(make_vault) -> Iterator[tuple[Any, Path]]:
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from studykb.api import KnowledgeBase
    from studykb.web.app import create_app

    root = make_vault(
        {
            "a.md": NOTE,
            "ro.md": NOTE.replace("Race", "Read only"),
            "new\nline.md": "# Odd <b>name</b>\n\nalpha words here\n",
        }
    )
    kb = KnowledgeBase.open(root)
    kb.refresh()
    app = create_app(kb, refresh=True, token="t0ken")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client, root
    kb.close()


@pytest.mark.parametrize(
    "path",
    [
        "/static//dev/vendor/axe.min.js",
        "/static/./dev/vendor/axe.min.js",
        "/static///dev/graph-demo.html",
        "/static/dev/graph-demo.html",
    ],
)
def test_development_files_are_never_served(web, path: str) -> None:
    client, _root = web
    assert (Path(__file__).parent.parent / "src/studykb/web/static/dev/graph-demo.html").exists()
    assert client.get(path).status_code == 404
    assert client.get("/static/studykb.css").status_code == 200


def test_a_refused_web_mark_is_a_conflict(web) -> None:
    client, root = web
    (root / "ro.md").chmod(0o444)
    before = (root / "ro.md").read_bytes()
    answer = client.post(
        "/api/mark",
        content=json.dumps({"key": "ro.md", "status": "done"}),
        headers={"Content-Type": "application/json", "X-Studykb-Token": "t0ken"},
    )
    assert answer.status_code == 409, answer.text
    assert "read-only" in answer.json()["error"]
    assert (root / "ro.md").read_bytes() == before
    gone = client.post(
        "/api/mark",
        content=json.dumps({"key": "nothing.md", "status": "done"}),
        headers={"Content-Type": "application/json", "X-Studykb-Token": "t0ken"},
    )
    assert gone.status_code == 404  # no such document stays "not found"


# -- a running watch -----------------------------------------------------------------------------


def test_arguments_that_are_not_utf8_are_never_sent_to_a_watch(
    make_vault, open_vault, monkeypatch
) -> None:
    from studykb.cli.served import command_server
    from studykb.cli.served import servable as served
    from studykb.editor import client

    monkeypatch.delenv("STUDYKB_LOCAL", raising=False)
    root = make_vault({"a.md": "# A\n"})
    vault = open_vault(root)
    server = command_server(vault.config.state_dir, lambda: vault, threading.Lock())
    assert server.start()
    try:
        for argv in (["show", "\udcb3"], ["search", "\udcb3|vS*"]):
            code = client.forward(["--vault", str(root), *argv])
            assert code is None, argv  # run here, where it is bad usage (exit 2)
            assert not served(["--vault", str(root), *argv])  # and a server would refuse it
    finally:
        server.stop()
