"""Benchmarks of the foundation: build, refresh, check and backlinks, end to end.

    python benchmarks/bench_foundation.py                 # 1k and 10k documents
    python benchmarks/bench_foundation.py --docs 10000 --runs 5 --markdown

For each size it generates a synthetic vault (benchmarks/gen_vault.py) and times
fresh processes (median of several runs), each beside a baseline measured in the
same run, in turns (baseline, figure, baseline, figure...) so that a busy machine
disturbs both alike:

* baseline (a), "markdown-it": one plain Python process that walks the vault,
  reads every file, parses its YAML front matter with CSafeLoader and runs
  ``MarkdownIt('commonmark').parse`` on it;
* baseline (b), "walk+stat": one Python process that walks the vault and stats
  every Markdown file (what a no-op refresh cannot avoid).

The figures: ``studykb --vault DIR build|check|backlinks X`` end to end, and the
foundation alone in a fresh process through the library (``Vault.refresh()``,
then ``graph.build``), because ``studykb build`` also brings the full-text
search index up to date (issue 3), which is not the foundation's work.

Targets (for 10k documents on a 2-core machine): no-op refresh <= 3x walk+stat;
refresh after one edit <= 0.5 s; full parse + resolve + graph <= 1.0x markdown-it;
check and backlinks <= 0.4 s with the state up to date; peak memory <= 500 MB.
Targets are only judged at 10k; at 1k the ratios are shown for information.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
    ratio,
    report,
    run,
    watching,
)

#: Baseline (a): walk, read, YAML front matter (CSafeLoader), markdown-it commonmark parse.
BASELINE_PARSE = r"""
import os, sys, yaml
from markdown_it import MarkdownIt
root = sys.argv[1]
md = MarkdownIt('commonmark')
n = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith('.')]
    for name in filenames:
        if not name.endswith('.md'):
            continue
        with open(os.path.join(dirpath, name), 'rb') as fh:
            text = fh.read().decode('utf-8-sig').replace('\r\n', '\n')
        body = text
        if text.lstrip('\n').startswith('---\n'):
            text = text.lstrip('\n')
            end = text.find('\n---\n', 4)
            if end != -1:
                yaml.load(text[4:end], Loader=yaml.CSafeLoader)
                body = text[end + 5:]
        md.parse(body)
        n += 1
print(n)
"""

#: Baseline (b): walk and stat every Markdown file.
BASELINE_WALK = r"""
import os, sys
root = sys.argv[1]
n = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith('.')]
    for name in filenames:
        if name.endswith('.md'):
            os.stat(os.path.join(dirpath, name))
            n += 1
print(n)
"""

#: The foundation's refresh alone in a fresh process (no CLI, no search index).
REFRESH = r"""
import sys
from studykb.vault import Vault
v = Vault.open(sys.argv[1])
stats = v.refresh()
print(stats.documents, len(stats.added), len(stats.modified))
"""

#: Full parse + resolve + graph in one fresh process, through the library.
BUILD_GRAPH = r"""
import sys
from studykb.vault import Vault
from studykb import graph
v = Vault.open(sys.argv[1])
stats = v.refresh()
g = graph.build(v.documents(), v.graph_edges(), v.topics())
print(stats.documents, g.number_of_nodes(), g.number_of_edges())
"""

#: Python start-up alone, for reference.
BASELINE_PYTHON = "pass"

MEMORY_TARGET_MB = 500.0
#: Seconds between memory samples of a full build (see bench_size).
HEAVY_SAMPLE = 0.05
#: figure -> (baseline, target ratio to it or None, absolute target in seconds or None)
FIGURES = [
    ("full build: studykb build (+ search index)", "markdown-it", None, None),
    ("full parse+resolve (library)", "markdown-it", None, None),
    ("full parse+resolve+graph (library)", "markdown-it", 1.0, None),
    ("no-op refresh: studykb build", "walk+stat", 3.0, None),
    ("no-op refresh (library)", "walk+stat", 3.0, None),
    ("refresh after 1 edit: studykb build", "walk+stat", None, 0.5),
    ("refresh after 1 edit (library)", "walk+stat", None, 0.5),
    ("check", "walk+stat", None, 0.4),
    ("backlinks", "walk+stat", None, 0.4),
    ("no-op refresh: studykb build, watch running", "walk+stat", 3.0, None),
    ("refresh after 1 edit: studykb build, watch running", "walk+stat", None, 0.5),
    ("check, watch running", "walk+stat", None, 0.4),
    ("backlinks, watch running", "walk+stat", None, 0.4),
]


def studykb_cmd() -> list[str]:
    exe = shutil.which("studykb", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "studykb"]


def wipe_state(vault: str) -> None:
    shutil.rmtree(os.path.join(vault, ".studykb"), ignore_errors=True)


class Editor:
    """Appends a distinct line to one file before each run, and restores it at the end."""

    def __init__(self, path: str) -> None:
        self.path = path
        with open(path, "rb") as fh:
            self.original = fh.read()
        self.n = 0

    def __call__(self) -> None:
        self.n += 1
        with open(self.path, "ab") as fh:
            fh.write(f"\nEdited line {self.n} with [[entry-00001]].\n".encode())

    def restore(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(self.original)


def generate_vault(vault: str, n_docs: int, seed: int) -> dict:
    """Generate in a child process, so this script stays small (see common.py on memory)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isdir(vault) and not os.path.exists(os.path.join(vault, ".bench.json")):
        raise SystemExit(f"{vault} exists and is not a generated vault")
    run(
        [
            sys.executable,
            os.path.join(here, "gen_vault.py"),
            vault,
            "--docs",
            str(n_docs),
            "--seed",
            str(seed),
        ],
        check=True,
    )
    with open(os.path.join(vault, ".bench.json"), encoding="utf-8") as fh:
        return json.load(fh)


def bench_size(
    n_docs: int, runs: int, workdir: str, seed: int, with_index: bool
) -> tuple[Table, dict]:
    vault = os.path.join(workdir, f"vault-{n_docs}")
    t0 = time.perf_counter()
    info = generate_vault(vault, n_docs, seed)
    print(
        f"\n== {n_docs} documents ({info['bytes'] / 1e6:.1f} MB), generated in "
        f"{time.perf_counter() - t0:.1f} s: {vault}",
        flush=True,
    )
    sk = studykb_cmd() + ["--vault", vault]
    heavy = max(3, runs // 2) if n_docs >= 5000 else runs
    env = LOCAL
    opts = {"check": True, "ok_codes": (0, 1), "env": env}
    res: dict[str, Timing] = {}

    def note(group: dict[str, Timing]) -> None:
        for name, timing in group.items():
            res[name] = timing
            print(
                f"  {name:<44} median {timing.median:6.3f} s ({timing.spread()}, "
                f"{len(timing.runs)} runs)  cpu {timing.cpu:6.2f} s  "
                f"rss {timing.rss_mb:4.0f} MB  tree {timing.tree_mb:4.0f} MB",
                flush=True,
            )

    wipe = {}
    full = {
        "markdown-it": python_cmd(BASELINE_PARSE, vault),
        "full parse+resolve (library)": python_cmd(REFRESH, vault),
        "full parse+resolve+graph (library)": python_cmd(BUILD_GRAPH, vault),
    }
    if with_index:
        full["full build: studykb build (+ search index)"] = sk + ["build", "--json"]
    for name in full:
        if name != "markdown-it":
            wipe[name] = lambda: wipe_state(vault)
    # memory sampled every 50 ms, not 5: on 2 cores a sampler reading /proc for a tree of
    # three busy processes takes CPU from them that a one-process baseline never loses
    note(interleave(full, heavy, before=wipe, sample=HEAVY_SAMPLE, **opts))

    run(sk + ["build"], **opts)  # state (and search index) up to date from here on
    quick = {
        "python start": python_cmd(BASELINE_PYTHON),
        "walk+stat": python_cmd(BASELINE_WALK, vault),
        "no-op refresh: studykb build": sk + ["build", "--json"],
        "no-op refresh (library)": python_cmd(REFRESH, vault),
        "check": sk + ["check", "--json"],
        "backlinks": sk + ["backlinks", info["backlinks_target"], "--json"],
    }
    note(interleave(quick, runs, warmup=1, **opts))

    editor = Editor(os.path.join(vault, info["edit_file"]))
    edits = {
        "refresh after 1 edit: studykb build": sk + ["build", "--json"],
        "refresh after 1 edit (library)": python_cmd(REFRESH, vault),
    }
    try:
        timed = interleave(edits, runs, before={k: editor for k in edits}, **opts)
    finally:
        editor.restore()
    for r in timed["refresh after 1 edit: studykb build"].runs:
        got = json.loads(r.stdout)
        if got["modified"] != [info["edit_file"]]:
            raise RuntimeError(f"the edit was not seen as one modified file: {got}")
    note(timed)
    run(sk + ["build"], **opts)

    # the same commands answered by a running `studykb watch` (see client.py)
    served_opts = {**opts, "env": SERVED}
    with watching(studykb_cmd(), vault):
        served = {
            "no-op refresh: studykb build, watch running": sk + ["build", "--json"],
            "check, watch running": sk + ["check", "--json"],
            "backlinks, watch running": sk + ["backlinks", info["backlinks_target"], "--json"],
        }
        note(interleave(served, runs, warmup=1, **served_opts))
        try:
            note(
                interleave(
                    {
                        "refresh after 1 edit: studykb build, watch running": sk
                        + ["build", "--json"]
                    },
                    runs,
                    before={"refresh after 1 edit: studykb build, watch running": editor},
                    **served_opts,
                )
            )
        finally:
            editor.restore()
    run(sk + ["build"], **opts)

    table = Table(
        "figure", "docs", "median s", "cpu s", "baseline", "baseline s", "ratio", "target", "result"
    )
    judged = n_docs >= 10000
    for name, base, target_ratio, target_abs in FIGURES:
        if name not in res:
            continue
        value, base_s = res[name].median, res[base].median
        rt = ratio(value, base_s)
        if target_ratio is not None:
            target, ok = f"<= {target_ratio:g}x", rt is not None and rt <= target_ratio
        elif target_abs is not None:
            target, ok = f"<= {target_abs:g} s", value <= target_abs
        else:
            target, ok = "-", None
        verdict = "-" if ok is None or not judged else ("pass" if ok else "FAIL")
        table.add(
            name,
            n_docs,
            value,
            res[name].cpu,
            base,
            base_s,
            f"{rt:.2f}x" if rt else "-",
            target,
            verdict,
        )
    builds = [k for k in full if k != "markdown-it"]
    for name in builds:
        peak = res[name].tree_mb
        table.add(
            f"peak memory MB: {name}",
            n_docs,
            peak,
            "-",
            "markdown-it",
            res["markdown-it"].tree_mb,
            f"{peak / res['markdown-it'].tree_mb:.2f}x",
            f"<= {MEMORY_TARGET_MB:g} MB",
            ("pass" if peak <= MEMORY_TARGET_MB else "FAIL") if judged else "-",
        )
    table.add(
        "python start (reference)",
        n_docs,
        res["python start"].median,
        res["python start"].cpu,
        "-",
        None,
        "-",
        "-",
        "-",
    )
    figures = {
        k: {
            "median": v.median,
            "best": v.best,
            "cpu": v.cpu,
            "rss_mb": v.rss_mb,
            "tree_mb": v.tree_mb,
            "runs": [r.seconds for r in v.runs],
        }
        for k, v in res.items()
    }
    return table, {"docs": n_docs, "bytes": info["bytes"], "figures": figures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--docs", type=int, action="append", help="vault size (repeatable; default 1000 and 10000)"
    )
    ap.add_argument("--runs", type=int, default=5, help="runs per quick figure (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="where to generate vaults (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated vaults")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument(
        "--no-index",
        action="store_true",
        help="skip the full `studykb build` (it also builds the search index)",
    )
    ap.add_argument("--json", dest="json_out", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    sizes = args.docs or [1000, 10000]
    workdir = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-")
    os.makedirs(workdir, exist_ok=True)
    preamble()
    tables, results = [], []
    try:
        for n in sizes:
            table, result = bench_size(n, args.runs, workdir, args.seed, not args.no_index)
            tables.append(table)
            results.append(result)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    merged = Table(*tables[0].headers)
    for t in tables:
        merged.rows.extend(t.rows)
    report(merged, results, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
