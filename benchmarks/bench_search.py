"""Benchmarks of full-text search: build, one-edit update, query latency, size, memory.

    python benchmarks/bench_search.py                      # 10k documents
    python benchmarks/bench_search.py --docs 2000 --runs 3 --markdown
    python benchmarks/bench_search.py --skip-builds        # the quick figures only

It generates a synthetic vault (benchmarks/gen_vault.py) and measures, beside a
baseline run in the same session:

* baseline, "jieba+FTS5": one plain Python process that walks the vault, reads
  every file, segments the whole text with ``jieba.cut`` (default mode) and inserts
  it into an SQLite FTS5 table (unicode61 tokenizer);
* full build, "parse+graph+index": one process, fresh state, ``vault.refresh()``,
  ``graph.build()`` and ``index.sync()`` (the judged figure), and the same
  through the command line, ``studykb build`` (parse and index);
* one-edit update, end to end: a line with a new word is appended to one note, then a
  fresh ``studykb search WORD`` must find it (refresh, re-index one file, query);
  also ``studykb build`` after an edit, and the index update alone in-process;
* search latency in-process (``search.search`` on a synced index, snippets
  included; p50/p95 over a mix of English, Chinese, mixed, phrase, prefix, boolean
  and filtered queries) and end to end from the shell (``studykb search Q --json``);
* index size on disk and peak memory (sum over the process tree, sampled).

Targets (10k documents, this 2-core machine): full build <= 1.0x the baseline;
one-edit update <= 0.3 s end to end; search p50 <= 30 ms in-process and <= 0.4 s
end to end; peak memory <= 500 MB. The machine is shared, so figures are noisy:
medians of several runs are printed with their spread.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (  # noqa: E402
    LOCAL,
    SERVED,
    Table,
    Timing,
    interleave,
    preamble,
    python_cmd,
    repeat,
    report,
    run,
    watching,
)
from gen_vault import generate  # noqa: E402

#: Baseline: walk, read, jieba.cut (default mode) over the whole text, insert into FTS5.
BASELINE = r"""
import os, sqlite3, sys
import jieba
jieba.setLogLevel(60)
root, out = sys.argv[1], sys.argv[2]
if os.path.exists(out):
    os.remove(out)
db = sqlite3.connect(out)
db.execute("CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='unicode61')")
n = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith('.')]
    for name in filenames:
        if not name.endswith('.md'):
            continue
        path = os.path.join(dirpath, name)
        with open(path, encoding='utf-8-sig', errors='replace') as fh:
            text = fh.read()
        db.execute("INSERT INTO docs VALUES (?, ?)", (path, " ".join(jieba.cut(text))))
        n += 1
db.commit()
print(n)
"""

#: Full build through the library: parse + resolve, graph, index (fresh state).
BUILD_ALL = r"""
import sys
from studykb.vault import Vault
from studykb import graph
from studykb.search import index
v = Vault.open(sys.argv[1])
stats = v.refresh()
g = graph.build(v.documents(), v.graph_edges(), v.topics())
got = index.sync(v, quiet=True)
print(stats.documents, g.number_of_nodes(), got.documents)
"""

#: The index update alone after one edit (in-process; the edit is made by the caller).
UPDATE_ONE = r"""
import json, sys, time
from studykb.vault import Vault
from studykb.search import index
v = Vault.open(sys.argv[1])
v.refresh()
index.sync(v, quiet=True)
path = sys.argv[2]
out = []
for n in range(int(sys.argv[3])):
    with open(v.root / path, "a", encoding="utf-8") as fh:
        fh.write(f"\ninprocess{n} 编辑{n}\n")
    t = time.perf_counter()
    v.refresh()
    refreshed = time.perf_counter()
    got = index.sync(v, quiet=True)
    done = time.perf_counter()
    assert got.paths == [path], got.paths
    out.append((refreshed - t, done - refreshed))
print(json.dumps(out))
"""

#: Query latency in-process on a synced index.
LATENCY = r"""
import json, sys, time
from studykb.vault import Vault
from studykb.search import index
from studykb.search.query import SearchOptions, search
v = Vault.open(sys.argv[1])
v.refresh()
index.sync(v, quiet=True)
queries = json.loads(sys.argv[2])
repeats = int(sys.argv[3])
def opts(q):
    return SearchOptions(query=q["q"], types=tuple(q.get("type", ())), tags=tuple(q.get("tag", ())))
for q in queries:  # warm up: open the searcher, load rjieba, fill caches
    search(v, opts(q))
per_query, all_ms, sync_ms = {}, [], []
for _ in range(repeats):
    for q in queries:
        t = time.perf_counter()
        hits = search(v, opts(q))
        ms = (time.perf_counter() - t) * 1000
        per_query.setdefault(q["q"] + " " + " ".join(q.get("type", ())), []).append((ms, len(hits)))
        all_ms.append(ms)
    t = time.perf_counter()
    index.sync(v, quiet=True)
    sync_ms.append((time.perf_counter() - t) * 1000)
print(json.dumps({"all": all_ms, "per_query": per_query, "sync": sync_ms}))
"""

#: The query mix: English, Chinese, glued, phrase, prefix, boolean, field, filters.
QUERIES = [
    {"q": "gradient"},
    {"q": "attention memory"},
    {"q": '"memory bandwidth"'},
    {"q": "显存"},
    {"q": "流水线 调度"},
    {"q": "投机 草稿 验证"},
    {"q": "kernel*"},
    {"q": "tensor OR 张量"},
    {"q": "梯度 AND 显存"},
    {"q": "decode NOT prefill"},
    {"q": "title:kernel"},
    {"q": "量化 quantization"},
    {"q": "gradient", "type": ["topic"]},
    {"q": "显存", "type": ["entry"]},
]

TARGETS = {
    "full build (parse+graph+index)": ("jieba+FTS5", 1.0, None),
    "one-edit update, end to end": (None, None, 0.3),
    "search p50, in-process": (None, None, 0.030),
    "search p50, end to end": (None, None, 0.4),
}
MEMORY_TARGET_MB = 500.0
#: Memory sampling period (s) for sub-second commands: sampling /proc every 5 ms costs
#: the child a noticeable share of a busy 2-core machine.
QUICK = 0.05


def studykb_cmd() -> list[str]:
    exe = shutil.which("studykb", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "studykb"]


def wipe_state(vault: str) -> None:
    shutil.rmtree(os.path.join(vault, ".studykb"), ignore_errors=True)


def folder_mb(path: str) -> float:
    total = 0
    for folder, _dirs, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    return total / 1e6


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(p * (len(values) - 1))))]


class Editor:
    """Appends a line with a word never seen before; restores the file at the end."""

    def __init__(self, path: str) -> None:
        self.path = path
        with open(path, "rb") as fh:
            self.original = fh.read()
        self.n = 0

    def word(self) -> str:
        return f"zebrafish{self.n}"

    def __call__(self) -> None:
        self.n += 1
        with open(self.path, "ab") as fh:
            fh.write(f"\nEdited: {self.word()} 斑马鱼{self.n}.\n".encode())

    def restore(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(self.original)


def bench(
    n_docs: int, runs: int, heavy: int, workdir: str, seed: int, builds: bool = True
) -> tuple[Table, dict]:
    vault = os.path.join(workdir, f"search-{n_docs}")
    t0 = time.perf_counter()
    info = generate(vault, n_docs, seed)
    print(
        f"\n== {n_docs} documents ({info['bytes'] / 1e6:.1f} MB), generated in "
        f"{time.perf_counter() - t0:.1f} s: {vault}",
        flush=True,
    )
    sk = studykb_cmd() + ["--vault", vault]
    env = LOCAL
    res: dict[str, Timing] = {}

    def note(name: str, timing: Timing) -> None:
        res[name] = timing
        print(
            f"  {name:<34} median {timing.median:.3f} s  ({timing.spread()} over "
            f"{len(timing.runs)} runs)  tree {timing.tree_mb:.0f} MB",
            flush=True,
        )

    fts = os.path.join(workdir, "baseline-fts5.sqlite")
    heavy_cmds = {
        "jieba+FTS5": python_cmd(BASELINE, vault, fts),
        "full build (parse+graph+index)": python_cmd(BUILD_ALL, vault),
        "studykb build (fresh state)": sk + ["build", "--json"],
    }
    if not builds:  # one untimed build: the quick figures need the state and the index
        heavy_cmds = {}
        wipe_state(vault)
        run(sk + ["build"], check=True, env=env)
    heavy_runs = interleave(  # in turns, so a busy machine disturbs them alike
        heavy_cmds,
        heavy,
        before={
            "full build (parse+graph+index)": lambda: wipe_state(vault),
            "studykb build (fresh state)": lambda: wipe_state(vault),
        },
        check=True,
        env=env,
        sample=QUICK,
    )  # a sampler every 5 ms takes CPU from the build
    for name, timing in heavy_runs.items():
        note(name, timing)
    fts_mb = os.path.getsize(fts) / 1e6 if builds else 0.0
    index_mb = folder_mb(os.path.join(vault, ".studykb", "index"))
    state_mb = folder_mb(os.path.join(vault, ".studykb")) - index_mb

    editor = Editor(os.path.join(vault, info["edit_file"]))
    try:
        timing = Timing()
        for _ in range(runs):
            editor()
            got = run(sk + ["search", editor.word(), "--json"], env=env, check=True, sample=QUICK)
            found = [h["path"] for h in json.loads(got.stdout)["hits"]]
            if found != [info["edit_file"]]:
                raise RuntimeError(f"the edit was not found by search: {found}")
            timing.runs.append(got)
        note("one-edit update, end to end", timing)
        note(
            "studykb build after 1 edit",
            repeat(
                sk + ["build", "--json"], runs, before=editor, check=True, env=env, sample=QUICK
            ),
        )
        upd = run(
            python_cmd(UPDATE_ONE, vault, info["edit_file"], str(max(runs, 5))), check=True, env=env
        )
        update = json.loads(upd.stdout)
        with watching(studykb_cmd(), vault):  # the same, answered by a running watch
            timing = Timing()
            for _ in range(runs):
                editor()
                got = run(
                    sk + ["search", editor.word(), "--json"], env=SERVED, check=True, sample=QUICK
                )
                found = [h["path"] for h in json.loads(got.stdout)["hits"]]
                if found != [info["edit_file"]]:
                    raise RuntimeError(f"the edit was not found through watch: {found}")
                timing.runs.append(got)
            note("one-edit update, watch running", timing)
            served_ms: list[float] = []
            for q in QUERIES:
                args = [q["q"], "--json"] + [x for t in q.get("type", ()) for x in ("--type", t)]
                t = repeat(
                    sk + ["search", *args],
                    max(2, runs // 2),
                    warmup=1,
                    check=True,
                    ok_codes=(0, 1),
                    env=SERVED,
                    sample=QUICK,
                )
                served_ms.extend(r.seconds for r in t.runs)
            print(
                f"  {'search, end to end, watch running':<34} p50 "
                f"{pct(served_ms, 0.5):.3f} s  p95 {pct(served_ms, 0.95):.3f} s",
                flush=True,
            )
    finally:
        editor.restore()
    run(sk + ["build"], check=True, env=env)

    lat = json.loads(
        run(
            python_cmd(LATENCY, vault, json.dumps(QUERIES, ensure_ascii=False), str(max(runs, 5))),
            check=True,
            env=env,
        ).stdout
    )
    e2e = Timing()
    e2e_ms: list[float] = []
    for q in QUERIES:
        args = [q["q"], "--json"] + [x for t in q.get("type", ()) for x in ("--type", t)]
        t = repeat(
            sk + ["search", *args],
            max(2, runs // 2),
            warmup=1,
            check=True,
            ok_codes=(0, 1),
            env=env,
            sample=QUICK,
        )
        e2e.runs.extend(t.runs)
        e2e_ms.extend(r.seconds for r in t.runs)
    res["search, end to end"] = e2e
    print(
        f"  {'search, end to end':<34} p50 {pct(e2e_ms, 0.5):.3f} s  p95 "
        f"{pct(e2e_ms, 0.95):.3f} s  tree {e2e.tree_mb:.0f} MB",
        flush=True,
    )

    table = Table("figure", "value", "baseline", "ratio", "target", "result")
    judged = n_docs >= 10000

    def verdict(ok: bool) -> str:
        return ("pass" if ok else "FAIL") if judged else "-"

    if builds:
        base = res["jieba+FTS5"].median
        build = res["full build (parse+graph+index)"].median
        table.add(
            "full build (parse+graph+index) s",
            build,
            f"{base:.2f} s",
            f"{build / base:.2f}x",
            "<= 1.0x",
            verdict(build <= base),
        )
        cli_build = res["studykb build (fresh state)"].median
        table.add(
            "studykb build, fresh state s",
            cli_build,
            f"{base:.2f} s",
            f"{cli_build / base:.2f}x",
            "-",
            "-",
        )
    one = res["one-edit update, end to end"].median
    table.add("one-edit update, end to end s", one, "-", "-", "<= 0.3 s", verdict(one <= 0.3))
    table.add(
        "studykb build after 1 edit s", res["studykb build after 1 edit"].median, "-", "-", "-", "-"
    )
    one_w = res["one-edit update, watch running"].median
    table.add(
        "one-edit update, studykb watch running s",
        one_w,
        "-",
        "-",
        "<= 0.3 s",
        verdict(one_w <= 0.3),
    )
    table.add(
        "  in-process: refresh s", statistics.median(r for r, _ in update), "-", "-", "-", "-"
    )
    table.add(
        "  in-process: index update s", statistics.median(s for _, s in update), "-", "-", "-", "-"
    )
    p50, p95 = pct(lat["all"], 0.5) / 1000, pct(lat["all"], 0.95) / 1000
    table.add("search p50, in-process s", p50, "-", "-", "<= 0.030 s", verdict(p50 <= 0.030))
    table.add("search p95, in-process s", p95, "-", "-", "-", "-")
    table.add("  no-op sync check p50 s", pct(lat["sync"], 0.5) / 1000, "-", "-", "-", "-")
    e50, e95 = pct(e2e_ms, 0.5), pct(e2e_ms, 0.95)
    table.add("search p50, end to end s", e50, "-", "-", "<= 0.4 s", verdict(e50 <= 0.4))
    table.add("search p95, end to end s", e95, "-", "-", "-", "-")
    w50, w95 = pct(served_ms, 0.5), pct(served_ms, 0.95)
    table.add(
        "search p50, end to end, watch running s", w50, "-", "-", "<= 0.4 s", verdict(w50 <= 0.4)
    )
    table.add("search p95, end to end, watch running s", w95, "-", "-", "-", "-")
    if builds:
        table.add(
            "index size MB", index_mb, f"{fts_mb:.1f} MB", f"{index_mb / fts_mb:.2f}x", "-", "-"
        )
    else:
        table.add("index size MB", index_mb, "-", "-", "-", "-")
    table.add("state (parse) size MB", state_mb, "-", "-", "-", "-")
    if builds:
        peak = max(
            res["full build (parse+graph+index)"].tree_mb,
            res["studykb build (fresh state)"].tree_mb,
            e2e.tree_mb,
        )
        table.add(
            "peak memory MB (tree)",
            peak,
            f"{res['jieba+FTS5'].tree_mb:.0f} MB",
            f"{peak / res['jieba+FTS5'].tree_mb:.2f}x",
            f"<= {MEMORY_TARGET_MB:g} MB",
            verdict(peak <= MEMORY_TARGET_MB),
        )
    per_query = Table("query", "p50 ms", "p95 ms", "hits")
    for name, samples in lat["per_query"].items():
        ms = [m for m, _h in samples]
        per_query.add(name, pct(ms, 0.5), pct(ms, 0.95), samples[0][1])
    print("\nin-process latency per query:")
    per_query.print()
    figures = {
        k: {"median": v.median, "best": v.best, "tree_mb": v.tree_mb} for k, v in res.items()
    }
    figures["latency_ms"] = {"p50": pct(lat["all"], 0.5), "p95": pct(lat["all"], 0.95)}
    figures["end_to_end_s"] = {"p50": e50, "p95": e95}
    figures["end_to_end_watch_s"] = {"p50": w50, "p95": w95}
    figures["update_in_process"] = update
    return table, {
        "docs": n_docs,
        "bytes": info["bytes"],
        "index_mb": index_mb,
        "baseline_fts_mb": fts_mb,
        "figures": figures,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10000, help="vault size (default 10000)")
    ap.add_argument("--runs", type=int, default=5, help="runs per quick figure (default 5)")
    ap.add_argument(
        "--heavy-runs",
        type=int,
        default=3,
        help="runs of the baseline and the full builds (default 3)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="where to generate the vault (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated vault")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--json", dest="json_out", help="write the figures to this JSON file")
    ap.add_argument(
        "--skip-builds",
        action="store_true",
        help="leave out the baseline and the full builds (and the figures compared with "
        "them): the vault is built once, untimed, for the one-edit update and latencies",
    )
    args = ap.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-search-")
    os.makedirs(workdir, exist_ok=True)
    preamble()
    try:
        table, result = bench(
            args.docs, args.runs, args.heavy_runs, workdir, args.seed, not args.skip_builds
        )
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}\n")
    report(table, result, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
