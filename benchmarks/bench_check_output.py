"""``studykb check``'s text output against its ``--json``, on a vault with ~10k problems.

    python benchmarks/bench_check_output.py                 # 10,600 problems
    python benchmarks/bench_check_output.py --problems 2000 --runs 3 --markdown

Issue 18 measured 9-15 s for the text of 10,600 problems against 0.78 s for ``--json``:
the text was rendered line by line by rich. The figures: ``check --json`` (the baseline),
``check`` (text, one write), the former way (the same problems printed line by line
through a rich console, in a fresh process that reads the same state), and ``--json``
without the "did you mean" of dangling names (what the suggestions cost), each a fresh
process end to end with its output piped, run in turns. The vault: notes whose links
dangle (a tenth of them one letter away from a topic's id, so "did you mean" has work),
and 200 topics.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LOCAL, Table, interleave, preamble, python_cmd, ratio, report  # noqa: E402

#: The former text output: every problem through rich's markup rendering (cli/core.py
#: before issue 18), reading the same refreshed state.
FORMER = """
import sys
from rich.console import Console
from rich.markup import escape
from studykb.session import Session
kb = Session.open(sys.argv[1])
kb.refresh()
out = Console(highlight=False, soft_wrap=True, no_color=True)
for p in kb.problems():
    where = f"{p.path}:{p.line}" if p.line else (p.path or "(vault)")
    color = "red" if p.severity == "error" else "yellow"
    out.print(f"{escape(where)}: [{color}]{p.severity}[/] [bold]{p.code}[/] {escape(p.message)}")
"""


#: ``check --json`` without the "did you mean" of dangling names (the suggestions' cost).
UNSUGGESTED = """
import sys
import studykb.vault as v
v.suggest_all = lambda targets, names: {}
from studykb.cli import main
sys.argv = ["studykb", "--vault", sys.argv[1], "check", "--json"]
main()
"""


def make_vault(root: Path, problems: int) -> None:
    (root / "studykb.toml").write_text("", encoding="utf-8")
    topics = root / "notes" / "topics"
    topics.mkdir(parents=True)
    for t in range(200):
        (topics / f"topic-{t:03}.md").write_text(
            f"---\nid: topic-{t:03}\n---\n# Topic {t}\n", encoding="utf-8"
        )
    notes = root / "notes"
    per_note = 10
    for n in range(-(-problems // per_note)):
        links = []
        for k in range(per_note):
            i = n * per_note + k
            # a typo of a topic's id (one letter dropped) one time in ten
            links.append(f"[[topic-{i % 200:03}"[:-1] + "]]" if i % 10 == 0 else f"[[missing-{i}]]")
        (notes / f"n{n:05}.md").write_text(
            f"# Note {n}\n\n" + " ".join(links) + "\n", encoding="utf-8"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=10600)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    preamble()
    with tempfile.TemporaryDirectory(prefix="studykb-bench-check-") as tmp:
        root = Path(tmp)
        make_vault(root, args.problems)
        studykb = [sys.executable, "-m", "studykb", "--vault", str(root)]
        first = interleave({"build": [*studykb, "check", "--json"]}, 1, env=LOCAL)
        found = first["build"].runs[0].stdout.count('"code": "dangling-ref"')
        timings = interleave(
            {
                "check --json": [*studykb, "check", "--json"],
                "check (text)": [*studykb, "check"],
                "former text (rich per line)": python_cmd(FORMER, str(root)),
                "check --json, no did-you-mean": python_cmd(UNSUGGESTED, str(root)),
            },
            args.runs,
            warmup=1,
            env=LOCAL,
            ok_codes=(0, 1),
        )
    base = timings["check --json"].median
    table = Table("command", "median s", "vs --json")
    figures = {"problems": found, "runs": args.runs}
    for name, timing in timings.items():
        table.add(name, f"{timing.median:.3f}", f"{ratio(timing.median, base):.2f}x")
        figures[name] = timing.median
    print(f"{found} problems")
    report(table, figures, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
