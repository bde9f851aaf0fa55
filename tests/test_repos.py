"""The repo tracker: tracked repositories, code links and what ``check`` says of them,
on small real git repositories (made with dulwich) holding Python and CUDA code."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import problem_codes, run_json, tree_hashes
from repo_builder import DAY, START, GitRepo
from studykb.parse.code_links import CodeLink, code_link, split_wikilink

BPE_V1 = '''"""BPE."""
VOCAB = 256


class Tokenizer:
    def __init__(self):
        self.merges = []

    def encode(self, text):
        return list(text.encode())


def train(corpus):
    return Tokenizer()
'''

KERNEL_V1 = """#include <cuda_runtime.h>
#define CHECK(x) (x)

namespace ops {
__global__ void add_kernel(float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}

class Gemm {
  public:
    void run();
};

void Gemm::run() {}
}  // namespace ops
"""


@pytest.fixture
def course_repo(tmp_path: Path) -> tuple[GitRepo, str]:
    repo = GitRepo(tmp_path / "clones" / "cs336")
    first = repo.commit(
        {"assignment1/bpe.py": BPE_V1, "kernels/add.cu": KERNEL_V1, "README.md": "# cs336\n"},
        "assignment 1",
        START,
    )
    return repo, first


def _vault(make_vault, body: str, clone: str = "../clones/cs336") -> Path:  # type: ignore[no-untyped-def]
    return make_vault(
        {
            "courses/cs336.md": "---\nid: cs336\ntitle: CS336\nrepo:\n  url: https://github.com/x/cs336\n"
            f"  path: {clone}\nunits:\n  - id: a1\n    title: A1\n    path: assignment1\n---\n",
            "notes/bpe.md": f"---\ntitle: BPE notes\n---\n# BPE\n\n{body}\n",
        },
        name="vault",
    )


def test_code_link_forms() -> None:
    assert code_link("cs336:assignment1/bpe.py") == CodeLink("cs336", "assignment1/bpe.py")
    assert code_link("cs336:a/bpe.py#L10-40@a1b2c3") == CodeLink(
        "cs336", "a/bpe.py", (10, 40), None, "a1b2c3"
    )
    assert code_link("d:llm.py#LLM.generate").symbol == "LLM.generate"  # type: ignore[union-attr]
    assert code_link("d:k.cu#ops::Gemm::run").symbol == "ops.Gemm.run"  # type: ignore[union-attr]
    assert code_link("d:k.cu#L7").lines == (7, 7)  # type: ignore[union-attr]
    # not code links: a title with ": ", a URL, a plain name
    assert code_link("CUDA: intro") is None
    assert code_link("https://example.com/x") is None
    assert code_link("ddp") is None
    assert split_wikilink("[[cs336:a.py#L2|the code]]") == CodeLink("cs336", "a.py", (2, 2))


def test_good_links_pass_and_link_to_the_course(make_vault, run, course_repo) -> None:  # type: ignore[no-untyped-def]
    body = (
        "[[cs336:assignment1/bpe.py]] [[cs336:assignment1/bpe.py#L5-9]]\n"
        "[[cs336:assignment1/bpe.py#Tokenizer.encode]] [[CS336:kernels/add.cu#add_kernel]]\n"
        "[[cs336:kernels/add.cu#Gemm.run]] [[cs336:kernels/add.cu#ops::Gemm::run]]\n"
        "[[cs336:kernels/add.cu#CHECK]] [[cs336:assignment1]]"
    )
    vault = _vault(make_vault, body)
    code, data = run_json(run, "check", vault=vault)
    assert [p for p in data["problems"] if "code" in p["code"] or p["code"] == "dangling-ref"] == []
    _code, back = run_json(run, "backlinks", "cs336", vault=vault)
    assert {b["path"] for b in back["backlinks"]} == {"notes/bpe.md"}


def test_moved_and_renamed_symbols_are_reported_with_where_they_went(  # type: ignore[no-untyped-def]
    make_vault, run, course_repo
) -> None:
    repo, first = course_repo
    body = (
        "[[cs336:assignment1/bpe.py#Tokenizer.encode]]\n"  # line 6: moved to tokenizer.py
        "[[cs336:kernels/add.cu#add_kernel]]\n"  # line 7: file renamed
        f"[[cs336:assignment1/bpe.py#train@{first[:7]}]]\n"  # line 8: old commit: holds
        "[[cs336:assignment1/bpe.py#L1-400]]\n"  # line 9: past the end
        "[[cs336:assignment1/bpe.py#trian]]\n"  # line 10: a typo
        "[[cs336:assignment1/bpe.py@deadbeef]]\n"  # line 11: no such commit
        "[[cs999:x.py]]\n"  # line 12: no such repository
    )
    repo.commit(
        {
            "assignment1/bpe.py": "def train(corpus):\n    return None\n",
            "assignment1/tokenizer.py": BPE_V1.replace("def train", "def train_old"),
            "kernels/add.cu": None,
            "kernels/elementwise.cu": KERNEL_V1,
        },
        "split the tokenizer out; rename the kernel file",
        START + DAY,
    )
    vault = _vault(make_vault, body)
    before = tree_hashes(repo.folder)
    code, data = run_json(run, "check", vault=vault)
    assert code == 1
    mine = {p["line"]: p for p in data["problems"] if p["path"] == "notes/bpe.md"}
    assert sorted(mine) == [6, 7, 9, 10, 11, 12]
    assert all(p["code"] == "dangling-code" and p["severity"] == "error" for p in mine.values())
    assert "assignment1/tokenizer.py#Tokenizer.encode" in mine[6]["message"]
    assert "renamed to kernels/elementwise.cu" in mine[7]["message"]
    assert "runs past its end" in mine[9]["message"]
    assert "'train'" in mine[10]["message"]
    assert "deadbeef" in mine[11]["message"]
    assert "cs999" in mine[12]["message"]
    assert tree_hashes(repo.folder) == before  # nothing written into the clone


def test_a_repository_without_a_clone_is_not_judged(make_vault, run) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault, "[[cs336:no/such/file.py#L1-9]]", clone="../not-cloned")
    _code, data = run_json(run, "check", vault=vault)
    assert problem_codes(data["problems"]) == []


def test_repositories_of_the_config_and_of_entries(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "deepinfer")
    repo.commit({"python/llm.py": "class LLM:\n    def generate(self):\n        pass\n"})
    vault = make_vault(
        {
            "notes/entries/deepinfer.md": "---\nid: deepinfer\nkind: repo\n"
            "url: https://github.com/x/deepinfer\n---\n# DeepInfer\n",
            "notes/n.md": "# n\n\n[[deepinfer:python/llm.py#LLM.generate]]\n"
            "[[deepinfer:python/llm.py#LLM.stream]]\n[[tools:a.py#L1]]\n",
        },
        config=f'[repos.deepinfer]\npath = "{tmp_path / "deepinfer"}"\n'
        f'[repos.tools]\npath = "{tmp_path / "deepinfer"}"\n',
    )
    _code, data = run_json(run, "check", vault=vault)
    assert problem_codes(data["problems"]) == [
        ("notes/n.md", 4, "dangling-code"),
        ("notes/n.md", 5, "dangling-code"),
    ]


def test_bad_clones_and_files_give_clear_messages(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "plain").mkdir()
    repo = GitRepo(tmp_path / "odd")
    repo.commit({"blob.bin": b"\x00\x01" * 100, "big.py": "x = 1\n"})
    repo.symlink("escape.py", "/etc/passwd")
    vault = make_vault(
        {
            "notes/n.md": "# n\n\n[[plain:a.py]]\n[[odd:blob.bin#L1]]\n[[odd:escape.py#L1]]\n"
            "[[odd:blob.bin]]\n",
        },
        config=f'[repos.plain]\npath = "{tmp_path / "plain"}"\n'
        f'[repos.odd]\npath = "{tmp_path / "odd"}"\n',
    )
    before = tree_hashes(tmp_path / "odd")
    _code, data = run_json(run, "check", vault=vault)
    found = {(p["path"], p["line"]): p for p in data["problems"]}
    assert found[("studykb.toml", 1)]["code"] == "bad-repo"
    assert "not a git repository" in found[("studykb.toml", 1)]["message"]
    assert found[("notes/n.md", 4)]["code"] == "unreadable-code"
    assert "binary" in found[("notes/n.md", 4)]["message"]
    assert "symbolic link" in found[("notes/n.md", 5)]["message"]
    assert ("notes/n.md", 3) not in found and ("notes/n.md", 6) not in found
    assert tree_hashes(tmp_path / "odd") == before


def test_a_gitdir_file_leading_out_of_the_clone_is_refused(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    real = GitRepo(tmp_path / "real")
    real.commit({"a.py": "x = 1\n"})
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / ".git").write_text(f"gitdir: {tmp_path / 'real' / '.git'}\n")
    vault = make_vault(
        {"notes/n.md": "# n\n\n[[fake:nothing.py]]\n"},
        config=f'[repos.fake]\npath = "{tmp_path / "fake"}"\n',
    )
    _code, data = run_json(run, "check", vault=vault)
    assert problem_codes(data["problems"]) == [("studykb.toml", 1, "bad-repo")]
    assert "leads out of the clone" in data["problems"][0]["message"]


def test_huge_files_corrupt_and_shallow_clones(make_vault, run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    big = GitRepo(tmp_path / "big")
    big.commit({"huge.py": "x = 1\n" * 400_000, "ok.py": "def f():\n    pass\n"})
    broken = GitRepo(tmp_path / "broken")
    broken.commit({"a.py": "def f():\n    pass\n"})
    objects = tmp_path / "broken" / ".git" / "objects"
    for folder in objects.iterdir():  # every loose object but the commit's is lost
        if folder.name not in ("info", "pack"):
            for obj in folder.iterdir():
                if folder.name + obj.name != broken.repo.head().decode():
                    obj.unlink()
    shallow = GitRepo(tmp_path / "shallow")
    shallow.commit({"a.py": "def old():\n    pass\n"}, "one", START)
    shallow.commit({"b.py": "def new():\n    pass\n"}, "two", START + DAY)
    head = shallow.repo.head()
    parent = shallow.repo[head].parents[0]
    (tmp_path / "shallow" / ".git" / "shallow").write_text(head.decode() + "\n")
    gone = parent.decode()
    (tmp_path / "shallow" / ".git" / "objects" / gone[:2] / gone[2:]).unlink()
    for name in ("big", "broken", "shallow"):
        assert (tmp_path / name).is_dir()
    vault = make_vault(
        {
            "notes/n.md": "# n\n\n[[big:huge.py#L1-3]]\n[[big:ok.py#f]]\n[[broken:a.py#f]]\n"
            f"[[shallow:a.py@{parent.decode()[:8]}]]\n[[shallow:gone.py]]\n",
        },
        config="".join(
            f'[repos.{n}]\npath = "{tmp_path / n}"\n' for n in ("big", "broken", "shallow")
        ),
    )
    before = {n: tree_hashes(tmp_path / n) for n in ("big", "broken", "shallow")}
    _code, data = run_json(run, "check", vault=vault)
    found = {p["line"]: p for p in data["problems"] if p["path"] == "notes/n.md"}
    assert found[3]["code"] == "unreadable-code" and "too large" in found[3]["message"]
    assert 4 not in found
    assert "damaged" in found[5]["message"] or "not in" in found[5]["message"]
    # the shallow clone still holds the parent's id but not its objects: a missing commit
    assert found[6]["code"] == "dangling-code"
    assert (
        found[7]["code"] == "dangling-code" and "gone.py is not in shallow" in found[7]["message"]
    )
    assert {n: tree_hashes(tmp_path / n) for n in before} == before
