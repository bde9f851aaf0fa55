"""Pathological notes under ``max_file_mb``: seconds and peak memory (issue 30).

    python benchmarks/bench_pathological.py               # every case
    python benchmarks/bench_pathological.py --only table --runs 3 --markdown

Each case is one note the reviewers' attack suite wrote (1 M heading lines; a 4.2 MB
table; 3.6 MB of ``<http://a``; 40,000 bare URLs on one line) or a relative of it, plus
a 5 MB note of real prose (the repository's notes, repeated) as the ordinary case. For
each, in fresh processes:

* baseline, "markdown-it": ``MarkdownIt('commonmark').enable('table').parse`` of the
  file (what any Markdown tool pays, unbounded);
* "parse": studykb's ``parse_file`` of the file (what a build pays per note);
* "build": ``studykb build`` of a vault holding only that note and a note linking to it
  (parse, state, search index), from nothing.

Target: every note under ``max_file_mb`` is read in <= 1 s and <= 200 MB, or skipped
with a ``too-complex`` problem naming it. The "problems" column says which.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

from common import LOCAL, Table, preamble, python_cmd, report, run  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _prose() -> str:
    parts = []
    for path in sorted((REPO / "notes").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---"):
            text = text.split("---", 2)[-1]
        parts.append(text)
    blob = "\n\n".join(parts) + "\n\n"
    return blob * max(1, 4_900_000 // len(blob.encode()))


#: name -> the body of the note (each under 5 MB).
CASES: dict[str, Callable[[], str]] = {
    "prose-4.9MB": _prose,
    "headings-1M": lambda: "# h\n" * 1_000_000,
    "headings-20k-equal": lambda: "# h\n" * 20_000,
    "table-4.2MB": lambda: "| a | b | c |\n|---|---|---|\n" + "| x | y | z |\n" * 300_000,
    "autolinks-3.6MB": lambda: "<http://a" * 400_000 + "\n",
    "bare-urls-40k": lambda: "http://a.com/x " * 40_000 + "\n",
    "url-closing-brackets": lambda: "http://a.com/" + ")" * 2_000_000 + "\n",
    "list-1M": lambda: "- a\n" * 1_000_000,
}

PARSE = """
import json, sys, time
from pathlib import Path
raw = Path(sys.argv[1]).read_bytes()
if sys.argv[2] == "markdown-it":
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark").enable("table")
    t = time.perf_counter(); md.parse(raw.decode()); codes = []
else:
    from studykb.parse.document import parse_file
    t = time.perf_counter()
    codes = sorted({p.code for p in parse_file(Path(sys.argv[1]).name, raw).problems})
print(json.dumps({"seconds": time.perf_counter() - t, "problems": codes}))
"""


def _vault(folder: Path, name: str, body: str) -> Path:
    root = folder / name
    (root / "notes").mkdir(parents=True)
    (root / "studykb.toml").write_text("", encoding="utf-8")
    (root / "notes" / "big.md").write_text(body, encoding="utf-8")
    (root / "notes" / "ok.md").write_text("# OK\n\nSee [[big]].\n", encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="these cases only")
    parser.add_argument("--runs", type=int, default=1, help="runs of each (the best is shown)")
    parser.add_argument("--no-build", action="store_true", help="parse only")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    parser.add_argument("--json", dest="json_out", help="write the figures to this file")
    args = parser.parse_args()
    preamble()
    table = Table("note", "MB", "markdown-it s", "MB", "parse s", "MB", "build s", "MB", "problems")
    figures: dict[str, dict[str, object]] = {}
    work = Path(tempfile.mkdtemp(prefix="studykb-bench-patho-"))
    env = dict(LOCAL, STUDYKB_LOCAL="1")
    try:
        for name in args.only or CASES:
            body = CASES[name]()
            root = _vault(work, name, body)
            note = root / "notes" / "big.md"
            row: dict[str, object] = {"mb": round(len(body.encode()) / 1e6, 2)}
            for what in ("markdown-it", "studykb"):
                best = min(
                    (run(python_cmd(PARSE, str(note), what), env=env) for _ in range(args.runs)),
                    key=lambda r: r.seconds,
                )
                out = json.loads(best.stdout or "{}")
                row[what] = (out.get("seconds"), best.rss_mb)
                if what == "studykb":
                    row["problems"] = out.get("problems")
            if not args.no_build:
                builds = []
                for _ in range(args.runs):
                    shutil.rmtree(root / ".studykb", ignore_errors=True)
                    cmd = [sys.executable, "-m", "studykb", "--vault", str(root), "build"]
                    builds.append(run(cmd, env=env))
                best = min(builds, key=lambda r: r.seconds)
                row["build"] = (best.seconds, best.rss_mb)
            figures[name] = row
            md_s, md_mb = row["markdown-it"]  # type: ignore[misc]
            p_s, p_mb = row["studykb"]  # type: ignore[misc]
            b_s, b_mb = row.get("build", (None, None))  # type: ignore[misc]
            table.add(name, row["mb"], md_s, md_mb, p_s, p_mb, b_s, b_mb, ",".join(row["problems"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(table, figures, args.markdown, args.json_out)


if __name__ == "__main__":
    main()
