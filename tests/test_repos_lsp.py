"""The language server completes paths and symbols inside code links, from the clone."""

from __future__ import annotations

from pathlib import Path

from lsp_client import LspClient
from repo_builder import GitRepo


def labels(result: dict | None) -> list[str]:
    assert result is not None
    return [item["label"] for item in result["items"]]


def test_completion_of_code_paths_and_symbols(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "clone")
    repo.commit(
        {
            "assignment1/bpe.py": "class Tokenizer:\n    def encode(self):\n        pass\n",
            "assignment1/train.py": "def train():\n    pass\n",
            "kernels/add.cu": "__global__ void add_kernel(float* a) {}\n",
        }
    )
    root = tmp_path / "vault"
    (root / "courses").mkdir(parents=True)
    (root / "studykb.toml").write_text(f'[repos.cs336]\npath = "{repo.folder}"\n')
    (root / "courses" / "cs336.md").write_text("---\nid: cs336\ntitle: CS336\n---\n# CS336\n")
    (root / "courses" / "ddp: notes.md").write_text("# x\n")
    text = "[[cs336:\n[[cs336:assignment1/b\n[[cs336:assignment1/bpe.py#Tok\n[[cs33\n[[ddp:\n"
    with LspClient(root) as client:
        client.initialize(root)
        uri = client.open(root / "notes.md", text)
        client.diagnostics(uri, 1)
        top = client.request("textDocument/completion", client.at(uri, 0, 8))
        assert labels(top) == ["assignment1/", "kernels/"]
        assert top["items"][0]["textEdit"]["newText"] == "assignment1/"
        files = client.request("textDocument/completion", client.at(uri, 1, 21))
        assert labels(files) == ["assignment1/bpe.py"]
        assert files["items"][0]["textEdit"]["newText"] == "assignment1/bpe.py]]"
        found = client.request("textDocument/completion", client.at(uri, 2, 31))
        assert labels(found) == ["Tokenizer", "Tokenizer.encode"]
        # before the colon it is still the documents' completion
        assert "cs336" in labels(client.request("textDocument/completion", client.at(uri, 3, 6)))
        # no repository named ddp: a document whose name has a colon
        assert "ddp: notes" in labels(
            client.request("textDocument/completion", client.at(uri, 4, 6))
        )
        assert client.close() == 0
        assert "Traceback" not in client.stderr


def test_diagnostics_of_code_links_are_those_of_check(make_vault, run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every file opened as saved shows exactly the problems `check` reports for it, code
    links included (after a pull that moved a symbol and renamed a file); an edit that
    breaks a code link shows at once, and one that fixes it clears it."""
    import json

    from repo_builder import DAY, START

    repo = GitRepo(tmp_path / "clones" / "grad")
    engine = "class Value:\n    def backward(self):\n        pass\n\n\ndef topo(v):\n    return v\n"
    kernel = "namespace ops {\n__global__ void scale(float* a) {}\n}\n"
    repo.commit({"engine.py": engine, "k/scale.cu": kernel}, "one", START)
    repo.commit(
        {
            "engine.py": "def topo(v):\n    return v\n",
            "nn/value.py": engine.replace("def topo", "def other"),
            "k/scale.cu": None,
            "k/ops.cu": kernel,
        },
        "move Value; rename the kernel file",
        START + DAY,
    )
    files = {
        "studykb.toml": '[repos.grad]\npath = "../clones/grad"\n\n'
        '[repos.gone]\npath = "../nothing-here"\n',
        "courses/grad.md": "---\nid: grad\ntitle: Grad\n---\n# Grad\n\n[[grad:engine.py#topo]]\n",
        "notes/a.md": "# A\n\n[[grad:engine.py#Value.backward]]\n[[grad:k/scale.cu#scale]]\n"
        "[[grad:engine.py#L1-40]]\n[[grad:engine.py#tpo]]\n[[grda:engine.py]]\n",
        "notes/b.md": "# B\n\n[[grad:engine.py#topo]] [[grad:nn/value.py#Value.backward]]\n"
        "[[grad:k/ops.cu#ops::scale]] [[gone:x.py]] [[grad:nn]]\n",
        "notes/c.md": "# C\n\nNo code here: [[a]].\n",
        "courses/bad.md": "---\nid: bad\ntitle: Bad\nrepo:\n  url: https://example.com/bad\n"
        "  path: ../not-a-repo\n---\n# Bad\n\n[[bad:x.py]]\n",
    }
    (tmp_path / "not-a-repo").mkdir()
    root = make_vault(files, name="vault")
    checked = json.loads(run("check", "--json", vault=root).stdout)["problems"]
    expected: dict[str, set[tuple[int, str, str]]] = {rel: set() for rel in files}
    for p in checked:
        expected.setdefault(p["path"], set()).add((max(p["line"] - 1, 0), p["code"], p["message"]))
    assert {c for _l, c, _m in expected["notes/a.md"]} == {"dangling-code"}
    assert len(expected["notes/a.md"]) == 5
    assert any("nn/value.py#Value.backward" in m for _l, _c, m in expected["notes/a.md"])
    assert any("renamed to k/ops.cu" in m for _l, _c, m in expected["notes/a.md"])
    assert {c for _l, c, _m in expected["courses/bad.md"]} == {"bad-repo"}
    with LspClient(root) as client:
        client.initialize(root)
        for rel, text in files.items():
            if not rel.endswith(".md"):
                continue
            since = len(client.notifications)
            uri = client.open(root / rel, text)
            found = client.diagnostics(uri, 1, since=since)
            got = {(d["range"]["start"]["line"], d["code"], d["message"]) for d in found}
            assert got == expected[rel], rel
        # an edit, not saved: the link breaks, then holds again
        uri = (root / "notes/b.md").as_uri()
        since = len(client.notifications)
        client.change(uri, files["notes/b.md"].replace("#topo]]", "#topo_gone]]"), 2)
        found = client.diagnostics(uri, 2, since=since)
        assert [(d["range"]["start"]["line"], d["code"]) for d in found] == [(2, "dangling-code")]
        since = len(client.notifications)
        client.change(uri, files["notes/b.md"], 3)
        assert client.diagnostics(uri, 3, since=since) == []
        assert client.close() == 0
        assert "Traceback" not in client.stderr


def test_definition_of_a_repository_note_opens_it_in_the_clone(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "clone")
    repo.commit({"Notes/intro.md": "# Lab intro\n\nCoalescing.\n"})
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "studykb.toml").write_text(
        f'[repos.lab]\npath = "{repo.folder}"\nnotes = ["Notes/"]\n', encoding="utf-8"
    )
    (root / "notes" / "a.md").write_text("# A\n\nSee [[lab:Notes/intro.md]].\n", encoding="utf-8")
    with LspClient(root) as client:
        client.initialize(root)
        uri = client.open(root / "notes" / "a.md")
        client.diagnostics(uri, 1)
        found = client.request("textDocument/definition", client.at(uri, 2, 10))
        assert found is not None
        assert found["uri"] == (repo.folder / "Notes" / "intro.md").as_uri()
        assert client.close() == 0
        assert "Traceback" not in client.stderr
