"""``studykb lsp`` spoken to over stdio in a subprocess (see lsp_client.py)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from lsp_client import LspClient

DDP = """---
id: ddp
title: Distributed Data Parallel
aliases: [数据并行]
level: 2
---

# DDP

Replicates the model on every GPU and averages the gradients after each step.

## Buckets

Gradients are reduced in buckets.
"""
FSDP = """---
id: fsdp
title: FSDP
requires: [ddp]
---

Builds on [[ddp]] and on [the DDP page](ddp.md).
"""
COURSE = """---
id: cs336
title: Language Modeling from Scratch
units:
  - id: a1
    title: Basics
  - id: a2
    title: Systems
    requires: [a1]
---

# CS336
"""
FILES = {
    "notes/topics/ddp.md": DDP,
    "notes/topics/fsdp.md": FSDP,
    "courses/cs336.md": COURSE,
    "notes/x.md": "---\ntitle: Same\n---\nx\n",
    "notes/y.md": "---\ntitle: Same\n---\ny\n",
    "notes/loop-a.md": "---\nrequires: [loop-b]\n---\na\n",
    "notes/loop-b.md": "---\nrequires: [loop-a]\n---\nb\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lspvault")
    (root / "studykb.toml").write_text("")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def lsp(vault: Path):  # type: ignore[no-untyped-def]
    """One server for the module's tests that only open buffers and ask; it must leave
    with exit code 0 and no traceback."""
    client = LspClient(vault)
    client.initialize(vault)
    yield client
    assert client.close() == 0
    assert "Traceback" not in client.stderr, client.stderr


def fresh(lsp: LspClient, path: Path, text: str) -> tuple[str, list[dict]]:
    """Open ``path`` with ``text`` (a new uri each call) and return its first diagnostics."""
    since = len(lsp.notifications)
    uri = lsp.open(path, text)
    return uri, lsp.diagnostics(uri, 1, since=since)


def codes(diagnostics: list[dict]) -> list[tuple[int, str]]:
    return sorted((d["range"]["start"]["line"], d["code"]) for d in diagnostics)


def test_capabilities(lsp: LspClient) -> None:
    """What the shared server answered to ``initialize`` (its clean exit is checked when
    the module's tests are done)."""
    caps = lsp.initialized["capabilities"]
    assert "[" in caps["completionProvider"]["triggerCharacters"]
    for name in (
        "definitionProvider",
        "hoverProvider",
        "referencesProvider",
        "documentLinkProvider",
    ):
        assert caps[name]


def test_diagnostics_as_you_type(lsp: LspClient, vault: Path) -> None:
    path = vault / "notes/topics/fsdp.md"
    uri, first = fresh(lsp, path, FSDP)
    assert first == []
    text = FSDP + "\nSee [[nothing]] and [[Same]].\n😀 [[nothing]]\n"
    since = len(lsp.notifications)
    lsp.change(uri, text, 2)
    found = lsp.diagnostics(uri, 2, since=since)
    assert codes(found) == [(8, "ambiguous-ref"), (8, "dangling-ref"), (9, "dangling-ref")]
    dangling = [d for d in found if d["code"] == "dangling-ref"]
    assert dangling[0]["range"]["start"]["character"] == 4
    assert dangling[0]["range"]["end"]["character"] == 15
    assert dangling[0]["severity"] == 1
    assert dangling[1]["range"]["start"]["character"] == 3  # the emoji is 2 UTF-16 units
    assert path.read_text() == FSDP  # nothing was saved
    since = len(lsp.notifications)
    lsp.change(uri, FSDP, 3)
    assert lsp.diagnostics(uri, 3, since=since) == []


def test_half_typed_documents_never_crash(lsp: LspClient, vault: Path) -> None:
    uri, found = fresh(lsp, vault / "notes/draft.md", "---\nid: draft\ntitle: [oops\n")
    assert [d["code"] for d in found] == ["bad-front-matter"]
    for version, text in enumerate(
        [
            "---\nid: d\n",
            "See [[dd",
            "See [[",
            "[[]]",
            "---\n",
            '{"id": ',
            "+++\nid = \n",
            "\ufeff---\n---\n[[ddp",
        ],
        start=2,
    ):
        since = len(lsp.notifications)
        lsp.change(uri, text, version)
        lsp.diagnostics(uri, version, since=since)
        lsp.request("textDocument/completion", lsp.at(uri, 0, len(text.split("\n")[0])))
        lsp.request("textDocument/hover", lsp.at(uri, 0, 2))
        with pytest.raises(RuntimeError, match="-32602"):  # past the end: said, not silence
            lsp.request("textDocument/definition", lsp.at(uri, 5, 50))
    assert lsp.proc.poll() is None


def test_duplicate_id_and_loops(lsp: LspClient, vault: Path) -> None:
    _uri, found = fresh(lsp, vault / "notes/new-note.md", "---\nid: DDP\n---\nnew\n")
    assert codes(found) == [(1, "duplicate-id")]
    assert "notes/topics/ddp.md" in found[0]["message"]
    _uri, found = fresh(lsp, vault / "notes/loop-a.md", (vault / "notes/loop-a.md").read_text())
    assert "cycle" in [d["code"] for d in found]


def labels(result: dict | None) -> list[str]:
    assert result is not None
    return [item["label"] for item in result["items"]]


def test_completion_in_wikilinks(lsp: LspClient, vault: Path) -> None:
    uri, _ = fresh(lsp, vault / "notes/c1.md", "See [[dist\nSee [[数据\nSee [[ddp#bu]]\n")
    result = lsp.request("textDocument/completion", lsp.at(uri, 0, 10))
    item = result["items"][0]
    assert item["label"] == "Distributed Data Parallel"
    assert item["detail"].startswith("Distributed Data Parallel (topic)")
    assert item["textEdit"]["newText"] == "ddp]]"
    assert item["textEdit"]["range"]["start"] == {"line": 0, "character": 6}
    result = lsp.request("textDocument/completion", lsp.at(uri, 1, 8))
    assert labels(result)[0] == "数据并行"
    assert result["items"][0]["textEdit"]["newText"] == "ddp]]"
    result = lsp.request("textDocument/completion", lsp.at(uri, 2, 12))
    assert labels(result) == ["DDP", "Buckets"]
    assert result["items"][1]["textEdit"]["newText"] == "Buckets"  # ]] is there already
    assert lsp.request("textDocument/completion", lsp.at(uri, 0, 2)) is None  # not in a link


def test_completion_in_front_matter(lsp: LspClient, vault: Path) -> None:
    text = (
        "---\nid: c2\ntitle: dd\nrequires: [fsdp, dd\nrefs:\n  - \n"
        "course: cs\nrelated:\n  - {ref: lang, reason: dd}\n---\n"
    )
    uri, _ = fresh(lsp, vault / "notes/c2.md", text)
    assert labels(lsp.request("textDocument/completion", lsp.at(uri, 3, 19)))[0] == "ddp"
    assert lsp.request("textDocument/completion", lsp.at(uri, 2, 9)) is None  # title
    assert len(labels(lsp.request("textDocument/completion", lsp.at(uri, 5, 4)))) > 5
    assert labels(lsp.request("textDocument/completion", lsp.at(uri, 6, 10)))[0] == "cs336"
    found = lsp.request("textDocument/completion", lsp.at(uri, 8, 15))
    assert "Language Modeling from Scratch" in labels(found)
    assert lsp.request("textDocument/completion", lsp.at(uri, 8, 29)) is None  # a reason


def target(result: dict | list | None) -> tuple[str, int]:
    assert result is not None
    location = result[0] if isinstance(result, list) else result
    return location["uri"].rsplit("/", 1)[-1], location["range"]["start"]["line"]


def test_definition(lsp: LspClient, vault: Path) -> None:
    text = FSDP + "Units: [[cs336#a2]], [[ddp#Buckets]]\n"
    uri, _ = fresh(lsp, vault / "notes/topics/fsdp.md", text)
    assert target(lsp.request("textDocument/definition", lsp.at(uri, 3, 12))) == ("ddp.md", 0)
    assert target(lsp.request("textDocument/definition", lsp.at(uri, 6, 14))) == ("ddp.md", 0)
    assert target(lsp.request("textDocument/definition", lsp.at(uri, 6, 42))) == ("ddp.md", 0)
    assert target(lsp.request("textDocument/definition", lsp.at(uri, 7, 10))) == ("cs336.md", 6)
    assert target(lsp.request("textDocument/definition", lsp.at(uri, 7, 25))) == ("ddp.md", 11)
    assert lsp.request("textDocument/definition", lsp.at(uri, 6, 2)) is None


def test_hover(lsp: LspClient, vault: Path) -> None:
    uri, _ = fresh(lsp, vault / "notes/topics/fsdp.md", FSDP + "[[nothing]]\n")
    hover = lsp.request("textDocument/hover", lsp.at(uri, 6, 14))
    value = hover["contents"]["value"]
    assert "**Distributed Data Parallel**" in value
    assert "topic" in value and "level 2" in value
    assert "Replicates the model on every GPU" in value
    dangling = lsp.request("textDocument/hover", lsp.at(uri, 7, 3))
    assert "no document" in dangling["contents"]["value"]


def test_references_are_backlinks(lsp: LspClient, vault: Path) -> None:
    uri, _ = fresh(lsp, vault / "notes/topics/ddp.md", DDP)
    params = {**lsp.at(uri, 7, 0), "context": {"includeDeclaration": True}}
    found = sorted(
        target(loc) + (loc["range"]["start"]["character"],)
        for loc in lsp.request("textDocument/references", params)
    )
    assert found == [("fsdp.md", 3, 11), ("fsdp.md", 6, 10), ("fsdp.md", 6, 40)]


def test_document_links(lsp: LspClient, vault: Path) -> None:
    uri, _ = fresh(lsp, vault / "notes/topics/fsdp.md", FSDP + "[[cs336#a1]] [[nothing]]\n")
    links = lsp.request("textDocument/documentLink", {"textDocument": {"uri": uri}})
    got = sorted((d["range"]["start"]["line"], d["target"].rsplit("/", 1)[-1]) for d in links)
    assert got == [(3, "ddp.md"), (6, "ddp.md"), (6, "ddp.md"), (7, "cs336.md#L5")]


def test_saved_changes_elsewhere_update_open_buffers(vault: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    with LspClient(root) as client:
        client.initialize(root)
        uri, found = fresh(client, root / "notes/n.md", "[[brand-new]]\n")
        assert codes(found) == [(0, "dangling-ref")]
        since = len(client.notifications)
        (root / "notes/brand-new.md").write_text("# Brand new\n")
        client.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and not p["diagnostics"],
            since=since,
        )


def test_deleted_file_and_vanished_vault(vault: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    with LspClient(root) as client:
        client.initialize(root)
        uri, _ = fresh(client, root / "notes/topics/fsdp.md", FSDP)
        since = len(client.notifications)
        (root / "notes/topics/fsdp.md").unlink()
        message = client.wait_for(
            "window/showMessage", lambda p: "deleted" in p["message"], since=since
        )
        assert "notes/topics/fsdp.md" in message["params"]["message"]
        hover = client.request("textDocument/hover", client.at(uri, 6, 14))
        assert "Distributed Data Parallel" in hover["contents"]["value"]

        since = len(client.notifications)
        shutil.rmtree(root)
        client.wait_for("window/showMessage", lambda p: "disappeared" in p["message"], since=since)
        time.sleep(0.2)
        client.change(uri, FSDP + "[[ddp]] [[nope]]\n", 2)
        assert codes(client.diagnostics(uri, 2)) == [(7, "dangling-ref")]
        result = client.request("textDocument/completion", client.at(uri, 7, 4))
        assert result is None or isinstance(result, dict)
    assert client.proc.returncode == 0
    assert "Traceback" not in client.stderr, client.stderr


def test_documents_outside_the_vault(lsp: LspClient, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    _uri, found = fresh(lsp, outside, "[[ddp]] [[nowhere]]\n")
    assert codes(found) == [(0, "dangling-ref")]
    since = len(lsp.notifications)
    lsp.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": "untitled:Untitled-1",
                "languageId": "markdown",
                "version": 1,
                "text": "[[ddp]]",
            }
        },
    )
    assert lsp.diagnostics("untitled:Untitled-1", 1, since=since) == []


def test_name_index_ranking() -> None:
    from studykb.model import Document
    from studykb.vault.names import NameIndex, complete

    docs = {
        d.key: d
        for d in (
            Document("t/fsdp2.md", "t/fsdp2.md", "fsdp2", "FSDP2 tutorial", "topic"),
            Document(
                "t/ddp.md",
                "t/ddp.md",
                "ddp",
                "Distributed Data Parallel",
                "topic",
                aliases=("数据并行",),
            ),
            Document("n/ddp.md", "n/ddp.md", "ddp", "My DDP notes", "note"),
            Document("c/cs336.md", "c/cs336.md", "cs336", "Language Models", "course"),
            Document("c/cs336.md#a1", "c/cs336.md", "cs336#a1", "Data", "unit"),
        )
    }
    index = NameIndex(docs)

    def labels(prefix: str, **kw: object) -> list[str]:
        return [c.label for c in complete(index, prefix, **kw)[0]]  # type: ignore[arg-type]

    assert labels("fsdp")[0] == "fsdp2"
    assert labels("data") == ["Data", "Distributed Data Parallel"]  # prefix, then word start
    assert labels("并行") == ["数据并行"]
    assert labels("fsdptut") == ["FSDP2 tutorial"]  # letters in order
    assert labels("", prefer="course")[0] == "cs336"
    assert labels("ddp", here="t/ddp.md") == ["ddp", "My DDP notes"]
    ambiguous = {c.key: c.insert for c in complete(index, "ddp")[0]}
    assert ambiguous == {"t/ddp.md": "t/ddp", "n/ddp.md": "n/ddp"}  # ids clash: paths
    found, cut = complete(index, "", limit=2)
    assert len(found) == 2 and cut


def test_incremental_snapshot_matches_a_full_one(make_vault, open_vault) -> None:
    from studykb.vault.buffers import BufferView as Snapshot

    vault_dir = make_vault(
        {
            "notes/a.md": "---\nid: a\naliases: [Alpha]\n---\n# A\n",
            "notes/b.md": "---\nid: b\n---\n# B\n",
            "courses/c.md": "---\nid: c\nunits:\n  - id: u1\n    title: One\n---\n# C\n",
            "notes/entries/e.md": "---\nid: e\nurl: https://example.com/e\n---\nE\n",
        }
    )
    vault = open_vault(vault_dir)
    snap = Snapshot.build(vault.config, vault.documents(), vault.problems())

    def step(change) -> None:  # type: ignore[no-untyped-def]
        nonlocal snap
        change()
        stats = vault.refresh()
        snap = snap.updated(vault, stats)
        full = Snapshot.build(vault.config, vault.documents(), vault.problems())
        assert snap.docs == full.docs
        assert {k: sorted(v) for k, v in snap.names.table.items()} == {
            k: sorted(v) for k, v in full.names.table.items()
        }
        assert {k: sorted(v) for k, v in snap.names.urls.items() if v} == {
            k: sorted(v) for k, v in full.names.urls.items()
        }
        assert snap.names.paths == full.names.paths and snap.names.types == full.names.types
        assert sorted(map(repr, snap.index.cands)) == sorted(map(repr, full.index.cands))
        assert snap.index.blob == full.index.blob

    step(lambda: (vault_dir / "notes/b.md").write_text("---\nid: a\n---\n# B is A\n"))
    step(
        lambda: (vault_dir / "courses/c.md").write_text(
            "---\nid: c\nunits:\n  - id: u2\n    title: Two\n---\n# C\n"
        )
    )
    step(lambda: (vault_dir / "notes/entries/e.md").unlink())
    step(lambda: (vault_dir / "notes/new.md").write_text("---\naliases: [Alpha, Nu]\n---\nN\n"))
    step(lambda: (vault_dir / "notes/b.md").write_text("---\nid: b\n---\n# B again\n"))


PARITY = {
    "notes/a.md": "---\nid: a\n---\n# A\n\n## Real heading\n\n[[zero-shardin]] "
    "[[b#No Such Heading]] [[b#Real]] [[Same]] [[a#Real heading]] [[a#nope]]\n"
    "[see](b.md#real) [gone](nowhere.md) [[cs-336#u1]]\n",
    "notes/zero-sharding.md": "# Zero\n",
    "notes/b.md": "---\nid: b\n---\n# B\n\n## Real\n",
    "notes/x.md": "---\ntitle: Same\n---\nx\n",
    "notes/y.md": "---\ntitle: Same\n---\ny\n",
    "notes/dup1.md": "---\nid: dup\n---\nd\n",
    "notes/dup2.md": "---\nid: dup\n---\nd\n",
    "notes/bad.md": "---\ntitle: [oops\n---\n",
    "notes/l1.md": "---\nrequires: [l2]\n---\nl\n",
    "notes/l2.md": "---\nrequires: [l1, {ref: zero-sharing, reason: typo}]\n---\nl\n",
    "notes/lvl.md": "---\nlevel: 9\nstatus: maybe\n---\nx\n",
    "courses/cs336.md": "---\nunits:\n  - id: u1\n    title: U\n    requires: [u9]\n---\n"
    "[[cs336#u1]] [[cs336#u9]]\n",
}


def test_diagnostics_are_those_of_check(make_vault, run) -> None:  # type: ignore[no-untyped-def]
    """Every file opened as saved shows exactly the problems `check` reports for it."""
    # configured severities apply alike to reference problems and to the parser's own
    config = (
        '[severity]\nambiguous-ref = "error"\nbad-field = "error"\nbad-front-matter = "ignore"\n'
    )
    root = make_vault(PARITY, config=config)
    checked = json.loads(run("check", "--json", vault=root).stdout)["problems"]
    assert {p["severity"] for p in checked if p["code"] == "bad-field"} == {"error"}
    assert not any(p["code"] == "bad-front-matter" for p in checked)
    expected: dict[str, set[tuple[int, str, str, int]]] = {rel: set() for rel in PARITY}
    for p in checked:
        severity = 1 if p["severity"] == "error" else 2
        expected[p["path"]].add((max(p["line"] - 1, 0), p["code"], p["message"], severity))
    assert any("did you mean 'zero-sharding'" in p["message"] for p in checked)
    assert any(
        "did you mean 'zero-sharding'" in p["message"] and p["path"] == "notes/l2.md"
        for p in checked
    )
    assert any(
        p["code"] == "dangling-anchor" and "No Such Heading" in p["message"] for p in checked
    )
    with LspClient(root) as client:
        client.initialize(root)
        for rel in PARITY:
            _uri, found = fresh(client, root / rel, PARITY[rel])
            got = {
                (d["range"]["start"]["line"], d["code"], d["message"], d["severity"]) for d in found
            }
            assert got == expected[rel], rel


def test_completion_of_units_tags_and_topics(lsp: LspClient, vault: Path) -> None:
    uri, _ = fresh(lsp, vault / "notes/c3.md", "---\ntags: [ds, \ncovers: [f\n---\nSee [[cs336#\n")
    units = lsp.request("textDocument/completion", lsp.at(uri, 4, 12))
    assert labels(units)[:2] == ["a1", "a2"]  # the course's units, in order, first
    assert units["items"][1]["textEdit"]["newText"] == "a2]]"
    assert "Systems" in units["items"][1]["detail"]
    tags = labels(lsp.request("textDocument/completion", lsp.at(uri, 1, 11)))
    assert tags[:2] == ["ddp", "fsdp"]  # topics first
    covers = labels(lsp.request("textDocument/completion", lsp.at(uri, 2, 10)))
    assert covers == ["fsdp"]


def test_workspace_symbols_find_notes_by_title_or_alias(lsp: LspClient, vault: Path) -> None:
    found = lsp.request("workspace/symbol", {"query": "数据"})
    assert found[0]["name"] == "数据并行 → Distributed Data Parallel"
    assert found[0]["location"]["uri"].endswith("notes/topics/ddp.md")
    found = lsp.request("workspace/symbol", {"query": "language model"})
    assert found[0]["name"] == "Language Modeling from Scratch"


def apply_edit(root: Path, edit: dict) -> None:
    """Apply a workspace edit to the files as an editor would, then save them."""
    from urllib.parse import unquote, urlparse

    def path(uri: str) -> Path:
        return Path(unquote(urlparse(uri).path))

    for change in edit.get("documentChanges") or []:
        if change.get("kind") == "rename":
            path(change["oldUri"]).rename(path(change["newUri"]))
            continue
        file = path(change["textDocument"]["uri"])
        lines = file.read_text(encoding="utf-8").split("\n")
        for e in sorted(
            change["edits"],
            key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
            reverse=True,
        ):
            start, end = e["range"]["start"], e["range"]["end"]
            assert start["line"] == end["line"]
            line = lines[start["line"]]
            lines[start["line"]] = (
                line[: start["character"]] + e["newText"] + line[end["character"] :]
            )
        file.write_text("\n".join(lines), encoding="utf-8")
    for uri, edits in (edit.get("changes") or {}).items():
        apply_edit(root, {"documentChanges": [{"textDocument": {"uri": uri}, "edits": edits}]})


def test_code_actions_fix_a_dangling_name(vault: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    with LspClient(root) as client:
        client.initialize(root)
        text = "---\nid: n\n---\nSee [[fdsp]] and [[ddp]] and [[tensor parallelism]].\n"
        uri, found = fresh(client, root / "notes/n.md", text)
        assert [d["message"] for d in found][0].endswith("(did you mean 'fsdp'?)")
        params = {
            "textDocument": {"uri": uri},
            "context": {"diagnostics": found},
            "range": {"start": {"line": 3, "character": 7}, "end": {"line": 3, "character": 7}},
        }
        acts = client.request("textDocument/codeAction", params)
        assert [a["title"] for a in acts] == ["Replace with 'fsdp'", "Create note 'fdsp'"]
        edit = acts[0]["edit"]["changes"][uri][0]
        assert edit["newText"] == "fsdp" and edit["range"]["start"]["character"] == 6
        params["range"] = {
            "start": {"line": 3, "character": 20},
            "end": {"line": 3, "character": 20},
        }
        acts = client.request("textDocument/codeAction", params)
        assert [a["title"] for a in acts] == ["Add 'ddp' to requires"]
        insert = acts[0]["edit"]["changes"][uri][0]
        assert insert["range"]["start"] == {"line": 2, "character": 0}  # before the fence
        assert insert["newText"] == "requires: [ddp]\n"
        params["range"] = {
            "start": {"line": 3, "character": 35},
            "end": {"line": 3, "character": 35},
        }
        create = client.request("textDocument/codeAction", params)[0]
        assert create["title"] == "Create note 'tensor parallelism'"
        since = len(client.notifications)
        made = client.request("workspace/executeCommand", create["command"])
        assert made["path"] == "notes/tensor-parallelism.md"
        assert (root / made["path"]).read_text().startswith("---\nid: tensor-parallelism\n")
        client.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and len(p["diagnostics"]) == 1,
            since=since,
        )


@pytest.mark.slow
def test_the_language_server_follows_a_watch_and_takes_over(vault: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from test_watch import Watch

    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    watch = Watch(root)
    try:
        watch.expect(r"^watching ")
        with LspClient(root) as client:
            client.initialize(root)
            uri, found = fresh(client, root / "notes/n.md", "[[first-new]] [[second-new]]\n")
            assert codes(found) == [(0, "dangling-ref"), (0, "dangling-ref")]
            since = len(client.notifications)
            (root / "notes/first-new.md").write_text("# First\n")
            client.wait_for(
                "textDocument/publishDiagnostics",
                lambda p: p["uri"] == uri and len(p["diagnostics"]) == 1,
                since=since,
            )
            watch.expect(r"added notes/first-new\.md$")
            code, _out, _err = watch.stop()
            assert code == 0
            since = len(client.notifications)
            (root / "notes/second-new.md").write_text("# Second\n")  # the server owns now
            client.wait_for(
                "textDocument/publishDiagnostics",
                lambda p: p["uri"] == uri and not p["diagnostics"],
                since=since,
            )
            # and it answers commands for other studykb processes, as the watch did
            env = {k: v for k, v in os.environ.items() if k != "STUDYKB_LOCAL"}
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "studykb",
                    "--vault",
                    str(root),
                    "show",
                    "second-new",
                    "--json",
                ],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            assert json.loads(done.stdout)["path"] == "notes/second-new.md"
            assert (root / ".studykb/serve.sock").exists()
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait()


def test_studykb_toml_is_read_again(vault: Path, tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    with LspClient(root) as client:
        client.initialize(root)
        uri, found = fresh(client, root / "notes/n.md", "[[nowhere]]\n")
        assert [d["severity"] for d in found] == [1]
        since = len(client.notifications)
        (root / "studykb.toml").write_text('[severity]\ndangling-ref = "warning"\n')
        client.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and [d["severity"] for d in p["diagnostics"]] == [2],
            since=since,
        )


def test_by_hand_it_says_it_waits_and_leaves_on_the_first_ctrl_c(vault: Path) -> None:
    """Started in a terminal: a message, then one Ctrl-C ends it (exit 130, no fatal
    error from the thread reading standard input)."""
    import pty
    import signal
    import subprocess
    import sys

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "studykb", "--vault", str(vault), "lsp"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        assert "waiting for an editor" in line and "Ctrl-C" in line
        time.sleep(1.0)  # the vault is read meanwhile
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert b"Fatal Python error" not in proc.stderr.read()
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_first_build_in_worker_processes_finishes(tmp_path: Path) -> None:
    """Enough new files to parse in forked workers (the server reads its pipe in a thread
    meanwhile, holding its lock): the first build ends and the buffer is checked."""
    root = tmp_path / "big"
    (root / "notes").mkdir(parents=True)
    (root / "studykb.toml").write_text("")
    body = "\n\n".join(
        f"## Part {k}\n\n" + "Words about sharding and memory. " * 20 for k in range(6)
    )
    for n in range(300):
        (root / "notes" / f"n{n:03}.md").write_text(
            f"---\nid: n{n:03}\nrequires: [n{n + 1:03}]\n---\n# N{n}\n\n{body}\n"
        )
    with LspClient(root) as client:
        client.initialize(root)
        uri, found = fresh(client, root / "notes/new.md", "[[n001]] [[nope]]\n")
        assert codes(found) == [(0, "dangling-ref")]
    assert client.proc.returncode == 0


@pytest.mark.slow
def test_two_language_servers_both_recheck_when_a_linked_note_appears(
    vault: Path, tmp_path: Path
) -> None:
    root = tmp_path / "v"
    shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".studykb"))
    with LspClient(root) as first, LspClient(root) as second:
        first.initialize(root)
        second.initialize(root)  # follows the first
        opened = [
            (client, *fresh(client, root / "notes/n.md", "[[appears-later]]\n"))
            for client in (first, second)
        ]
        marks = [len(client.notifications) for client in (first, second)]
        for _client, _uri, found in opened:
            assert codes(found) == [(0, "dangling-ref")]
        (root / "notes/appears-later.md").write_text("# Appears later\n")
        for (client, uri, _found), since in zip(opened, marks, strict=True):
            client.wait_for(
                "textDocument/publishDiagnostics",
                lambda p, uri=uri: p["uri"] == uri and not p["diagnostics"],
                since=since,
            )


def test_an_anchor_diagnostic_underlines_the_link_only(lsp: LspClient, vault: Path) -> None:
    path = vault / "notes/anchor-range.md"
    text = "Read about it in [[ddp#No Such Heading]] today.\n"
    _uri, found = fresh(lsp, path, text)
    anchors = [d for d in found if d["code"] == "dangling-anchor"]
    assert len(anchors) == 1, found
    where = anchors[0]["range"]
    start = text.index("[[")
    assert (where["start"]["character"], where["end"]["character"]) == (
        start,
        text.index("]]") + 2,
    )


def test_a_folder_above_two_vaults_is_not_a_vault(tmp_path: Path) -> None:
    top = tmp_path / "studies"
    for name in ("alpha", "beta"):
        (top / name / "notes").mkdir(parents=True)
        (top / name / "studykb.toml").write_text("")
    (top / "alpha/notes/ddp.md").write_text(DDP, encoding="utf-8")
    (top / "beta/notes/other.md").write_text("---\nid: other\n---\nx\n", encoding="utf-8")
    path = top / "alpha/notes/fsdp.md"
    path.write_text(FSDP, encoding="utf-8")
    with LspClient(None, cwd=top) as client:
        client.initialize(top)
        uri = client.open(path, FSDP + "\n[[other]]\n")
        found = client.diagnostics(uri, 1)
        assert codes(found) == [(8, "dangling-ref")]  # beta's note is not alpha's
        assert (top / "alpha/.studykb").is_dir()
        assert not (top / ".studykb").exists()
        assert not (top / "beta/.studykb").exists()
    assert "Traceback" not in client.stderr, client.stderr


def test_a_file_outside_any_vault_is_checked_against_its_neighbours(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "scratch").mkdir(parents=True)
    (home / "scratch/neighbour.md").write_text("# Beside\n", encoding="utf-8")
    (home / "scratch/deeper").mkdir()
    (home / "scratch/deeper/below.md").write_text("# Below\n", encoding="utf-8")
    (home / "top.md").write_text("# Top\n", encoding="utf-8")
    path = home / "scratch/mine.md"
    text = "[[neighbour]] [[missing]] [[below]]\n"
    path.write_text(text, encoding="utf-8")
    with LspClient(None, cwd=home, env={"HOME": str(home)}) as client:
        client.initialize(home)
        uri = client.open(path, text)
        found = client.diagnostics(uri, 1)
        messages = sorted(d["message"] for d in found if d["code"] == "dangling-ref")
        assert len(messages) == 2 and "'[[missing]]'" in messages[1], found
        assert "'[[below]]'" in messages[0]
        beside = home / "top-two.md"
        uri = client.open(beside, "[[top]] [[nowhere]]\n")
        assert codes(client.diagnostics(uri, 1)) == [(0, "dangling-ref")]
    assert not list(home.rglob(".studykb"))
    assert "Traceback" not in client.stderr, client.stderr
