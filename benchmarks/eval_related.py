"""Evaluate (and tune) the related-documents ranking by hiding links.

    python benchmarks/eval_related.py                      # the bundled vault (repo root)
    python benchmarks/eval_related.py --topical 2000       # plus a held-out topical vault
    python benchmarks/eval_related.py --tune               # coordinate descent on the weights

For every link between two documents of a task's types (``note -> note``, and
``note -> entry``: the readings a note draws on), the link is hidden (removed from
every graph feature: links, hand-picked lists, shared references, co-citation; with
``--both-ways`` a link back is hidden too), the source document is ranked, and the rank
of the hidden target is recorded. The source's other link targets are left out of its
ranking ("filtered" ranking: they are known answers, not mistakes), and candidates are
of the target's type (``studykb related --type entry``: which reading did this note draw
on; which note goes with this one). The words of the
hidden link's own label are taken out of the source's text before any text similarity,
so text cannot read the answer off the link. Reported: Hit@5 (the target is in the top
5) and MRR (mean of 1/rank, 0 beyond rank 20).

Rankers: **TF-IDF cosine** (the baseline, computed here in the same run: every term of
the whole text, a plain analyzer, no stop words or frequency caps, no graph), ``text
only`` (studykb's distinctive-term vectors), ``graph only``, and the blend with equal or
the chosen weights (and with diversity). ``--tune`` searches the weights on the bundled
vault only; the topical vault (``benchmarks/gen_topical.py``: links follow subjects, as
in real notes) is then a held-out test of them.
"""

from __future__ import annotations

import argparse
import json
import math
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
from studykb.related import textsim, vectorcache
from studykb.related.rank import Ranker, Weights, _blend
from studykb.vault import Vault

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from eval_search import plain_terms  # noqa: E402

CUTOFF = 20
TASKS = {"note->note": ("note", "note"), "note->entry": ("note", "entry")}
ZERO = {f.name: 0.0 for f in fields(Weights)}
TEXT_ONLY = Weights(**{**ZERO, "text": 1.0})
EQUAL = Weights(**{f.name: 1.0 for f in fields(Weights)})


@dataclass
class Case:
    """One hidden link, with the features of every candidate for its source."""

    a: int
    b: int
    kind: str
    """The task's target type: candidates are of this type (``related --type``)."""
    feats: dict[int, dict[str, float]]
    exclude: frozenset[int]
    hidden: frozenset[tuple[int, int]]
    words: Counter[str]
    """The source's text, as plain terms, without the hidden link's words."""


def link_words(vault: Vault, ix_keys: list[str], ix_titles: list[str], a: int, b: int) -> list[str]:
    """The words the body of ``a`` shows for its links to ``b`` (label, or the target)."""
    out = []
    for link in vault.outgoing(ix_keys[a]):
        if link.target != ix_keys[b] or link.ref.kind != "link":
            continue
        text = link.ref.text
        if "[[" in text:
            target, _anchor, label = split_target(text.strip("![]"))
            out.append(label or target)
        else:
            out.append(ix_titles[b])
    return out


def cases(
    vault: Vault,
    ranker: Ranker,
    src: str,
    dst: str,
    max_pairs: int,
    both_ways: bool = False,
    seed: int = 1,
) -> list[Case]:
    ix = ranker.ix
    pairs = sorted(
        {
            (a, b)
            for a in range(len(ix.keys))
            if ix.types[a] == src
            for b in ix.out[a]
            if ix.types[b] == dst
        }
    )
    if max_pairs and len(pairs) > max_pairs:
        pairs = sorted(random.Random(seed).sample(pairs, max_pairs))
    vectors = ranker.text
    store = vectorcache.terms(vault)
    texts = textsim._texts(vault)  # noqa: SLF001 - the same text the vectors are made of
    out = []
    for a, b in pairs:
        hidden = frozenset({(a, b), (b, a)} if both_ways else {(a, b)})
        said = link_words(vault, ix.keys, ix.titles, a, b)
        text = texts[ix.keys[a]].text if ix.keys[a] in texts else ""
        if isinstance(vectors, textsim.TermVectors) and store is not None:
            ranker.text = _Unlinked(vectors, store, text, said)
        feats, _words = ranker.candidates(a, hidden)
        ranker.text = vectors
        exclude = frozenset(j for j in ix.out[a] if j != b) | frozenset(
            j for j in ix.picked[a] if j != b
        )
        words = Counter(plain_terms(text))
        for word in said:
            words.subtract(plain_terms(word))
        out.append(Case(a, b, dst, feats, exclude, hidden, +words))
    return out


class _Unlinked:
    """studykb's text similarity of a source whose text lost the hidden link's words."""

    def __init__(
        self, vectors: textsim.TermVectors, store: vectorcache.Terms, text: str, said: list[str]
    ) -> None:
        self.vectors = vectors
        ((_k, tf, _seen),) = textsim._analyse_part([("", text)])  # noqa: SLF001
        for words in said:
            for term in textsim.analyse_known(words, vectors.term_numbers())[0]:
                if tf[term] > 0:
                    tf[term] -= 1
        known = vectors.term_numbers()
        weighed = textsim.weigh(
            +tf,
            lambda t: store.df[known[t]] if t in known else 0,
            len(vectors.number),
            textsim.stop_terms(),
        )
        self.vector = {known[t]: w for w, t in weighed if t in known}

    def similar(self, key: str, limit: int) -> textsim.Similar:
        return self.vectors.similar_to(self.vector, limit, self.vectors.number.get(key, -1))


class TfIdfCosine:
    """The baseline: cosine of plain TF-IDF vectors of whole texts."""

    def __init__(self, vault: Vault, keys: list[str]) -> None:
        texts = textsim._texts(vault)  # noqa: SLF001
        self.tf = {
            k: Counter(plain_terms(texts[k].text)) if k in texts else Counter() for k in keys
        }
        df: Counter[str] = Counter()
        for tf in self.tf.values():
            df.update(tf.keys())
        size = len(keys)
        self.idf = {t: math.log((size + 1) / (n + 0.5)) for t, n in df.items()}
        self.vectors = {k: self._unit(tf) for k, tf in self.tf.items()}

    def _unit(self, tf: Counter[str]) -> dict[str, float]:
        v = {t: c * self.idf.get(t, 0.0) for t, c in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def rank(self, ix_keys: list[str], case: Case, types: list[str]) -> int:
        mine = self._unit(case.words)
        target = _dot(mine, self.vectors[ix_keys[case.b]])
        if target <= 0:
            return 0
        better = 0
        for j, key in enumerate(ix_keys):
            if j in (case.a, case.b) or j in case.exclude or types[j] != case.kind:
                continue
            s = _dot(mine, self.vectors[key])
            if s > target or (s == target and key < ix_keys[case.b]):
                better += 1
        return better + 1


def _dot(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def score(
    ranker: Ranker, all_cases: list[Case], weights: Weights, diversity: float = 0.0
) -> tuple[float, float]:
    """(Hit@5, MRR) of ``weights`` over ``all_cases``."""
    ranks = []
    for case in all_cases:
        if diversity > 0:
            ranked = ranker.order(
                case.a,
                case.feats,
                CUTOFF,
                (case.kind,),
                weights,
                diversity,
                case.hidden,
                case.exclude,
            )
            order = [r.node for r in ranked]
            ranks.append(order.index(case.b) + 1 if case.b in order else 0)
        else:
            ranks.append(_rank(ranker, case, weights))
    return figures(ranks)


def figures(ranks: list[int]) -> tuple[float, float]:
    if not ranks:
        return 0.0, 0.0
    hits = sum(1 for r in ranks if 0 < r <= 5)
    rr = sum(1.0 / r for r in ranks if 0 < r <= CUTOFF)
    return hits / len(ranks), rr / len(ranks)


def _rank(ranker: Ranker, case: Case, weights: Weights) -> int:
    ix = ranker.ix
    weight = weights.by_name()
    target = _blend(case.feats.get(case.b, {}), weight)
    if target <= 0:
        return 0
    key_b = ix.keys[case.b]
    better = 0
    for j, f in case.feats.items():
        if j == case.b or j in case.exclude or ix.types[j] != case.kind:
            continue
        s = _blend(f, weight)
        if s > target or (s == target and ix.keys[j] < key_b):
            better += 1
    return better + 1


GRID = {
    "link_in": (0, 0.5, 1, 2),
    "link_out": (1,),
    "course": (0, 0.25, 0.5, 1, 2),
    "sibling": (0, 0.5, 1, 2),
    "refs": (0, 0.5, 1, 2, 4),
    "cocite": (0, 0.25, 0.5, 1, 2),
    "peers": (0, 0.25, 0.5, 1, 2),
    "topics": (0, 0.5, 1, 2, 4),
    "tags": (0, 0.25, 0.5, 1),
    "text": (0, 0.5, 1, 2, 4, 8),
}


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


def topical(n: int, keep: str | None) -> Path:
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="studykb-eval-")) / "vault"
    info = out / ".bench.json"
    if not info.exists() or json.loads(info.read_text()).get("docs") != n:
        subprocess.run(
            [
                sys.executable,
                str(REPO / "benchmarks" / "gen_topical.py"),
                str(out),
                "--docs",
                str(n),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--vault", default=str(REPO), help="vault to evaluate (default: the repo)")
    ap.add_argument(
        "--topical",
        type=int,
        default=0,
        metavar="N",
        help="also evaluate a generated topical vault of N documents (held out)",
    )
    ap.add_argument("--topical-dir", help="where to keep the generated vault")
    ap.add_argument("--max-pairs", type=int, default=600, help="sample at most this many links")
    ap.add_argument("--tune", action="store_true", help="search the weights on --vault")
    ap.add_argument(
        "--both-ways",
        action="store_true",
        help="also hide the reverse link (b -> a) of each hidden link",
    )
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)

    started = time.perf_counter()
    vaults = [("bundled" if Path(args.vault).resolve() == REPO else args.vault, Path(args.vault))]
    if args.topical:
        vaults.append((f"topical {args.topical}", topical(args.topical, args.topical_dir)))
    loaded = []
    for name, path in vaults:
        vault, ranker = open_vault(path)
        sets = {
            task: cases(vault, ranker, src, dst, args.max_pairs, args.both_ways)
            for task, (src, dst) in TASKS.items()
        }
        loaded.append((name, vault, ranker, sets))

    chosen = Weights()  # the shipped defaults
    if args.tune:
        first = loaded[0]
        chosen = tune([(first[2], c) for c in first[3].values() if c], EQUAL)
        print(f"tuned weights: {asdict(chosen)}", file=sys.stderr)
    rows = []
    for name, vault, ranker, sets in loaded:
        baseline = TfIdfCosine(vault, ranker.ix.keys)
        for task, task_cases in sets.items():
            if not task_cases:
                continue

            def row(label: str, figs: tuple[float, float]) -> None:
                rows.append(
                    {
                        "vault": name,  # noqa: B023
                        "task": task,  # noqa: B023
                        "links": len(task_cases),  # noqa: B023
                        "ranker": label,
                        "hit5": figs[0],
                        "mrr": figs[1],
                    }
                )

            row(
                "TF-IDF cosine (baseline)",
                figures([baseline.rank(ranker.ix.keys, c, ranker.ix.types) for c in task_cases]),
            )
            for label, weights in {
                "text only": TEXT_ONLY,
                "graph only": replace(chosen, text=0),
                "blend, equal weights": EQUAL,
                "blend": chosen,
            }.items():
                row(label, score(ranker, task_cases, weights))
            row("blend + diversity 0.3 (as shipped)", score(ranker, task_cases, chosen, 0.3))
    print("| vault | task | links | ranker | Hit@5 | MRR |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['vault']} | {r['task']} | {r['links']} | {r['ranker']} | "
            f"{r['hit5']:.3f} | {r['mrr']:.3f} |"
        )
    print(f"\nchosen weights: {asdict(chosen)}   ({time.perf_counter() - started:.1f} s)")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"weights": asdict(chosen), "rows": rows}, indent=2), encoding="utf-8"
        )
    for _name, vault, _r, _s in loaded:
        vault.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("STUDYKB_QUIET", "1")
    sys.exit(main())
