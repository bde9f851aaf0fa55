"""`studykb related` end to end, before and after the engine's matrices were kept in the
cache, in the same run on copies of the same vaults.

    python benchmarks/bench_related_kept.py --before /tmp/before/src VAULT [VAULT...]

``--before`` is the ``src`` folder of the older checkout (``git archive COMMIT src``);
the code measured as "after" is this checkout's ``src`` (or ``--after``). Each vault is
copied twice (each version keeps its own cache). Figures, per vault and version:

* ``build``: ``studykb build`` from an empty state (once: the baseline of its budget);
* ``first related after build``: the first ``studykb related ID --json`` after it;
* ``related``: the same again, caches up to date (median, in turns before/after);
* ``related after 1 edit``: a line appended to the note before each run (in turns).

Wall-clock medians and the CPU time (user + system) of the same runs: on a shared
machine the CPU column shows the work itself. ``--keep-state`` copies a state built once
by the older code instead of building in each copy (for large vaults).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_related import Editor  # noqa: E402
from common import Table, run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def note_of(vault: str) -> tuple[str, str]:
    """(the id to ask for, the file to edit): the generator's edit note, or fsdp2."""
    info = os.path.join(vault, ".bench.json")
    if os.path.exists(info):
        with open(info, encoding="utf-8") as fh:
            path = json.load(fh)["edit_file"]
        return path.rsplit("/", 1)[-1][:-3], path
    return "fsdp2", "notes/topics/fsdp2.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vaults", nargs="+")
    ap.add_argument("--before", required=True, help="src folder of the older code")
    ap.add_argument("--after", default=os.path.join(os.path.dirname(HERE), "src"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--keep-state",
        action="store_true",
        help="copy the vault's .studykb (built by the older code) instead of building",
    )
    args = ap.parse_args(argv)
    work = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-kept-")
    table = Table(
        "vault", "figure", "before s", "after s", "after/before", "before cpu", "after cpu"
    )
    for vault in args.vaults:
        name = os.path.basename(vault.rstrip("/"))
        ident, edit = note_of(vault)
        cmds, copies = {}, {}
        for version, src in (("before", args.before), ("after", args.after)):
            copy = copies[version] = os.path.join(work, f"{name}-{version}")
            shutil.rmtree(copy, ignore_errors=True)
            skip = () if args.keep_state else (".studykb",)
            shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(*skip))
            env = {"PYTHONPATH": os.path.abspath(src), "NO_COLOR": "1", "STUDYKB_LOCAL": "1"}
            sk = [sys.executable, "-m", "studykb", "--vault", copy]
            cmds[version] = (sk, env)
        got: dict[str, dict[str, tuple[float, float]]] = {"before": {}, "after": {}}
        for version, (sk, env) in cmds.items():
            first_name = "first related" + ("" if args.keep_state else " after build")
            if not args.keep_state:
                built = run(sk + ["build", "--json"], env=env, check=True, ok_codes=(0, 1))
                got[version]["build"] = (built.seconds, built.cpu)
            first = run(sk + ["related", ident, "--json"], env=env, check=True, ok_codes=(0, 1))
            got[version][first_name] = (first.seconds, first.cpu)
            print(f"  {name} {version}: {got[version]}", flush=True)
        opts = {"check": True, "ok_codes": (0, 1)}
        # in turns (before, after, before...), each version with its own PYTHONPATH
        for figure, editing in (("related", False), ("related after 1 edit", True)):
            times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
            editors = {v: Editor(os.path.join(copies[v], edit), chinese=False) for v in cmds}
            try:
                for i in range(args.runs + 1):
                    for version, (sk, env) in cmds.items():
                        if editing:
                            editors[version]()
                        r = run(sk + ["related", ident, "--json"], env=env, **opts)
                        if i:
                            times[version].append((r.seconds, r.cpu))
            finally:
                for e in editors.values():
                    e.restore()
            for version in cmds:
                wall = sorted(t for t, _c in times[version])
                cpu = sorted(c for _t, c in times[version])
                got[version][figure] = (wall[len(wall) // 2], cpu[len(cpu) // 2])
        for figure in got["after"]:
            (b, bc), (a, ac) = got["before"][figure], got["after"][figure]
            table.add(name, figure, b, a, f"{a / b:.2f}x", bc, ac)
        print(table.render(markdown=args.markdown), flush=True)
    print()
    table.print(markdown=args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
