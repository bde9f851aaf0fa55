"""``studykb check`` with links into code against ``check`` without them (issue 29).

    python benchmarks/bench_repos.py                      # 10k notes, 2,000 code links
    python benchmarks/bench_repos.py --docs 1000 --links 200 --files 500 --runs 3

The vault: ``gen_vault.py``'s synthetic notes; a copy of it gets ``--links`` code links
(six in ten to a symbol, two to a line range, two to a file) into a repository of
``--files`` files (nine in ten Python, the rest CUDA), tracked by ``[repos.bench]`` with
its clone's path. The repository is made with dulwich: a first commit, then a "pull" that
moves ``--moved`` linked classes into other files, so ``check`` has that many symbols to
look for elsewhere. Each figure is a fresh ``studykb check --json`` on a state already
built (nothing in the vault changed), in turns: the vault without code links (the
baseline), the vault with them at the first commit, and after the pull (the first check
after it, which reads the files the pull changed and indexes the commit's symbols, is
also shown alone). Target: after the pull <= 2x the baseline.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LOCAL, Table, interleave, preamble, ratio, report  # noqa: E402
from gen_vault import generate  # noqa: E402


def _module(i: int, classes: list[int]) -> bytes:
    parts = [f'"""Module {i}."""\nimport os\n\nLIMIT_{i} = {i}\n']
    for c in classes:
        parts.append(
            f"\n\nclass C{c}:\n    def __init__(self):\n        self.n = {c}\n\n"
            f"    def m1(self, x):\n        return x + self.n\n\n"
            f"    def m2(self, x):\n        y = x * 2\n        return y - self.n\n"
        )
    parts.append(f"\n\ndef helper_{i}(a, b):\n    return os.path.join(a, b)\n")
    return "".join(parts).encode()


def _kernel(i: int) -> bytes:
    return (
        f"#include <cuda_runtime.h>\n\nnamespace ops{i} {{\n"
        f"__global__ void k{i}(float* a, int n) {{\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n    if (t < n) a[t] *= 2.0f;\n}\n"
        f"class Launcher{i} {{\n  public:\n    void run(float* a, int n);\n}};\n"
        f"void Launcher{i}::run(float* a, int n) {{ k{i}<<<1, 256>>>(a, n); }}\n}}\n"
    ).encode()


def make_repo(folder: Path, files: int, moved: int, links: int) -> tuple[list[str], bytes]:
    """The repository (two commits; HEAD at the first) and the code links into it; returns
    (links, the second commit's id)."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init(str(folder), mkdir=True)
    store = repo.object_store
    python = files * 9 // 10
    layout: dict[str, bytes] = {}
    for i in range(python):
        layout[f"pkg/sub{i % 50:02}/mod{i:05}.py"] = _module(i, [i])
    for i in range(files - python):
        layout[f"kernels/k{i:04}.cu"] = _kernel(i)

    rng = random.Random(29)
    out: list[str] = []
    for n in range(links):
        i = rng.randrange(python)
        path = f"pkg/sub{i % 50:02}/mod{i:05}.py"
        pick = n % 10
        if pick < 5:
            out.append(f"[[bench:{path}#C{i}.m{1 + n % 2}]]")
        elif pick == 5:
            k = rng.randrange(files - python)
            out.append(f"[[bench:kernels/k{k:04}.cu#ops{k}::Launcher{k}::run]]")
        elif pick < 8:
            out.append(f"[[bench:{path}#L{1 + n % 5}-{8 + n % 5}]]")
        else:
            out.append(f"[[bench:{path}]]")
    linked = sorted({int(t.split("#C")[1].split(".")[0]) for t in out if "#C" in t})
    gone = rng.sample(linked, min(moved, len(linked)))

    def commit(files_now: dict[str, bytes], parents: list[bytes], when: int) -> bytes:
        trees: dict[str, Tree] = {"": Tree()}
        for path in sorted(files_now):
            blob = Blob.from_string(files_now[path])
            store.add_object(blob)
            folder_name, _, name = path.rpartition("/")
            parts = folder_name.split("/") if folder_name else []
            for depth in range(len(parts) + 1):
                key = "/".join(parts[:depth])
                trees.setdefault(key, Tree())
            trees[folder_name].add(name.encode(), 0o100644, blob.id)
        for key in sorted(trees, key=lambda k: -k.count("/") if k else 1):
            if not key:
                continue
            store.add_object(trees[key])
            parent, _, name = key.rpartition("/")
            trees[parent].add(name.encode(), 0o040000, trees[key].id)
        store.add_object(trees[""])
        c = Commit()
        c.tree = trees[""].id
        c.parents = parents
        c.author = c.committer = b"Bench <b@example.com>"
        c.author_time = c.commit_time = when
        c.author_timezone = c.commit_timezone = 0
        c.message = b"bench"
        store.add_object(c)
        return c.id

    now = int(time.time())
    first = commit(layout, [], now - 86400)
    after = dict(layout)
    for j, i in enumerate(gone):
        after[f"pkg/sub{i % 50:02}/mod{i:05}.py"] = _module(i, [])
        after[f"pkg/moved/m{j:03}.py"] = _module(100000 + j, [i])
    second = commit(after, [first], now)
    repo.refs[b"refs/heads/master"] = first
    repo.close()
    return out, second


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=10000)
    parser.add_argument("--links", type=int, default=2000)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--moved", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    preamble()
    with tempfile.TemporaryDirectory(prefix="studykb-bench-repos-") as tmp:
        root = Path(tmp)
        plain, coded, clone = root / "plain", root / "coded", root / "clone"
        generate(str(plain), args.docs)
        shutil.copytree(plain, coded)
        links, second = make_repo(clone, args.files, args.moved, args.links)
        with (coded / "studykb.toml").open("a", encoding="utf-8") as toml:
            toml.write(f'\n[repos.bench]\npath = "{clone}"\n')
        notes = sorted(p for p in coded.rglob("*.md") if ".studykb" not in p.parts)
        for n, link in enumerate(links):
            with notes[n * len(notes) // len(links)].open("a", encoding="utf-8") as f:
                f.write(f"\n\nThe code: {link}\n")
        run = {name: [sys.executable, "-m", "studykb", "--vault", str(v), "check", "--json"]
               for name, v in (("no code links", plain), ("code links", coded))}  # fmt: skip
        interleave(run, 1, env=LOCAL, ok_codes=(0, 1))  # build both states
        before = interleave(
            {"code links, before the pull": run["code links"], **run},
            args.runs,
            env=LOCAL,
            ok_codes=(0, 1),
        )
        from dulwich.repo import Repo

        repo = Repo(str(clone))
        repo.refs[b"refs/heads/master"] = second  # the pull
        repo.close()
        after = interleave(
            {
                "code links, after the pull": run["code links"],
                "no code links": run["no code links"],
            },
            args.runs,
            env=LOCAL,
            ok_codes=(0, 1),
        )
        found = after["code links, after the pull"].runs[-1].stdout.count('"dangling-code"')
        first = after["code links, after the pull"].runs[0]  # reads what the pull changed
    base = after["no code links"].median
    table = Table("check --json", "median s", "cpu s", "vs no code links")
    figures: dict[str, object] = {"docs": args.docs, "links": args.links, "files": args.files,
                                  "moved": args.moved, "dangling-code": found}  # fmt: skip
    for name, timing in [*before.items(), *after.items()]:
        if name == "code links":
            name = "code links, before the pull (2)"
        table.add(
            name, f"{timing.median:.3f}", f"{timing.cpu:.2f}", f"{ratio(timing.median, base):.2f}x"
        )
        figures[name] = timing.median
    table.add(
        "code links, first check after the pull",
        f"{first.seconds:.3f}",
        f"{first.cpu:.2f}",
        f"{ratio(first.seconds, base):.2f}x",
    )
    figures["code links, first check after the pull"] = first.seconds
    print(f"{found} dangling-code problems after the pull")
    report(table, figures, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
