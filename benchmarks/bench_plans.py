"""Benchmarks of reading plans and the tracker on a synthetic vault.

    python benchmarks/bench_plans.py                    # 10k documents
    python benchmarks/bench_plans.py --docs 10000 --runs 7 --markdown

It generates a vault (benchmarks/gen_vault.py), builds it once, then measures:

* the plan for a target with at least 300 ancestors, in-process (``plans.plan`` with the
  knowledge already loaded, and with it loaded from the state), median of many runs,
  beside the bare graph walk it starts from (reach and order, no readings, no counts);
* ``studykb before TARGET --all --json``, ``before TARGET`` (text), ``status --json``,
  ``next --json`` and ``ask "what should I read before TARGET" --json`` end to end (fresh
  processes, state up to date), each beside a fresh Python process that only imports
  studykb's CLI and exits (the floor every command pays).

Targets on this 2-core machine: plan <= 50 ms in-process and <= 0.4 s end to end;
``status`` and ``next`` for the whole vault <= 0.4 s end to end.
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

from common import Table, python_cmd, ratio, repeat, run  # noqa: E402
from gen_vault import generate  # noqa: E402

STUDYKB = [sys.executable, "-m", "studykb"]


def in_process(vault_dir: str, target: str, runs: int) -> tuple[float, float, float, int]:
    """(median plan ms with knowledge loaded, median ms loading knowledge + plan, median ms
    of the bare graph walk the plan starts from (the baseline), steps)."""
    from studykb import graph as g
    from studykb.study import plans
    from studykb.vault import Vault
    from studykb.vault.lookup import find

    vault = Vault.open(vault_dir)
    vault.refresh()
    doc = find(vault, target)
    warm, cold, walk = [], [], []
    steps = 0
    kb = plans.knowledge(vault)
    plans.plan(vault, doc, include_known=True, kb=kb)  # warm the document cache
    for _ in range(runs):
        start = time.perf_counter()
        reach = g.within_depth(kb.graph, doc.key, None)
        g.ordered_blocks(kb.graph, [k for k in reach if k != doc.key], kb.sort_key)
        walk.append(time.perf_counter() - start)
        start = time.perf_counter()
        steps = len(plans.plan(vault, doc, include_known=True, kb=kb).steps)
        warm.append(time.perf_counter() - start)
        start = time.perf_counter()
        fresh = plans.knowledge(vault)
        plans.plan(vault, doc, include_known=True, kb=fresh)
        cold.append(time.perf_counter() - start)
    vault.close()
    return (
        statistics.median(warm) * 1000,
        statistics.median(cold) * 1000,
        statistics.median(walk) * 1000,
        steps,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--keep", help="generate into this folder and keep it")
    args = parser.parse_args()

    root = args.keep or tempfile.mkdtemp(prefix="studykb-plans-")
    try:
        if not os.path.exists(os.path.join(root, ".bench.json")):
            generate(root, args.docs, args.seed)
        with open(os.path.join(root, ".bench.json"), encoding="utf-8") as fh:
            meta = json.load(fh)
        target = meta["mid_target"]
        run([*STUDYKB, "--vault", root, "build"], check=True, ok_codes=(0, 1))
        # one query fills the plan cache, as any first query after a change does
        run([*STUDYKB, "--vault", root, "status", "--json"], check=True)

        floor = repeat(python_cmd("import studykb.cli, studykb.cli.core"), args.runs)
        warm_ms, cold_ms, walk_ms, steps = in_process(root, target, max(args.runs * 3, 15))
        cmds = {
            "before --all --json": [*STUDYKB, "--vault", root, "before", target, "--all", "--json"],
            "before (text)": [*STUDYKB, "--vault", root, "before", target],
            "status --json": [*STUDYKB, "--vault", root, "status", "--json"],
            "next --json": [*STUDYKB, "--vault", root, "next", "--json"],
            "ask --json": [
                *STUDYKB,
                "--vault",
                root,
                "ask",
                f"what should I read before {target}",
                "--json",
            ],
        }
        table = Table("figure", "value", "baseline", "ratio", "target", "ok")
        table.add(
            f"plan in-process, {steps} steps (ms)",
            warm_ms,
            walk_ms,
            ratio(warm_ms, walk_ms),
            "<= 50",
            "yes" if warm_ms <= 50 else "NO",
        )
        table.add("knowledge from state + plan (ms)", cold_ms, None, None, "-", "-")
        for name, cmd in cmds.items():
            timing = repeat(cmd, args.runs, warmup=1)
            table.add(
                f"{name} end to end (s)",
                timing.median,
                floor.median,
                ratio(timing.median, floor.median),
                "<= 0.4",
                "yes" if timing.median <= 0.4 else "NO",
            )
            table.add(f"{name} peak memory (MB)", timing.rss_mb, None, None, "-", "-")
        print(
            f"\n{args.docs} documents; target {target} ({meta.get('mid_ancestors')} ancestors);"
            f" baseline: python -c 'import studykb.cli' = {floor.median:.3f} s\n"
        )
        table.print(markdown=args.markdown)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
