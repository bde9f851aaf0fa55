"""The related-documents and site figures of one large vault, with peak memory.

    python benchmarks/gen_vault.py --docs 50000 /tmp/v50k
    python benchmarks/bench_scale.py /tmp/v50k --markdown          # works on a copy

The figures issue 24 asks for at 50k documents, each a fresh ``studykb`` process
(``STUDYKB_LOCAL=1``) on a copy of the vault, in this order:

* ``studykb build`` from an empty state (the baseline of the ratios);
* the first ``studykb related ID --json`` after that build, then one more;
* ``studykb related ID --json`` after a one-line edit (a line with a link appended to a
  note), and ``studykb backlinks ID --json`` after the same kind of edit;
* ``studykb sidebar --format json -o FILE``: every document's sidebar;
* ``studykb site -o OUT`` with the state built (every page made), then after a one-line
  edit.

Each row gives wall and CPU seconds (workers included), the largest resident set of one
process and the peak of the sum over the process tree (:mod:`common`). Peak-memory goal:
<= 500 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Run, Table, preamble, report, run  # noqa: E402

LOCAL = {"STUDYKB_LOCAL": "1"}
MEMORY_GOAL_MB = 500.0


def studykb(vault: Path, *args: str) -> list[str]:
    exe = shutil.which("studykb", path=os.path.dirname(sys.executable))
    return [*([exe] if exe else [sys.executable, "-m", "studykb"]), "--vault", str(vault), *args]


def edited(note: Path, n: int) -> None:
    with note.open("a", encoding="utf-8") as fh:
        fh.write(f"\nEdited line {n} with [[entry-00001]].\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vault", type=Path, help="a generated vault (copied, never written)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    preamble()
    work = Path(tempfile.mkdtemp(prefix="studykb-scale-"))
    try:
        vault = work / "vault"
        shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns(".studykb"))
        docs = sum(1 for _ in vault.rglob("*.md"))
        note = sorted((vault / "notes").rglob("*.md"))[0]
        key = note.stem
        table = Table("what", "wall s", "cpu s", "vs build", "one process MB", "tree MB", "goal")
        figures: dict[str, float] = {"documents": docs}

        def row(name: str, done: Run, build: float | None) -> None:
            vs = f"{done.seconds / build:.2f}x" if build else "1.00x"
            goal = "ok" if done.tree_mb <= MEMORY_GOAL_MB else "over 500 MB"
            table.add(
                name,
                f"{done.seconds:.2f}",
                f"{done.cpu:.1f}",
                vs,
                f"{done.rss_mb:.0f}",
                f"{done.tree_mb:.0f}",
                goal,
            )
            figures[name] = done.seconds
            figures[name + " tree MB"] = done.tree_mb

        build = run(studykb(vault, "build"), env=LOCAL, check=True)
        row("studykb build, from scratch", build, None)
        b = build.seconds
        row(
            "related --json, first after the build",
            run(studykb(vault, "related", key, "--json"), env=LOCAL, check=True),
            b,
        )
        row(
            "related --json, again",
            run(studykb(vault, "related", key, "--json"), env=LOCAL, check=True),
            b,
        )
        edited(note, 1)
        row(
            "related --json after a one-line edit",
            run(studykb(vault, "related", key, "--json"), env=LOCAL, check=True),
            b,
        )
        edited(note, 2)
        row(
            "backlinks --json after a one-line edit (baseline)",
            run(studykb(vault, "backlinks", key, "--json"), env=LOCAL, check=True),
            b,
        )
        row(
            "sidebar of every document (json)",
            run(
                studykb(vault, "sidebar", "--format", "json", "-o", str(work / "sb.json")),
                env=LOCAL,
                check=True,
            ),
            b,
        )
        out = work / "public"
        row(
            "site, state built, every page made",
            run(studykb(vault, "site", "-o", str(out)), env=LOCAL, check=True),
            b,
        )
        edited(note, 3)
        row(
            "site after a one-line edit",
            run(studykb(vault, "site", "-o", str(out)), env=LOCAL, check=True),
            b,
        )
        print(f"{docs} Markdown files")
        report(table, figures, args.markdown, args.json)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
