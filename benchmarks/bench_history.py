"""``studykb status --history``: reading the vault's own git history (issue 29).

    python benchmarks/bench_history.py                    # 5,000 notes, 2,000 commits
    python benchmarks/bench_history.py --docs 1000 --commits 500 --runs 3

The repository is made with dulwich objects: a first commit of ``--docs`` notes in 50
folders (one in three with a status, every tenth a course of four units) and a
``src/`` folder the vault excludes, then ``--commits`` commits, one a day, each changing
the status of two notes (and, every fifth, a source file), as marking what you read does.
Each figure is one in-process ``read_history`` of the whole line (the default bound of
2,000 commits), the median of ``--runs``; and one with ``--since`` the last 30 days. The
figure that matters is the full walk: the cost is per changed file, not per note.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Table, preamble, report  # noqa: E402

STATUSES = ("todo", "reading", "done")
DAY = 86400


def _note(i: int, status: str | None) -> bytes:
    if i % 10 == 0:
        units = "".join(
            f"  - id: u{u}\n    title: Unit {u}\n" + (f"    status: {status}\n" if status else "")
            for u in range(4)
        )
        return f"---\nid: c{i}\ntitle: Course {i}\nunits:\n{units}---\n# Course {i}\n".encode()
    line = f"status: {status}\n" if status else ""
    return (f"---\nid: n{i}\ntitle: Note {i}\n{line}---\n# Note {i}\n\n" + "Text. " * 80).encode()


def make_repo(folder: Path, docs: int, commits: int) -> None:
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init(str(folder), mkdir=True)
    store = repo.object_store
    folders: dict[str, dict[str, bytes]] = {f"f{k:02}": {} for k in range(50)}
    status: dict[int, str | None] = {}

    def put(i: int, value: str | None) -> None:
        blob = Blob.from_string(_note(i, value))
        store.add_object(blob)
        folders[f"f{i % 50:02}"][f"n{i:05}.md"] = blob.id
        status[i] = value

    for i in range(docs):
        put(i, STATUSES[i % 3] if i % 3 == 0 or i % 10 == 0 else None)
    source: dict[str, bytes] = {}

    def tree_of(names: dict[str, bytes]) -> bytes:
        tree = Tree()
        for name, sha in names.items():
            tree.add(name.encode(), 0o100644, sha)
        store.add_object(tree)
        return tree.id

    folder_trees = {name: tree_of(names) for name, names in folders.items()}
    config = Blob.from_string(b'exclude = ["src"]\n')
    store.add_object(config)
    start = int(time.time()) - (commits + 1) * DAY
    parent: list[bytes] = []
    for n in range(commits + 1):
        changed: set[str] = set()
        if n:
            for i in ((n * 7919) % docs, (n * 104729 + 1) % docs):
                now = status[i]
                put(i, STATUSES[(STATUSES.index(now) + 1) % 3] if now else "reading")
                changed.add(f"f{i % 50:02}")
            if n % 5 == 0:
                blob = Blob.from_string(f"x = {n}\n".encode())
                store.add_object(blob)
                source[f"m{n % 20}.py"] = blob.id
        for name in changed:
            folder_trees[name] = tree_of(folders[name])
        root = Tree()
        root.add(b"studykb.toml", 0o100644, config.id)
        for name, sha in folder_trees.items():
            root.add(name.encode(), 0o040000, sha)
        if source:
            root.add(b"src", 0o040000, tree_of(source))
        store.add_object(root)
        c = Commit()
        c.tree = root.id
        c.parents = parent
        c.author = c.committer = b"Bench <b@example.com>"
        c.author_time = c.commit_time = start + n * DAY
        c.author_timezone = c.commit_timezone = 0
        c.message = b"bench"
        store.add_object(c)
        parent = [c.id]
    repo.refs[b"refs/heads/master"] = parent[0]
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/master")
    repo.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    preamble()
    from studykb.config import Config
    from studykb.parse.reading import GITHUB
    from studykb.repos.history import read_history

    with tempfile.TemporaryDirectory(prefix="studykb-bench-history-") as tmp:
        folder = Path(tmp) / "vault"
        t0 = time.perf_counter()
        make_repo(folder, args.docs, args.commits)
        print(f"repository made in {time.perf_counter() - t0:.1f} s")
        config = Config(root=folder, exclude=("src",))
        since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 30 * DAY))
        figures: dict[str, object] = {"docs": args.docs, "commits": args.commits}
        table = Table("walk", "commits", "events", "days", "median s", "runs")
        for name, kwargs in (("whole line", {}), ("--since 30 days", {"since": since})):
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                found = read_history(config, GITHUB, **kwargs)  # type: ignore[arg-type]
                times.append(time.perf_counter() - t)
            median = statistics.median(times)
            figures[name] = {"seconds": times, "commits": found.commits}
            table.add(
                name,
                found.commits,
                len(found.events),
                len(found.days),
                f"{median:.3f}",
                " ".join(f"{x:.3f}" for x in times),
            )
        report(table, figures, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
