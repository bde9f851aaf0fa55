"""Every main command, before and after a change of the code's shape, in the same run.

    git archive COMMIT src | tar -x -C /tmp/before
    python benchmarks/bench_shape.py --before /tmp/before/src VAULT [VAULT...] [--runs 5]

A redesign that keeps behaviour (issue 25: one session, one mechanism for derived
structures, the state's SQL in one package) must keep speed too: every figure within
10% of the code before it. ``--before`` is the ``src`` folder of the older checkout;
"after" is this checkout's ``src`` (or ``--after``). Each vault is copied once per
version (each keeps its own state and caches); the commands then run in turns,
before/after, so a busy machine disturbs both alike:

* ``build`` from an empty state (once per version), then ``build`` with nothing changed;
* ``check``, ``search`` (English and Chinese), ``before``, ``related``, ``backlinks``,
  ``show``, ``status``, and ``sidebar --format json`` of every document;
* ``check`` and ``related`` after a one-line edit (a line appended before each run).

Medians of wall time and of CPU time (user + system, the work itself on a shared
machine), their ratio after/before, and whether it is within the 10% rule (on CPU when
the machine is busy: the load average is printed first).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_related import Editor  # noqa: E402
from bench_related_kept import note_of  # noqa: E402
from common import LOCAL, Table, interleave, run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
#: The share a figure may grow by and still hold.
ALLOWED = 0.10


def figures(ident: str) -> dict[str, list[str]]:
    """Name -> the command's arguments (after ``--vault``)."""
    return {
        "build, nothing changed": ["build"],
        "check": ["check", "--json"],
        "search (English)": ["search", "data parallel", "--json"],
        "search (Chinese)": ["search", "张量并行", "--json"],
        "before": ["before", ident, "--json"],
        "related": ["related", ident, "--json"],
        "backlinks": ["backlinks", ident, "--json"],
        "show": ["show", ident, "--json"],
        "status": ["status", "--json"],
        "sidebar of every document": ["sidebar", "--format", "json"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vaults", nargs="+")
    ap.add_argument("--before", required=True, help="src folder of the older code")
    ap.add_argument("--after", default=os.path.join(os.path.dirname(HERE), "src"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    work = args.workdir or tempfile.mkdtemp(prefix="studykb-bench-shape-")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    table = Table(
        "vault", "figure", "before s", "after s", "wall ratio", "before cpu", "after cpu",
        "cpu ratio", "within 10%",
    )  # fmt: skip
    for vault in args.vaults:
        name = os.path.basename(vault.rstrip("/"))
        ident, edit = note_of(vault)
        sk: dict[str, list[str]] = {}
        envs: dict[str, dict[str, str]] = {}
        editors: dict[str, Editor] = {}
        for version, src in (("before", args.before), ("after", args.after)):
            copy = os.path.join(work, f"{name}-{version}")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".studykb"))
            envs[version] = dict(LOCAL, PYTHONPATH=os.path.abspath(src))
            # the environment in the command line: the turns below run both versions
            setting = [f"{k}={v}" for k, v in envs[version].items()]
            sk[version] = ["env", *setting, sys.executable, "-m", "studykb", "--vault", copy]
            editors[version] = Editor(os.path.join(copy, edit), chinese=False)
        rows: list[tuple[str, dict[str, tuple[float, float]]]] = []
        first = {}
        for version in ("before", "after"):
            done = run([*sk[version], "build"], check=True, ok_codes=(0, 1))
            first[version] = (done.seconds, done.cpu)
        rows.append(("build from scratch", first))
        for label, cmd in figures(ident).items():
            timed = interleave(
                {v: [*sk[v], *cmd] for v in sk},
                args.runs,
                warmup=1,
            )  # fmt: skip
            rows.append((label, {v: (t.median, t.cpu) for v, t in timed.items()}))
        for label, cmd in (
            ("check after a one-line edit", ["check", "--json"]),
            ("related after a one-line edit", ["related", ident, "--json"]),
        ):
            timed = interleave({v: [*sk[v], *cmd] for v in sk}, args.runs, before=dict(editors))
            rows.append((label, {v: (t.median, t.cpu) for v, t in timed.items()}))
        for editor in editors.values():
            editor.restore()
        for label, got in rows:
            (bw, bc), (aw, ac) = got["before"], got["after"]
            wall, cpu = aw / bw if bw else None, ac / bc if bc else None
            held = cpu is not None and cpu <= 1 + ALLOWED
            table.add(name, label, bw, aw, wall, bc, ac, cpu, "yes" if held else "NO")
        table.print(args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
