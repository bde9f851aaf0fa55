"""The synthetic evaluation of related documents: the bundled vault and a topical vault.

    python benchmarks/eval_related.py                      # the bundled vault's notes
    python benchmarks/eval_related.py --topical 2000       # plus a generated topical vault

The same method as on real collections (``eval_related_real.py``): a fixed sample of
notes has its links turned into plain text in a copy of the vault, and ``related NOTE
--limit 10`` should find the documents they linked; recall@10 and MRR beside a plain
TF-IDF + jieba cosine computed in the same run. The topical vault
(``benchmarks/gen_topical.py``: 2,000 documents on subjects and threads, 40 % Chinese,
links that follow subjects, some lists of everything) was never tuned on.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import eval_related_real  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topical", type=int, default=0, help="also a topical vault of N documents")
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="studykb-eval-syn-") as tmp:
        bundled = Path(tmp) / "bundled"
        bundled.mkdir()
        for part in ("notes", "courses"):
            shutil.copytree(REPO / part, bundled / part)
        shutil.copy(REPO / "studykb.toml", bundled / "studykb.toml")
        folders = [bundled]
        if args.topical:
            topical = Path(tmp) / "topical"
            subprocess.run(
                [
                    sys.executable,
                    str(REPO / "benchmarks" / "gen_topical.py"),
                    str(topical),
                    "--docs",
                    str(args.topical),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            folders.append(topical)
        extra = ["--json"] if args.json else []
        names = [str(f) for f in folders]
        return eval_related_real.main([*names, "--sample", str(args.sample), *extra])


if __name__ == "__main__":
    raise SystemExit(main())
