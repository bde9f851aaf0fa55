"""Evaluate (and tune) the related-documents ranking by hiding links.

    python benchmarks/eval_related.py                      # the bundled vault (repo root)
    python benchmarks/eval_related.py --synthetic 1000     # plus a generated vault
    python benchmarks/eval_related.py --tune               # coordinate descent on the weights

For every link between two documents of the task's types (``note -> note``, and
``note -> entry``: the readings a note draws on), the link is hidden (removed from
every graph feature: links, hand-picked lists, shared references, co-citation; with
``--both-ways`` a link back is hidden too), the source document is ranked, and the rank
of the hidden target is recorded. The source's other link targets are left out of its
ranking ("filtered" ranking: they are known answers, not mistakes). The words of the
hidden link's own label are subtracted from the source's text before text similarity,
so text cannot read the answer off the link. Reported: Hit@5 (the target is in the top
5) and MRR (mean of 1/rank, 0 beyond rank 20).

Rankers: ``text`` (text similarity alone), ``graph`` (the blend without text),
``blend`` (everything), each with the chosen weights; ``--tune`` searches the weights
that maximise the mean MRR over the bundled vault's tasks (the synthetic vault's links
are drawn at random, so no ranker can beat chance there: it is the leakage check).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from studykb.parse.wikilinks import split_target
from studykb.related import textsim
from studykb.related.rank import DEFAULT_TYPES, Ranker, Weights, _blend
from studykb.vault import Vault

REPO = Path(__file__).resolve().parent.parent
CUTOFF = 20
TASKS = {"note->note": ("note", "note"), "note->entry": ("note", "entry")}
TEXT_ONLY = Weights(link_in=0, link_out=0, course=0, refs=0, cocite=0, topics=0, tags=0, text=1)
EQUAL = Weights(link_in=1, link_out=1, course=1, refs=1, cocite=1, topics=1, tags=1, text=1)


@dataclass
class Case:
    """One hidden link, with the features of every candidate for its source."""

    a: int
    b: int
    feats: dict[int, dict[str, float]]
    exclude: frozenset[int]
    hidden: frozenset[tuple[int, int]]


def cases(vault: Vault, ranker: Ranker, src: str, dst: str, max_pairs: int,
          both_ways: bool = False, seed: int = 1) -> list[Case]:
    ix = ranker.ix
    pairs = sorted({(a, b) for a in range(len(ix.keys)) if ix.types[a] == src
                    for b in ix.out[a] if ix.types[b] == dst})
    if max_pairs and len(pairs) > max_pairs:
        pairs = sorted(random.Random(seed).sample(pairs, max_pairs))
    counts = textsim.load_counts(vault)
    df = textsim.document_frequency(counts)
    terms = textsim.tokenizer()
    vectors = ranker.text
    term_no = vectors.term_numbers() if isinstance(vectors, textsim.TermVectors) else {}
    out = []
    for a, b in pairs:
        hidden = frozenset({(a, b), (b, a)} if both_ways else {(a, b)})
        if isinstance(vectors, textsim.TermVectors):
            ranker.text = _Unlinked(vault, vectors, counts, df, terms, term_no, ix, a, b)
        feats, _words = ranker.candidates(a, hidden)
        ranker.text = vectors
        exclude = frozenset(j for j in ix.out[a] if j != b) | frozenset(
            j for j in ix.picked[a] if j != b)
        out.append(Case(a, b, feats, exclude, hidden))
    return out


class _Unlinked:
    """Text similarity of ``a`` with the words of its links to ``b`` taken out."""

    def __init__(self, vault, vectors, counts, df, terms, term_no, ix, a, b) -> None:  # type: ignore[no-untyped-def]
        self.vectors = vectors
        self.a = a
        tf = Counter(counts.get(ix.keys[a], Counter()))
        for (text,) in vault.store.db.execute(
                "SELECT text FROM refs WHERE source=? AND target_key=? AND kind='link'",
                (ix.keys[a], ix.keys[b])):
            if "[[" in text:
                target, _anchor, label = split_target(text.strip("![]"))
                words = label or target
            else:
                words = ix.titles[b]
            for term, _w in terms(words):
                if tf[term] > 0:
                    tf[term] -= 1
        weighed = textsim.weigh(+tf, df, len(counts))
        self.vector = {term_no[t]: w for w, t in weighed if t in term_no}

    def similar(self, key: str, limit: int):  # type: ignore[no-untyped-def]
        return self.vectors.similar_to(self.vector, limit, self.vectors.number.get(key, -1))


def score(ranker: Ranker, all_cases: list[Case], weights: Weights, diversity: float = 0.0
          ) -> tuple[float, float]:
    """(Hit@5, MRR) of ``weights`` over ``all_cases``."""
    if not all_cases:
        return 0.0, 0.0
    hits = 0
    rr = 0.0
    ix = ranker.ix
    allowed = set(DEFAULT_TYPES)
    for case in all_cases:
        if diversity > 0:
            ranked = ranker.order(case.a, case.feats, CUTOFF, (), weights, diversity,
                                  case.hidden, case.exclude)
            order = [j for j, _s, _f in ranked]
            rank = order.index(case.b) + 1 if case.b in order else 0
        else:
            rank = _rank(ix, case, weights, allowed)
        if rank and rank <= 5:
            hits += 1
        if rank and rank <= CUTOFF:
            rr += 1.0 / rank
    return hits / len(all_cases), rr / len(all_cases)


def _rank(ix, case: Case, weights: Weights, allowed: set[str]) -> int:  # type: ignore[no-untyped-def]
    target = _blend(case.feats.get(case.b, {}), weights)
    if target <= 0:
        return 0
    key_b = ix.keys[case.b]
    better = 0
    for j, f in case.feats.items():
        if j == case.b or j in case.exclude or ix.types[j] not in allowed:
            continue
        s = _blend(f, weights)
        if s > target or (s == target and ix.keys[j] < key_b):
            better += 1
    return better + 1


GRID = {"link_in": (0, 0.5, 1, 2), "link_out": (1,), "course": (0, 0.25, 0.5, 1, 2),
        "refs": (0, 0.5, 1, 2, 4), "cocite": (0, 0.25, 0.5, 1, 2), "topics": (0, 0.5, 1, 2, 4),
        "tags": (0, 0.25, 0.5, 1), "text": (0, 0.25, 0.5, 1, 2, 4)}


def tune(ranker_cases: list[tuple[Ranker, list[Case]]], start: Weights) -> Weights:
    """Coordinate descent on the mean MRR of the given task sets."""

    def objective(w: Weights) -> float:
        return sum(score(r, c, w)[1] for r, c in ranker_cases) / len(ranker_cases)

    best, best_value = start, objective(start)
    for _round in range(3):
        improved = False
        for f in fields(Weights):
            for value in GRID[f.name]:
                trial = replace(best, **{f.name: value})
                v = objective(trial)
                if v > best_value + 1e-9:
                    best, best_value, improved = trial, v, True
        if not improved:
            break
    return best


def open_vault(path: Path) -> tuple[Vault, Ranker]:
    vault = Vault.open(path)
    vault.refresh()
    return vault, Ranker.for_vault(vault, "vectors")


def synthetic(n: int, keep: str | None) -> Path:
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="studykb-eval-")) / "vault"
    if not (out / ".bench.json").exists() or json.loads(
            (out / ".bench.json").read_text())["docs"] != n:
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "gen_vault.py"), str(out),
                        "--docs", str(n)], check=True, stdout=subprocess.DEVNULL)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", default=str(REPO), help="vault to evaluate (default: the repo)")
    ap.add_argument("--synthetic", type=int, default=0, metavar="N",
                    help="also evaluate a generated vault of N documents")
    ap.add_argument("--synthetic-dir", help="where to keep the generated vault")
    ap.add_argument("--max-pairs", type=int, default=600, help="sample at most this many links")
    ap.add_argument("--tune", action="store_true", help="search the weights on the vault")
    ap.add_argument("--index-text", action="store_true",
                    help="also rank by the search index's more-like-this (slow on big vaults)")
    ap.add_argument("--both-ways", action="store_true",
                    help="also hide the reverse link (b -> a) of each hidden link")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)

    started = time.perf_counter()
    vaults = [("bundled" if Path(args.vault).resolve() == REPO else args.vault, Path(args.vault))]
    if args.synthetic:
        vaults.append((f"synthetic {args.synthetic}", synthetic(args.synthetic,
                                                                 args.synthetic_dir)))
    loaded = []
    for name, path in vaults:
        vault, ranker = open_vault(path)
        sets = {task: cases(vault, ranker, src, dst, args.max_pairs, args.both_ways)
                for task, (src, dst) in TASKS.items()}
        loaded.append((name, vault, ranker, sets))

    chosen = Weights()  # the shipped defaults
    if args.tune:
        first = loaded[0]
        chosen = tune([(first[2], c) for c in first[3].values() if c], EQUAL)
        print(f"tuned weights: {asdict(chosen)}", file=sys.stderr)
    rankers = {"text only": TEXT_ONLY, "graph only": replace(chosen, text=0),
               "blend, equal weights": EQUAL, "blend": chosen}
    rows = []
    for name, vault, ranker, sets in loaded:
        for task, task_cases in sets.items():
            if not task_cases:
                continue
            for label, weights in rankers.items():
                hit, mrr = score(ranker, task_cases, weights)
                rows.append({"vault": name, "task": task, "links": len(task_cases),
                             "ranker": label, "hit5": hit, "mrr": mrr})
            for diversity in (0.15, 0.3, 0.5):
                hit, mrr = score(ranker, task_cases, chosen, diversity)
                rows.append({"vault": name, "task": task, "links": len(task_cases),
                             "ranker": f"blend + MMR {diversity}", "hit5": hit, "mrr": mrr})
            if args.index_text:
                rows.extend(_index_rows(name, vault, ranker, task, task_cases))
    print("| vault | task | links | ranker | Hit@5 | MRR |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for r in rows:
        print(f"| {r['vault']} | {r['task']} | {r['links']} | {r['ranker']} | "
              f"{r['hit5']:.3f} | {r['mrr']:.3f} |")
    print(f"\nchosen weights: {asdict(chosen)}   ({time.perf_counter() - started:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"weights": asdict(chosen), "rows": rows},
                                              indent=2), encoding="utf-8")
    for _name, vault, _r, _s in loaded:
        vault.close()
    return 0


def _index_rows(name, vault, ranker, task, task_cases):  # type: ignore[no-untyped-def]
    """Text alone from the search index's more-like-this (the link's words not removed)."""
    provider = textsim.SearchIndexText(vault)
    saved = ranker.text
    ranker.text = provider
    redone = []
    for case in task_cases:
        feats, _w = ranker.candidates(case.a, case.hidden)
        redone.append(Case(case.a, case.b, feats, case.exclude, case.hidden))
    ranker.text = saved
    hit, mrr = score(ranker, redone, TEXT_ONLY)
    return [{"vault": name, "task": task, "links": len(task_cases),
             "ranker": "text only (search index, link words kept)", "hit5": hit, "mrr": mrr}]


if __name__ == "__main__":
    os.environ.setdefault("STUDYKB_QUIET", "1")
    sys.exit(main())
