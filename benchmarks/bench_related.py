"""Benchmarks of related documents and the sidebar, on a synthetic vault.

    python benchmarks/bench_related.py                       # 10k documents
    python benchmarks/bench_related.py --docs 1000 --runs 3 --markdown

Figures (fresh processes unless said otherwise; medians of several runs):

* full index build: ``studykb build`` from an empty state (parse, resolve and the
  full-text search index): the baseline the whole-vault sidebar is compared with;
* related, in-process: ``related(vault, doc)`` through the library, in one process that
  has already answered once (the editor server, the web page), per call over many notes;
  also the first call of a fresh process, which loads the caches;
* related, end to end: ``studykb related ID --json``;
* related after one edit, end to end: a line is appended to a note (with a link, or a
  Chinese sentence) before each run, so each ``studykb related`` first brings the state
  and the related caches up to date (only the edited file is read again: see
  ``studykb.vault.derived``), in turns with ``studykb backlinks`` (the baseline:
  any other query on the same state) and with ``related`` without an edit;
* drift of the incremental text vectors: after 0.5 %, 1 % and 2 % of the notes were
  edited and read incrementally, how the related lists compare with a full rebuild
  (overlap of the top 10, over 200 notes);
* sidebar, every document: ``studykb sidebar --format json -o FILE``, with the related
  caches up to date, and "cold" right after a build (the caches are built first);
* peak memory of each, as the largest resident set of a process.

Wall-clock times depend on what else the machine runs; the CPU column (user + system
time of the process and its workers) shows the work itself.

Targets (10k documents): related <= 50 ms in-process and <= 0.4 s end to end, also the
first one after an edit; the sidebar for every document <= 1.0x the full index build;
peak memory <= 1 GB; top-10 overlap with a full rebuild >= 0.9 up to the drift bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import LOCAL, Table, interleave, precompile, python_cmd, repeat, run  # noqa: E402

IN_PROCESS = r"""
import json, random, statistics, sys, time
from studykb.vault import Vault
from studykb.related.rank import related, RelatedOptions
vault = Vault.open(sys.argv[1]); vault.refresh()
docs = vault.documents()
notes = sorted(k for k, d in docs.items() if d.type == "note")
random.Random(7).shuffle(notes)
t = time.perf_counter(); related(vault, docs[notes[0]]); first = time.perf_counter() - t
times = []
for key in notes[1:int(sys.argv[2]) + 1]:
    t = time.perf_counter()
    found = related(vault, docs[key], RelatedOptions(limit=10))
    times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"first": first, "median": statistics.median(times),
                  "p95": times[int(len(times) * 0.95)], "max": times[-1], "n": len(times)}))
"""

MEMORY_TARGET_MB = 1024.0


def studykb_cmd() -> list[str]:
    exe = shutil.which("studykb", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "studykb"]


def drop_related_caches(vault: str) -> None:
    """Forget the related caches (entries of .studykb/cache.sqlite)."""
    import sqlite3

    path = os.path.join(vault, ".studykb", "cache.sqlite")
    if os.path.exists(path):
        with sqlite3.connect(path) as db:
            db.execute("DELETE FROM entries WHERE name LIKE 'related-%'")


class Editor:
    """Appends a distinct line to one note before each run; restores it at the end."""

    def __init__(self, path: str, chinese: bool) -> None:
        self.path, self.chinese = path, chinese
        with open(path, "rb") as fh:
            self.original = fh.read()
        self.n = 0

    def __call__(self) -> None:
        self.n += 1
        line = (
            f"\n新加的一行：张量并行和流水线并行的调度，第 {self.n} 次。\n"
            if self.chinese
            else f"\nEdited line {self.n} with [[entry-00001]].\n"
        )
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)

    def restore(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(self.original)


#: Measures the drift of the incremental text vectors against a full rebuild (in-process).
DRIFT = r"""
import json, random, sys
from studykb.vault import Vault
from studykb.related import vectorcache
vault = Vault.open(sys.argv[1]); vault.refresh()
shares = [float(x) for x in sys.argv[2].split(",")]
vectorcache.DRIFT_MAX = 1.0  # let the updates run past the bound, to measure
docs = vault.documents()
notes = sorted(k for k, d in docs.items() if d.type == "note")
rng = random.Random(3)
sample = rng.sample(notes, min(200, len(notes)))
words = ["张量", "并行", "显存", "调度", "kernel", "fusion", "bandwidth", "pipeline", "缓存"]
vault.derived(vectorcache.VECTORS)
edited, out = 0, {}
for share in shares:
    todo = rng.sample(notes, int(share * len(notes)) - edited)
    for key in todo:
        with open(vault.root / docs[key].path, "a", encoding="utf-8") as fh:
            fh.write("\n" + " ".join(rng.choices(words, k=12)) + "\n")
    edited += len(todo)
    vault.refresh()
    tv = vault.derived(vectorcache.VECTORS).tv
    full, _store = vectorcache.build(vault, vault.fingerprint())
    overlap = []
    for key in sample:
        a = [k for k, _s, _w in tv.similar(key, 10)]
        b = [k for k, _s, _w in full.similar(key, 10)]
        overlap.append(len(set(a) & set(b)) / max(1, len(b)))
    out[str(share)] = sum(overlap) / len(overlap)
print(json.dumps(out))
"""


def whole_vault(sk, vault, workdir, heavy, opts, add, wipe):  # type: ignore[no-untyped-def]
    """The full build (the baseline) and the sidebar of every document; their count."""
    build = repeat(sk + ["build", "--json"], heavy, before=wipe, **opts)
    base = build.median
    add(
        "full index build: studykb build",
        base,
        len(build.runs),
        build.rss_mb,
        "baseline",
        None,
        build.cpu,
    )
    drop_related_caches(vault)
    out = os.path.join(workdir, "sidebar.json")
    cold = run(sk + ["sidebar", "--format", "json", "-o", out], **opts)
    add(
        "sidebar, every document (cold caches)",
        cold.seconds,
        1,
        cold.rss_mb,
        f"<= {base:.1f} s (1.0x build)",
        cold.seconds <= base,
        cold.cpu,
    )
    warm = repeat(sk + ["sidebar", "--format", "json", "-o", out], heavy, **opts)
    add(
        "sidebar, every document",
        warm.median,
        len(warm.runs),
        warm.rss_mb,
        f"<= {base:.1f} s (1.0x build)",
        warm.median <= base,
        warm.cpu,
    )
    with open(out, encoding="utf-8") as fh:
        return len(json.load(fh))


#: The sidebar of every document, right after a build, at most this share of the build.
SIDEBAR_RATIO = 0.3


def _sidebar_only(table, figures, count, args):  # type: ignore[no-untyped-def]
    """The table of the build and the whole-vault sidebar, with the sidebar's ratio."""
    build = figures["full index build: studykb build"]["seconds"]
    for name in ("sidebar, every document (cold caches)", "sidebar, every document"):
        ratio = figures[name]["seconds"] / build
        figures[name]["ratio"] = ratio
        table.add(
            f"  {name} / build",
            ratio,
            None,
            "",
            "",
            f"<= {SIDEBAR_RATIO}x",
            "yes" if ratio <= SIDEBAR_RATIO else "NO",
        )
    print(f"\n{args.docs} documents, {count} sidebars; machine: {os.cpu_count()} cores\n")
    table.print(markdown=args.markdown)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"docs": args.docs, "figures": figures}, fh, indent=2)
    return 0 if all(f["ok"] is not False for f in figures.values()) else 1


def edit_turns(vault: str, before_src: str | None, runs: int, add, first: int) -> None:  # type: ignore[no-untyped-def]
    """The rows of one document after an edit, end to end, in fresh local processes
    (``STUDYKB_LOCAL=1``): ``related`` after a one-line edit and ``backlinks`` after the
    same kind of edit, ``related`` with nothing edited, and (``first``) the first
    ``related`` after ``studykb build`` from scratch. With ``before_src`` (a ``src``
    folder of the code before) each command runs in turns for both versions, each on
    its own copy of the vault (``VAULT-before``, kept from a last run), its related
    caches made by it."""
    with open(os.path.join(vault, ".bench.json"), encoding="utf-8") as fh:
        note = json.load(fh)["edit_file"]
    key = note.rsplit("/", 1)[-1][:-3]
    print(precompile(), flush=True)  # both versions' bytecode, as an install has it
    if before_src:
        import compileall

        compileall.compile_dir(before_src, quiet=1)
    versions = {"after": (vault, LOCAL)}
    if before_src:
        other = vault.rstrip("/") + "-before"  # kept from a last run: its state is its own
        if not os.path.exists(os.path.join(other, ".studykb")):
            shutil.rmtree(other, ignore_errors=True)
            shutil.copytree(vault, other)
        versions["before"] = (other, {**LOCAL, "PYTHONPATH": before_src})
    opts = {"check": True, "ok_codes": (0, 1)}
    sk = [sys.executable, "-m", "studykb", "--vault"]
    cmds, envs, edits = {}, {}, {}
    rows = (  # in this order: the second related finds nothing edited
        ("related after 1 edit", "related", True),
        ("related, nothing edited", "related", False),
        ("backlinks after the same kind of edit", "backlinks", True),
    )
    for what, argv, edit in rows:  # each row in turns, version after version
        for ver, (path, env) in versions.items():
            cmds[f"{what} [{ver}]"] = (sk + [path, argv, key, "--json"], edit)
            envs[f"{what} [{ver}]"] = env
    for ver, (path, env) in versions.items():
        edits[ver] = Editor(os.path.join(path, note), chinese=False)
        run(sk + [path, "related", key, "--json"], env=env, **opts)  # its own caches
    timings: dict[str, list] = {name: [] for name in cmds}  # type: ignore[type-arg]
    try:
        for _turn in range(runs + 1):
            for name, (cmd, edit) in cmds.items():
                if edit:
                    edits[name.rsplit("[", 1)[1][:-1]]()
                got = run(cmd, env=envs[name], **opts)
                if _turn:
                    timings[name].append(got)
    finally:
        for editor in edits.values():
            editor.restore()
    for name, got in timings.items():
        secs = sorted(r.seconds for r in got)
        cpu = sorted(r.cpu for r in got)
        mid = len(secs) // 2
        add(name, secs[mid], len(secs), max(r.rss_mb for r in got), "(turns)", None, cpu[mid])
    if first:  # builds and firsts in turns, version after version
        builds: dict[str, list] = {ver: [] for ver in versions}  # type: ignore[type-arg]
        firsts: dict[str, list] = {ver: [] for ver in versions}  # type: ignore[type-arg]
        for _turn in range(first):
            for ver, (path, env) in versions.items():
                shutil.rmtree(os.path.join(path, ".studykb"), ignore_errors=True)
                builds[ver].append(run(sk + [path, "build", "--json"], env=env, **opts))
                firsts[ver].append(run(sk + [path, "related", key, "--json"], env=env, **opts))
        for ver in versions:
            for what, got, target in (
                ("studykb build, from scratch", builds[ver], None),
                ("first related after the build", firsts[ver], 0.3),
            ):
                secs = sorted(r.seconds for r in got)
                cpu = sorted(r.cpu for r in got)
                mid = len(secs) // 2
                add(
                    f"{what} [{ver}]",
                    secs[mid],
                    len(secs),
                    max(r.rss_mb for r in got),
                    "(info)" if target is None else f"<= {target:.3f} s",
                    None if target is None else secs[mid] <= target,
                    cpu[mid],
                )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calls", type=int, default=300, help="in-process calls to time")
    ap.add_argument("--workdir", help="keep the generated vault here")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument(
        "--quick", action="store_true", help="leave out the full build and the whole-vault sidebar"
    )
    ap.add_argument(
        "--sidebar-only",
        action="store_true",
        help="only the full build and the whole-vault sidebar (and their ratio)",
    )
    ap.add_argument("--vault", help="use this vault (a copy: it is edited and restored)")
    ap.add_argument(
        "--edit-only",
        action="store_true",
        help="only the rows of one document after an edit (see edit_turns)",
    )
    ap.add_argument("--before", help="with --edit-only: the src folder of the code before")
    ap.add_argument(
        "--first",
        type=int,
        nargs="?",
        const=1,
        default=0,
        help="with --edit-only: also the first related after a build from scratch (this many"
        " times, in turns)",
    )
    args = ap.parse_args(argv)

    workdir = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-related-")
    vault = args.vault or os.path.join(workdir, f"vault-{args.docs}")
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(vault, ".bench.json")):
        run(
            [sys.executable, os.path.join(here, "gen_vault.py"), vault, "--docs", str(args.docs)],
            check=True,
        )
    sk = studykb_cmd() + ["--vault", vault]
    opts = {"check": True, "ok_codes": (0, 1), "env": {"NO_COLOR": "1"}}
    heavy = max(2, args.runs // 2)
    table = Table("figure", "median s", "cpu s", "runs", "peak MB", "target", "ok")
    figures: dict[str, dict] = {}

    def add(
        name: str,
        seconds: float,
        runs: int,
        mb: float,
        target: str,
        ok: bool | None,
        cpu: float | None = None,
    ) -> None:
        figures[name] = {"seconds": seconds, "cpu": cpu, "runs": runs, "peak_mb": mb, "ok": ok}
        table.add(
            name, seconds, cpu, runs, mb, target, "-" if ok is None else ("yes" if ok else "NO")
        )
        print(
            f"  {name:<46} {seconds:8.3f} s  cpu {cpu or 0:7.3f} s  {mb:6.0f} MB  {target}",
            flush=True,
        )

    def wipe() -> None:
        shutil.rmtree(os.path.join(vault, ".studykb"), ignore_errors=True)

    if args.edit_only:
        if not os.path.exists(os.path.join(vault, ".studykb")):
            run(sk + ["build", "--json"], **opts)
        edit_turns(vault, args.before, args.runs, add, args.first)
        print(f"\n{args.docs} documents; machine: {os.cpu_count()} cores\n")
        table.print(markdown=args.markdown)
        return 0

    count = 0
    if not args.quick:
        count = whole_vault(sk, vault, workdir, heavy, opts, add, wipe)
    else:
        run(sk + ["build", "--json"], **opts)
    if args.sidebar_only:
        return _sidebar_only(table, figures, count, args)

    lib = run(python_cmd(IN_PROCESS, vault, str(args.calls)), **opts)
    stats = json.loads(lib.stdout)
    add(
        f"related, in-process (median of {stats['n']} calls)",
        stats["median"],
        stats["n"],
        lib.rss_mb,
        "<= 0.050 s",
        stats["median"] <= 0.05,
    )
    add(
        "related, in-process p95",
        stats["p95"],
        stats["n"],
        lib.rss_mb,
        "<= 0.050 s",
        stats["p95"] <= 0.05,
    )
    add("related, first call of a process", stats["first"], 1, lib.rss_mb, "(info)", None)

    with open(os.path.join(vault, ".bench.json"), encoding="utf-8") as fh:
        info = json.load(fh)
    note = info["edit_file"].rsplit("/", 1)[-1][:-3]
    e2e = interleave(
        {"related": sk + ["related", note, "--json"], "python": python_cmd("pass")},
        args.runs + 2,
        warmup=1,
        **opts,
    )
    add(
        "related, end to end (studykb related --json)",
        e2e["related"].median,
        len(e2e["related"].runs),
        e2e["related"].rss_mb,
        "<= 0.400 s",
        e2e["related"].median <= 0.4,
        e2e["related"].cpu,
    )
    add(
        "python start-up (reference)",
        e2e["python"].median,
        len(e2e["python"].runs),
        e2e["python"].rss_mb,
        "(info)",
        None,
        e2e["python"].cpu,
    )

    edits = {
        "related after 1 edit (a line with a link)": False,
        "related after 1 edit (a Chinese line)": True,
    }
    for name, chinese in edits.items():
        editor = Editor(os.path.join(vault, info["edit_file"]), chinese)
        baseline = "backlinks after the same kind of edit"
        try:
            turns = interleave(
                {
                    name: sk + ["related", note, "--json"],
                    baseline: sk + ["backlinks", note, "--json"],
                },
                args.runs + 2,
                warmup=1,
                before={name: editor, baseline: editor},
                **opts,
            )
        finally:
            editor.restore()
        base_q = turns[baseline].median
        add(
            name,
            turns[name].median,
            len(turns[name].runs),
            turns[name].rss_mb,
            f"<= 0.400 s ({turns[name].median / base_q:.2f}x backlinks {base_q:.3f} s)",
            turns[name].median <= 0.4,
            turns[name].cpu,
        )
        add(
            f"  {baseline} ({'Chinese' if chinese else 'link'})",
            base_q,
            len(turns[baseline].runs),
            turns[baseline].rss_mb,
            "(baseline)",
            None,
            turns[baseline].cpu,
        )
    run(sk + ["related", note, "--json"], **opts)  # the restored note, read again

    drift_dir = os.path.join(workdir, f"drift-{args.docs}")
    shutil.rmtree(drift_dir, ignore_errors=True)
    shutil.copytree(vault, drift_dir)
    drift = json.loads(run(python_cmd(DRIFT, drift_dir, "0.005,0.01,0.02"), **opts).stdout)
    for share, overlap in drift.items():
        add(
            f"top-10 overlap with a full rebuild, {float(share):.1%} edited",
            overlap,
            1,
            0.0,
            ">= 0.90",
            overlap >= 0.9,
        )
    shutil.rmtree(drift_dir, ignore_errors=True)

    peak = max(f["peak_mb"] for name, f in figures.items() if "build" not in name)
    add(
        "peak memory of the related/sidebar runs",
        0.0,
        0,
        peak,
        f"<= {MEMORY_TARGET_MB:.0f} MB",
        peak <= MEMORY_TARGET_MB,
    )
    print(f"\n{args.docs} documents, {count} sidebars; machine: {os.cpu_count()} cores\n")
    table.print(markdown=args.markdown)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"docs": args.docs, "figures": figures, "in_process": stats}, fh, indent=2)
    return 0 if all(f["ok"] is not False for f in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
