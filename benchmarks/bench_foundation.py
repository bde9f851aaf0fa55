"""Benchmarks of the foundation: build, refresh, check and backlinks, end to end.

    python benchmarks/bench_foundation.py                 # 1k and 10k documents
    python benchmarks/bench_foundation.py --docs 10000 --runs 5 --markdown

For each size it generates a synthetic vault (benchmarks/gen_vault.py) and times
fresh ``studykb --vault DIR ...`` processes (median of several runs), each beside
a baseline measured in the same run:

* baseline (a), "markdown-it": one plain Python process that walks the vault,
  reads every file, parses its YAML front matter with CSafeLoader and runs
  ``MarkdownIt('commonmark').parse`` on it;
* baseline (b), "walk+stat": one Python process that walks the vault and stats
  every Markdown file (what a no-op refresh cannot avoid).

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

from common import Table, Timing, python_cmd, ratio, repeat, run  # noqa: E402
from gen_vault import generate  # noqa: E402

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

#: Full parse + resolve + graph in one process (fresh state), through the library.
BUILD_GRAPH = r"""
import sys
from studykb.vault import Vault
from studykb import graph
v = Vault.open(sys.argv[1])
stats = v.refresh()
g = graph.from_vault(v)
print(stats.documents, g.number_of_nodes(), g.number_of_edges())
"""

#: Python start-up alone, for reference.
BASELINE_PYTHON = "pass"

TARGETS_10K = {
    "no-op refresh": ("walk+stat", 3.0, None),
    "refresh after 1 edit": (None, None, 0.5),
    "parse+resolve+graph": ("markdown-it", 1.0, None),
    "check": (None, None, 0.4),
    "backlinks": (None, None, 0.4),
}
MEMORY_TARGET_MB = 500.0


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


def bench_size(n_docs: int, runs: int, workdir: str, seed: int) -> tuple[Table, dict]:
    vault = os.path.join(workdir, f"vault-{n_docs}")
    t0 = time.perf_counter()
    info = generate(vault, n_docs, seed)
    print(f"\n== {n_docs} documents ({info['bytes'] / 1e6:.1f} MB), generated in "
          f"{time.perf_counter() - t0:.1f} s: {vault}", flush=True)
    sk = studykb_cmd() + ["--vault", vault]
    heavy = max(3, runs // 2) if n_docs >= 5000 else runs
    env = {"NO_COLOR": "1"}
    res: dict[str, Timing] = {}

    def note(name: str, timing: Timing) -> None:
        res[name] = timing
        print(f"  {name:<28} median {timing.median:.3f} s  ({timing.spread()} over "
              f"{len(timing.runs)} runs)  rss {timing.rss_mb:.0f} MB  tree {timing.tree_mb:.0f} MB",
              flush=True)

    note("python start", repeat(python_cmd(BASELINE_PYTHON), runs, warmup=1))
    note("walk+stat", repeat(python_cmd(BASELINE_WALK, vault), runs, warmup=1, check=True))
    note("markdown-it", repeat(python_cmd(BASELINE_PARSE, vault), heavy, warmup=1, check=True))
    note("full build", repeat(sk + ["build", "--json"], heavy, before=lambda: wipe_state(vault),
                              check=True, env=env))
    note("parse+resolve+graph", repeat(python_cmd(BUILD_GRAPH, vault), heavy,
                                       before=lambda: wipe_state(vault), check=True, env=env))
    # bring the state up to date once, then time the steady-state commands
    run(sk + ["build"], check=True, env=env)
    note("no-op refresh", repeat(sk + ["build", "--json"], runs, warmup=1, check=True, env=env))
    editor = Editor(os.path.join(vault, info["edit_file"]))
    try:
        edit = repeat(sk + ["build", "--json"], runs, before=editor, check=True, env=env)
    finally:
        editor.restore()
    for r in edit.runs:
        got = json.loads(r.stdout)
        if got["modified"] != [info["edit_file"]]:
            raise RuntimeError(f"the edit was not seen as one modified file: {got}")
    note("refresh after 1 edit", edit)
    run(sk + ["build"], check=True, env=env)
    note("check", repeat(sk + ["check", "--json"], runs, warmup=1, check=True, ok_codes=(0, 1),
                         env=env))
    note("backlinks", repeat(sk + ["backlinks", info["backlinks_target"], "--json"], runs,
                             warmup=1, check=True, env=env))

    table = Table("figure", "docs", "median s", "baseline", "baseline s", "ratio", "target",
                  "result")
    judged = n_docs >= 10000
    rows = [("full build", "markdown-it"), ("parse+resolve+graph", "markdown-it"),
            ("no-op refresh", "walk+stat"), ("refresh after 1 edit", "walk+stat"),
            ("check", "walk+stat"), ("backlinks", "walk+stat")]
    for name, base in rows:
        value, base_s = res[name].median, res[base].median
        target_base, target_ratio, target_abs = TARGETS_10K.get(name, (None, None, None))
        rt = ratio(value, base_s)
        if target_ratio is not None:
            target = f"<= {target_ratio:g}x {target_base}"
            ok = rt is not None and rt <= target_ratio
        elif target_abs is not None:
            target = f"<= {target_abs:g} s"
            ok = value <= target_abs
        else:
            target, ok = "-", None
        verdict = "-" if ok is None or not judged else ("pass" if ok else "FAIL")
        table.add(name, n_docs, value, base, base_s, f"{rt:.2f}x" if rt else "-", target, verdict)
    peak = max(res["full build"].tree_mb, res["parse+resolve+graph"].tree_mb)
    base_mem = res["markdown-it"].tree_mb
    table.add("peak memory MB (build, tree)", n_docs, peak, "markdown-it", base_mem,
              f"{peak / base_mem:.2f}x", f"<= {MEMORY_TARGET_MB:g} MB",
              ("pass" if peak <= MEMORY_TARGET_MB else "FAIL") if judged else "-")
    table.add("peak memory MB (1 process)", n_docs,
              max(res["full build"].rss_mb, res["parse+resolve+graph"].rss_mb), "markdown-it",
              res["markdown-it"].rss_mb, "-", "-", "-")
    table.add("python start (reference)", n_docs, res["python start"].median, "-", None, "-",
              "-", "-")
    figures = {k: {"median": v.median, "best": v.best, "rss_mb": v.rss_mb, "tree_mb": v.tree_mb}
               for k, v in res.items()}
    return table, {"docs": n_docs, "bytes": info["bytes"], "figures": figures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, action="append",
                    help="vault size (repeatable; default 1000 and 10000)")
    ap.add_argument("--runs", type=int, default=5, help="runs per quick figure (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="where to generate vaults (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated vaults")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--json", dest="json_out", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    sizes = args.docs or [1000, 10000]
    workdir = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-")
    os.makedirs(workdir, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')}")
    tables, results = [], []
    try:
        for n in sizes:
            table, result = bench_size(n, args.runs, workdir, args.seed)
            tables.append(table)
            results.append(result)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    merged = Table(*tables[0].headers)
    for t in tables:
        merged.rows.extend(t.rows)
    merged.print()
    if args.markdown:
        print()
        merged.print(markdown=True)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
