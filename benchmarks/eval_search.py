"""Evaluate search ranking on judged queries, against a plain BM25 baseline.

    python benchmarks/eval_search.py                        # the bundled vault (repo root)
    python benchmarks/eval_search.py --per-query            # every query's ranks
    python benchmarks/eval_search.py --judged FILE --vault DIR --json out.json

The judged set (``benchmarks/eval/search_judged.json``, written and reviewed by the
content side) holds queries with graded judgements: 2 = the document a reader wants,
1 = clearly relevant. For every query both rankers return their top 10 documents:

* **studykb**: ``studykb.search.query.search`` as the CLI runs it (phrase and proximity
  scoring, topic names in the other language, protected terms, exact-name boost);
* **plain BM25** (baseline, computed here in the same run): Okapi BM25 (k1 = 1.2,
  b = 0.75) over each document's title, aliases and body as one text, read by a plain
  analyzer (Chinese cut by rjieba as the index does, English words Porter2-stemmed,
  English stop words left out), the query's terms OR-ed;
* and ablations of studykb with one part switched off (``--ablations``).

Reported: MRR (mean of 1/rank of the first relevant document, 0 when none is in the top
10) and nDCG@5 (gain 2^grade - 1), overall and by query language. Goal: MRR >= 0.8 and
ahead of the baseline.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "benchmarks" / "eval" / "search_judged.json"
CUTOFF = 10
GOAL_MRR = 0.8

Ranker = Callable[[str], list[str]]


@dataclass(frozen=True)
class Judged:
    """One judged query."""

    query: str
    lang: str
    relevant: dict[str, int]
    """Document id -> grade (2 the wanted document, 1 relevant)."""


def load_judged(path: Path) -> list[Judged]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Judged(q["query"], q.get("lang", "?"), {k: int(v) for k, v in q["relevant"].items()})
        for q in data
    ]


# -- metrics ------------------------------------------------------------------------------
def reciprocal_rank(ranked: list[str], relevant: dict[str, int], cutoff: int = CUTOFF) -> float:
    for n, doc in enumerate(ranked[:cutoff], 1):
        if relevant.get(doc, 0) > 0:
            return 1.0 / n
    return 0.0


def ndcg(ranked: list[str], relevant: dict[str, int], k: int = 5) -> float:
    dcg = sum(
        (2 ** relevant.get(doc, 0) - 1) / math.log2(n + 1) for n, doc in enumerate(ranked[:k], 1)
    )
    ideal = sorted(relevant.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(n + 1) for n, g in enumerate(ideal, 1))
    return dcg / best if best else 0.0


# -- the baseline -------------------------------------------------------------------------
def plain_terms(text: str) -> list[str]:
    """Terms as a plain analyzer reads them: Chinese cut by rjieba, other words lowercased,
    English stop words left out, Porter2 stems (no protected terms, no topic names)."""
    import re

    import rjieba
    import Stemmer

    from studykb.text.analysis import STOP_WORDS
    from studykb.text.segment import HAN

    stemmer = Stemmer.Stemmer("english")
    out = []
    for m in re.finditer(rf"([{HAN}]+)|[^\W{HAN}]+", text):
        if m.group(1):
            out.extend(w for w in rjieba.cut(m.group(1)) if w.strip())
        else:
            word = m.group().lower()
            if word not in STOP_WORDS:
                out.append(stemmer.stemWord(word) if word.isascii() and word.isalpha() else word)
    return out


class PlainBM25:
    """Okapi BM25 over title + aliases + body, the query's terms OR-ed."""

    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf: dict[str, Counter[str]] = {}
        self.length: dict[str, int] = {}
        df: Counter[str] = Counter()
        for doc, text in docs.items():
            tf = Counter(plain_terms(text))
            self.tf[doc] = tf
            self.length[doc] = sum(tf.values())
            df.update(tf.keys())
        size = len(docs) or 1
        self.avg = sum(self.length.values()) / size
        self.idf = {t: math.log(1 + (size - n + 0.5) / (n + 0.5)) for t, n in df.items()}

    def __call__(self, query: str) -> list[str]:
        terms = [t for t in plain_terms(query) if t in self.idf]
        scores: dict[str, float] = {}
        for doc, tf in self.tf.items():
            norm = self.k1 * (1 - self.b + self.b * self.length[doc] / self.avg)
            s = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            if s > 0:
                scores[doc] = s
        return sorted(scores, key=lambda d: (-scores[d], d))[:CUTOFF]


def baseline_texts(vault: object) -> dict[str, str]:
    """id -> title, aliases and body of every document but course units."""
    docs = vault.documents()  # type: ignore[attr-defined]
    out = {}
    for doc in docs.values():
        if doc.type == "unit":
            continue
        body, _headings = vault.text(doc.path)  # type: ignore[attr-defined]
        out[doc.id] = "\n".join((doc.title, *doc.aliases, body))
    return out


# -- studykb --------------------------------------------------------------------------------
def studykb_ranker(vault: object, **switches: bool) -> Ranker:
    from studykb.search.query import SearchOptions, search

    def rank(query: str) -> list[str]:
        opts = replace(SearchOptions(query=query, limit=CUTOFF), **switches)
        return [hit.id for hit in search(vault, opts)]  # type: ignore[arg-type]

    return rank


ABLATIONS = {
    "no phrase/proximity": {"proximity": False},
    "no cross-lingual names": {"expand": False},
}


# -- the run ----------------------------------------------------------------------------------
@dataclass
class Row:
    ranker: str
    lang: str
    queries: int
    mrr: float
    ndcg5: float


def evaluate(
    name: str, rank: Ranker, judged: list[Judged]
) -> tuple[list[Row], dict[str, tuple[float, float, list[str]]]]:
    per_query = {}
    for q in judged:
        ranked = rank(q.query)
        per_query[q.query] = (reciprocal_rank(ranked, q.relevant), ndcg(ranked, q.relevant), ranked)
    rows = []
    for lang in ("all", *sorted({q.lang for q in judged})):
        chosen = [q for q in judged if lang in ("all", q.lang)]
        rows.append(
            Row(
                name,
                lang,
                len(chosen),
                sum(per_query[q.query][0] for q in chosen) / len(chosen),
                sum(per_query[q.query][1] for q in chosen) / len(chosen),
            )
        )
    return rows, per_query


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--vault", default=str(REPO), help="vault to search (default: the repo)")
    ap.add_argument("--judged", default=str(JUDGED), help="judged queries (JSON)")
    ap.add_argument("--per-query", action="store_true", help="print every query's ranks")
    ap.add_argument(
        "--ablations",
        action="store_true",
        help="also run studykb with one part switched off at a time",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="try another value of a ranking constant (studykb.search.ranking), "
        "e.g. --set NEAR=0.5",
    )
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    _override(args.set)

    from studykb.search import index
    from studykb.vault import Vault

    started = time.perf_counter()
    judged = load_judged(Path(args.judged))
    vault = Vault.open(Path(args.vault))
    vault.refresh()
    index.sync(vault, quiet=True)
    rankers: dict[str, Ranker] = {
        "plain BM25 (baseline)": PlainBM25(baseline_texts(vault)),
        "studykb": studykb_ranker(vault),
    }
    if args.ablations:
        for label, switches in ABLATIONS.items():
            rankers[f"studykb, {label}"] = studykb_ranker(vault, **switches)
    rows: list[Row] = []
    queries: dict[str, dict[str, tuple[float, float, list[str]]]] = {}
    for name, rank in rankers.items():
        got, queries[name] = evaluate(name, rank, judged)
        rows.extend(got)
    index.close(vault)
    vault.close()

    if args.per_query:
        _print_queries(judged, queries)
    print("| ranker | queries | language | MRR | nDCG@5 |")
    print("| --- | ---: | --- | ---: | ---: |")
    for r in rows:
        print(f"| {r.ranker} | {r.queries} | {r.lang} | {r.mrr:.3f} | {r.ndcg5:.3f} |")
    ours = next(r for r in rows if r.ranker == "studykb" and r.lang == "all")
    base = next(r for r in rows if r.ranker.startswith("plain") and r.lang == "all")
    ok = ours.mrr >= GOAL_MRR and ours.mrr > base.mrr
    print(
        f"\n{len(judged)} queries; goal MRR >= {GOAL_MRR} and ahead of the baseline: "
        f"{'met' if ok else 'NOT met'} ({ours.mrr:.3f} vs {base.mrr:.3f}; "
        f"{time.perf_counter() - started:.1f} s)"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "queries": len(judged),
                    "cutoff": CUTOFF,
                    "rows": [r.__dict__ for r in rows],
                    "per_query": {
                        name: {q: {"rr": v[0], "ndcg5": v[1], "top": v[2]} for q, v in got.items()}
                        for name, got in queries.items()
                    },
                },
                ensure_ascii=False,
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0 if ok else 1


def _override(settings: list[str]) -> None:
    """Set ranking constants for this run (to compare weights; not saved anywhere)."""
    from studykb.search import coverage, ranking

    for item in settings:
        name, _eq, value = item.partition("=")
        module = next((m for m in (ranking, coverage) if hasattr(m, name)), None)
        if module is None:
            raise SystemExit(f"no constant {name} in studykb.search.ranking or .coverage")
        setattr(module, name, type(getattr(module, name))(value))


def _print_queries(
    judged: list[Judged], queries: dict[str, dict[str, tuple[float, float, list[str]]]]
) -> None:
    names = list(queries)
    print("| query | " + " | ".join(f"{n} RR / nDCG@5" for n in names) + " | studykb top 3 |")
    print("| --- |" + " ---: |" * len(names) + " --- |")
    for q in judged:
        cells = [f"{queries[n][q.query][0]:.2f} / {queries[n][q.query][1]:.2f}" for n in names]
        top = ", ".join(
            ("*" * q.relevant.get(d, 0)) + d for d in queries["studykb"][q.query][2][:3]
        )
        print(f"| {q.query} | " + " | ".join(cells) + f" | {top} |")
    print()


if __name__ == "__main__":
    os.environ.setdefault("STUDYKB_QUIET", "1")
    sys.exit(main())
