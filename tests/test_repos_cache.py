"""The reader of code links kept across runs (studykb.repos.cached): what check says is
the same with it and without it, after a pull that moves symbols; its entries survive a
restart, are used, and a new blob is read anew."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import run_json
from repo_builder import DAY, START, GitRepo
from studykb.repos import cached, check
from studykb.vault.cache import MADE_BY, pack, unpack

ENGINE = '''"""Engine."""


class Value:
    def __init__(self, data):
        self.data = data

    def backward(self):
        return None


def topo(v):
    return [v]
'''

KERNEL = """namespace ops {
__global__ void scale(float* a, int n) { a[0] *= n; }
class Gemm {
  public:
    void run();
};
void Gemm::run() {}
}
"""

GEMM_RUN = "namespace ops {\nclass Gemm { void run(); };\nvoid Gemm::run() {}\n}\n"

BODY = (
    "[[grad:engine.py#Value.backward]]\n"  # line 6
    "[[grad:engine.py#topo]]\n"  # line 7
    "[[grad:engine.py#L1-12]]\n"  # line 8
    "[[grad:k/gemm.cu#ops::Gemm::run]]\n"  # line 9
    "[[grad:k/gemm.cu#scale]]\n"  # line 10
    "[[grad:engine.py]]\n"  # line 11
)


@pytest.fixture
def setup(tmp_path: Path, make_vault) -> tuple[GitRepo, Path]:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "clones" / "grad")
    repo.commit({"engine.py": ENGINE, "k/gemm.cu": KERNEL, "README.md": "# grad\n"}, "one", START)
    vault = make_vault(
        {
            "studykb.toml": '[repos.grad]\npath = "../clones/grad"\n',
            "notes/grad.md": f"---\ntitle: Grad\n---\n# Grad\n\n{BODY}",
        },
        name="vault",
    )
    return repo, vault


def _pull(repo: GitRepo) -> None:
    """Move Value.backward and Gemm.run to other files, cut engine.py short."""
    repo.commit(
        {
            "engine.py": '"""Engine."""\n\n\ndef topo(v):\n    return [v]\n',
            "nn/value.py": ENGINE.replace("def topo", "def topo_old"),
            "k/gemm.cu": KERNEL.replace("void Gemm::run() {}\n", "").replace("run", "go"),
            "k/gemm_run.cu": GEMM_RUN,
        },
        "move things",
        START + DAY,
    )


def _code(problems: list[dict]) -> list[tuple[int, str, str]]:
    return sorted((p["line"], p["code"], p["message"]) for p in problems if "code" in p["code"])


def _entries(vault: Path) -> dict[str, object]:
    with sqlite3.connect(vault / ".studykb" / "cache.sqlite") as db:
        rows = db.execute("SELECT name, value FROM entries WHERE name LIKE 'repo-%'").fetchall()
    return {name: unpack(value) for name, value in rows}


def test_check_says_the_same_with_and_without_the_cache_after_a_pull(  # type: ignore[no-untyped-def]
    setup, run, monkeypatch
) -> None:
    repo, vault = setup
    _code_, first = run_json(run, "check", vault=vault)
    assert _code(first["problems"]) == []
    _pull(repo)
    warm_runs = [_code(run_json(run, "check", vault=vault)[1]["problems"]) for _ in range(2)]
    monkeypatch.setattr(cached, "CachedReader", lambda repos, cache: check.Reader(repos))
    plain = _code(run_json(run, "check", vault=vault)[1]["problems"])
    assert warm_runs[0] == warm_runs[1] == plain
    lines = {line: message for line, _c, message in plain}
    assert sorted(lines) == [6, 8, 9]
    assert "nn/value.py#Value.backward" in lines[6]
    assert "k/gemm_run.cu#ops.Gemm.run" in lines[9]
    assert "runs past its end" in lines[8]
    held = _entries(vault)
    assert set(held) == {"repo-files", "repo-commits"} <= MADE_BY.keys()


def test_the_kept_rows_survive_a_restart_are_used_and_a_new_blob_is_read(  # type: ignore[no-untyped-def]
    setup, run
) -> None:
    repo, vault = setup
    run_json(run, "check", vault=vault)
    rows = _entries(vault)["repo-files"]
    assert isinstance(rows, dict)
    engine = next(k for k, v in rows.items() if k.endswith(":python") and v[3])
    # the kept row is what the next run (a new process's vault) believes: drop a symbol
    # from it and check reports that symbol gone, which only the cache could say
    names = [n for n in rows[engine][3] if n[0] != "topo"]
    forged = {**rows, engine: [rows[engine][0], False, True, names]}
    db_path = vault / ".studykb" / "cache.sqlite"
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE entries SET value=? WHERE name='repo-files'", (pack(forged),))
    _c, data = run_json(run, "check", vault=vault)
    assert [line for line, *_ in _code(data["problems"])] == [7]
    # a new blob of engine.py (topo still there) is read anew, not taken from that row
    repo.commit({"engine.py": ENGINE + "\n\nLATE = 1\n"}, "touch", START + DAY)
    _c, data = run_json(run, "check", vault=vault)
    assert _code(data["problems"]) == []
    rows = _entries(vault)["repo-files"]
    assert isinstance(rows, dict) and engine in rows and len(rows) == 3


def test_a_damaged_entry_is_read_again(setup, run) -> None:  # type: ignore[no-untyped-def]
    _repo, vault = setup
    run_json(run, "check", vault=vault)
    with sqlite3.connect(vault / ".studykb" / "cache.sqlite") as db:
        db.execute("UPDATE entries SET value=? WHERE name LIKE 'repo-%'", (pack({"x": [1]}),))
    _c, data = run_json(run, "check", vault=vault)
    assert _code(data["problems"]) == []


def test_an_index_made_from_the_last_commits_is_the_one_made_anew(tmp_path: Path) -> None:
    """After a pull the commit's symbol index is made from the one before (only changed
    blobs read): it must hold what an index made from every file holds."""
    from studykb.repos.git import Clone

    repo = GitRepo(tmp_path / "grad")
    repo.commit({"engine.py": ENGINE, "k/gemm.cu": KERNEL, "README.md": "# grad\n"}, "one", START)
    _pull(repo)
    clone = Clone(repo.folder)
    try:
        head = clone.commit()
        first = clone.commit(head.parents[0].decode())
        step = cached.CachedReader({})
        step._index(clone, step._commit(clone, first))  # noqa: SLF001
        made = step._index(clone, step._commit(clone, head))  # noqa: SLF001
        whole = cached.CachedReader({})
        anew = whole._index(clone, whole._commit(clone, head))  # noqa: SLF001
    finally:
        clone.close()
    assert made == anew
    assert anew["Value.backward"] == ["nn/value.py"]
    assert anew["Gemm.run"] == ["k/gemm_run.cu"]
    assert "topo_old" in anew and "go" in anew
