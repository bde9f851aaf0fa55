"""A tracked repository's own notes (``notes``) against a vault that reads none (issue 29).

    python benchmarks/bench_repo_notes.py                  # 1k vault notes, 300 repo notes
    python benchmarks/bench_repo_notes.py --docs 10000 --notes 1000 --files 5000 --runs 3

The vault: ``gen_vault.py``'s synthetic notes; a copy of it tracks a repository of
``--files`` files (source files and ``--notes`` Markdown notes below ``Notes/``), made
with dulwich, with ``notes = ["README.md", "Notes/"]``. Each figure is a fresh
``studykb search --json`` on a state already built (nothing in the vault changed), in
turns: the vault without notes (the baseline), the vault with them at the first commit,
and after a "pull" that changes ``--changed`` notes (its first search, which reads and
indexes the changed notes, is also shown alone). Target: with notes <= 1.2x the baseline.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LOCAL, Table, interleave, preamble, ratio, report  # noqa: E402
from gen_vault import generate  # noqa: E402


def _note(i: int, version: int) -> bytes:
    return (
        f"---\ntitle: Lab note {i}\n---\n# Lab note {i}\n\nVersion {version} of the note "
        f"about labnote{i % 97} tiling, warps and occupancy; see [the next](n{i + 1:05}.md).\n"
    ).encode()


def make_repo(folder: Path, files: int, notes: int, changed: int) -> bytes:
    """The repository (two commits; HEAD at the first); returns the second commit's id."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init(str(folder), mkdir=True)
    store = repo.object_store
    layout: dict[str, bytes] = {"README.md": b"# The lab\n\nHow to build it.\n"}
    for i in range(notes):
        layout[f"Notes/part{i % 10}/n{i:05}.md"] = _note(i, 1)
    for i in range(max(files - notes, 0)):
        layout[f"src/sub{i % 50:02}/mod{i:05}.py"] = f"def f{i}():\n    return {i}\n".encode()

    def commit(files_now: dict[str, bytes], parents: list[bytes], when: int) -> bytes:
        trees: dict[str, Tree] = {"": Tree()}
        for path in sorted(files_now):
            blob = Blob.from_string(files_now[path])
            store.add_object(blob)
            folder_name, _, name = path.rpartition("/")
            parts = folder_name.split("/") if folder_name else []
            for depth in range(len(parts) + 1):
                trees.setdefault("/".join(parts[:depth]), Tree())
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
    for i in range(0, notes, max(notes // max(changed, 1), 1))[:changed]:
        after[f"Notes/part{i % 10}/n{i:05}.md"] = _note(i, 2)
    second = commit(after, [first], now)
    repo.refs[b"refs/heads/master"] = first
    repo.close()
    return second


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    preamble()
    with tempfile.TemporaryDirectory(prefix="studykb-bench-notes-") as tmp:
        root = Path(tmp)
        plain, noted, clone = root / "plain", root / "noted", root / "clone"
        generate(str(plain), args.docs)
        shutil.copytree(plain, noted)
        second = make_repo(clone, args.files, args.notes, args.changed)
        with (noted / "studykb.toml").open("a", encoding="utf-8") as toml:
            toml.write(f'\n[repos.lab]\npath = "{clone}"\nnotes = ["README.md", "Notes/"]\n')
        query = ["search", "labnote5 tiling", "--json"]
        run = {name: [sys.executable, "-m", "studykb", "--vault", str(v), *query]
               for name, v in (("no notes", plain), ("notes", noted))}  # fmt: skip
        interleave(run, 1, env=LOCAL, ok_codes=(0, 1))  # build both states
        before = interleave(run, args.runs, env=LOCAL, ok_codes=(0, 1))
        from dulwich.repo import Repo

        repo = Repo(str(clone))
        repo.refs[b"refs/heads/master"] = second  # the pull
        repo.close()
        after = interleave(
            {"notes, after the pull": run["notes"], "no notes": run["no notes"]},
            args.runs,
            env=LOCAL,
            ok_codes=(0, 1),
        )
        first = after["notes, after the pull"].runs[0]  # reads what the pull changed
        hits = after["notes, after the pull"].runs[-1].stdout.count('"lab:Notes/')
    base = after["no notes"].median
    table = Table("search --json", "median s", "cpu s", "vs no notes")
    figures: dict[str, object] = {"docs": args.docs, "notes": args.notes, "files": args.files,
                                  "changed": args.changed, "hits": hits}  # fmt: skip
    for name, timing in [*before.items(), *after.items()]:
        name = f"{name} (before the pull)" if timing in before.values() else name
        table.add(
            name, f"{timing.median:.3f}", f"{timing.cpu:.2f}", f"{ratio(timing.median, base):.2f}x"
        )
        figures[name] = timing.median
    table.add(
        "notes, first search after the pull",
        f"{first.seconds:.3f}",
        f"{first.cpu:.2f}",
        f"{ratio(first.seconds, base):.2f}x",
    )
    figures["notes, first search after the pull"] = first.seconds
    print(f"{hits} hits in the repository's notes after the pull")
    report(table, figures, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
