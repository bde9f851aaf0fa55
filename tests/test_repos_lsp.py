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
