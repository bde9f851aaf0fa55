"""The bounds the tests hold by counting, timed: what a user waits in the worst cases.

    python benchmarks/bench_bounds.py
    python benchmarks/bench_bounds.py --runs 3 --markdown --json out.json

The tests count work (names probed per heading, characters handed to the inline parser,
how long a search is willing to wait for the index lock); this script measures the
seconds those bounds stand for, beside a baseline from the same run:

* heading anchors: 20,000 headings numbered for GitHub, Hugo and Zola (distinct
  headings, then 20,000 equal ones), in this process; baseline: 20,000 ``str.lower``.
* pathological Markdown: ``studykb check`` of a vault holding one 3.2 MB file of
  ``[a](``, ``*a _b `` or ``[[a``, a fresh process end to end; baseline: the same vault
  with a 3.2 MB file of plain words.
* a search while another process holds the search index's lock (and a note changed, so
  the search wants to write), end to end; baseline: the same search, nothing held.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LOCAL, Table, preamble, ratio, repeat, report  # noqa: E402

UNITS = ("[a](", "*a _b ", "[[a")
SIZE = 3_200_000


def studykb(*args: str) -> list[str]:
    return [sys.executable, "-m", "studykb", *args]


def best_of(runs: int, func) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_anchors(runs: int, table: Table, figures: dict) -> None:
    from studykb.parse.slugs import Heading, anchors

    distinct = [Heading(f"Section {n} – **part** `x_{n}` & more", 2, n) for n in range(20000)]
    equal = [Heading("Example", 2, n) for n in range(20000)]
    base = best_of(runs, lambda: [h.text.lower() for h in distinct])
    for name, hs in (("distinct", distinct), ("equal", equal)):
        for flavour in ("github", "hugo", "zola"):
            took = best_of(runs, lambda hs=hs, flavour=flavour: anchors(hs, flavour))
            figures[f"anchors_{name}_{flavour}"] = took
            table.add(
                f"anchors, 20,000 {name} headings, {flavour}", f"{took:.3f}", ratio(took, base)
            )


def bench_markdown(runs: int, table: Table, figures: dict, tmp: Path) -> None:
    def vault(name: str, text: str) -> str:
        root = tmp / name
        (root / "notes").mkdir(parents=True)
        (root / "studykb.toml").write_text("", encoding="utf-8")
        (root / "notes/bomb.md").write_text(text, encoding="utf-8")
        (root / "notes/ok.md").write_text("# OK\n\n[[bomb]]\n", encoding="utf-8")
        return str(root)

    plain = vault("plain", "words " * (SIZE // 6))
    base = repeat(studykb("--vault", plain, "check", "--json"), runs, env=LOCAL).best
    figures["check_plain"] = base
    table.add("check, 3.2 MB of plain words (baseline)", f"{base:.3f}", 1.0)
    for n, unit in enumerate(UNITS):
        root = vault(f"bomb{n}", unit * (SIZE // len(unit)))
        cmd = studykb("--vault", root, "check", "--json")
        took = repeat(cmd, runs, env=LOCAL, ok_codes=(0, 1)).best
        figures[f"check_{unit!r}"] = took
        table.add(f"check, 3.2 MB of {unit!r}", f"{took:.3f}", ratio(took, base))


HOLD = (
    "import sys, time\n"
    "from whoosh import index\n"
    "w = index.open_dir(sys.argv[1]).writer()\n"
    "print('locked', flush=True)\n"
    "time.sleep(600)\n"
)


def bench_locked_search(runs: int, table: Table, figures: dict, tmp: Path) -> None:
    from gen_vault import generate

    root = tmp / "big"
    generate(str(root), 1600, seed=7)
    subprocess.run(studykb("--vault", str(root), "build"), check=True, capture_output=True)
    search = studykb("--vault", str(root), "search", "gradient", "--json")
    base = repeat(search, runs, env=LOCAL).best
    figures["search_free"] = base
    table.add("search, 1,600 notes, index free (baseline)", f"{base:.3f}", 1.0)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root / ".studykb" / "index")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        note = root / "notes" / "zz-new.md"

        def edit() -> None:
            note.write_text(f"# Zeppelin\n\nzeppelin airship {time.time()}\n", encoding="utf-8")

        took = repeat(search, runs, before=edit, env=LOCAL).best
    finally:
        holder.kill()
        holder.wait()
    figures["search_locked"] = took
    table.add(
        "search, 1,600 notes, index locked by another process", f"{took:.3f}", ratio(took, base)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    preamble()
    table = Table("what", "seconds (best)", "x baseline")
    figures: dict[str, float] = {}
    bench_anchors(args.runs, table, figures)
    with tempfile.TemporaryDirectory(prefix="studykb-bench-bounds-") as tmp:
        bench_markdown(args.runs, table, figures, Path(tmp))
        bench_locked_search(args.runs, table, figures, Path(tmp))
    report(table, figures, args.markdown, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
