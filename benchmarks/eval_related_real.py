"""Related documents on real Markdown collections: can studykb find the links an author made?

    python benchmarks/eval_related_real.py FOLDER [FOLDER ...] [--sample 40] [--book FOLDER]
    python benchmarks/eval_related_real.py --tune FOLDER ... [--book FOLDER]  # fit the weights
    python benchmarks/eval_related_real.py FOLDER ... --weights '{"text": 8}'   # try others

For each collection (a folder of Markdown: an Obsidian vault, a digital garden, a docs
site, course notes), a fixed sample of notes (``--sample``, seeded) that link to other
notes is drawn; in a temporary copy of the collection every link of a sampled note is
turned into plain text (``[[Target|label]]`` -> ``label``, ``[[label|Target]]`` in a
vault that writes the label first, Dendron's, ``[label](page.md)`` -> ``label``; the
rest of the vault keeps its links). ``related NOTE --limit 10`` should
then find the notes the author had linked:

* recall@10: the share of the hidden links whose target is in the top 10 (over every
  hidden link of the sample);
* MRR: the mean over sampled notes of 1 / the rank of the first linked note in the top 10
  (0 when none is).

The baseline is computed in the same run on the same copy: a plain TF-IDF cosine over
each note's text (front matter left out), cut into words by jieba (``jieba.lcut``,
lowercased, words holding a letter, digit or Han character), tf x log(N / df), no stop
words, no graph. ``--book FOLDER`` adds the same-section measure for a book-like site:
for every page, the share of its top 5 related pages that sit in its own chapter (the
first folder of its path), studykb against the same baseline.

``--tune`` fits the weights (coordinate descent: a grid, then finer multiples) to the mean
over the collections' recall@10 and MRR and the books' same-chapter share of studykb's
ratio to the baseline, each ratio capped at :data:`CAP` (one collection far ahead cannot
pay for another behind); fit on the tuning collections only, never on the held-out ones.

The candidates are studykb's default types for both rankers (every note of a plain
vault). Nothing of a collection is kept: the copies are made in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from studykb.related.engine import Weights
from studykb.related.rank import DEFAULT_TYPES, Ranker, RelatedOptions
from studykb.session import Session

WIKI = re.compile(r"!?\[\[([^\]\|#]*)(#[^\]\|]*)?(?:\|([^\]]*))?\]\]")
MDLINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
WORD = re.compile(r"[\w\u3400-\u9fff]")
FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)


def plain(text: str, label_first: bool = False) -> str:
    """``text`` with every link to a page of the collection turned into its words: a
    wikilink's label, or its target's last part when it has none (``label_first``: the
    vault writes ``[[label|target]]``, as Dendron does)."""

    def wiki(m: re.Match[str]) -> str:
        target, label = m.group(1), m.group(3)
        if label_first and label is not None:
            target, label = label, target
        return label if label else target.rsplit("/", 1)[-1]

    def md(m: re.Match[str]) -> str:
        bang, label, url = m.groups()
        if re.match(r"[a-z]+:", url) or bang:  # an external link or an image stays
            return m.group(0)
        return label

    return MDLINK.sub(md, WIKI.sub(wiki, text))


@dataclass
class Collection:
    name: str
    copy: Path
    kb: Session
    sample: list[str]
    truth: dict[str, set[str]]
    keys: list[str] = field(default_factory=list)


def prepare(folder: Path, work: Path, size: int, seed: int = 1) -> Collection:
    """Copy ``folder``, sample the linking notes, hide their links in the copy, build."""
    name = f"{folder.parent.name}/{folder.name}"
    work = Path(tempfile.mkdtemp(dir=work))  # two collections may share a folder name
    orig = work / f"{folder.name}-orig"
    shutil.copytree(folder, orig, ignore=shutil.ignore_patterns(".studykb", ".git"))
    kb = Session.open(orig)
    kb.refresh()
    docs = kb.documents()
    label_first = kb.vault.reading.label_first
    keep = set(DEFAULT_TYPES)
    truth: dict[str, set[str]] = {}
    for e in kb.vault.edges(kind="link"):
        if e.source == e.target or e.target not in docs or e.source not in docs:
            continue
        if docs[e.source].type in keep and docs[e.target].type in keep:
            truth.setdefault(e.source, set()).add(e.target)
    kb.close()
    shutil.rmtree(orig)
    linking = sorted(k for k in truth if "#" not in k)
    sample = sorted(random.Random(seed).sample(linking, min(size, len(linking))))
    copy = work / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(".studykb", ".git"))
    for key in {k.split("#", 1)[0] for k in sample}:
        path = copy / docs[key].path
        text = path.read_text(encoding="utf-8")
        path.write_text(plain(text, label_first), encoding="utf-8")
    kb = Session.open(copy)
    kb.refresh()
    return Collection(name, copy, kb, sample, {k: truth[k] for k in sample})


# -- the baseline -------------------------------------------------------------------------
class Baseline:
    """TF-IDF cosine over jieba's words of every note (front matter left out)."""

    def __init__(self, kb: Session) -> None:
        import jieba

        jieba.setLogLevel(60)
        docs = [d for d in kb.documents().values() if d.type in DEFAULT_TYPES]
        self.keys = sorted(d.key for d in docs)
        self.number = {k: n for n, k in enumerate(self.keys)}
        by_key = {d.key: d for d in docs}
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for n, key in enumerate(self.keys):
            raw = (kb.root / by_key[key].path).read_text(encoding="utf-8", errors="replace")
            words = [w for w in jieba.lcut(FRONT.sub("", raw).lower()) if WORD.search(w)]
            for w, c in Counter(words).items():
                rows.append(n)
                cols.append(vocab.setdefault(w, len(vocab)))
                vals.append(float(c))
        tf = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.keys), max(1, len(vocab))))
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        idf = np.log(len(self.keys) / np.maximum(df, 1))
        x = sp.csr_matrix(tf @ sp.diags(idf))
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1
        self.x = sp.csr_matrix(sp.diags(1 / norms) @ x)

    def related(self, key: str, limit: int) -> list[str]:
        n = self.number[key]
        sims = (self.x[n] @ self.x.T).toarray().ravel()
        sims[n] = -1
        order = np.lexsort((np.arange(len(sims)), -sims))[:limit]
        return [self.keys[j] for j in order if sims[j] > 0]


# -- measures -------------------------------------------------------------------------------
def measure(lists: dict[str, list[str]], truth: dict[str, set[str]]) -> tuple[float, float]:
    """(recall@10 over every hidden link, MRR over notes)."""
    found = total = 0
    rr = 0.0
    for key, want in truth.items():
        got = lists.get(key, [])[:10]
        found += len(want & set(got))
        total += len(want)
        rr += next((1 / (n + 1) for n, k in enumerate(got) if k in want), 0.0)
    return found / max(1, total), rr / max(1, len(truth))


def misses(c: Collection, options: RelatedOptions, base: Baseline) -> list[str]:
    """Lines for each sampled note whose first linked note is not studykb's first: the
    rank it is at (0: not in the top 10), studykb's top 3 with their reasons, TF-IDF's
    rank of it (to read the causes of the failures; nothing is fitted on them)."""
    ranker = Ranker.for_vault(c.kb.vault, options.text)
    got = ranker.related_many(c.sample, options)
    out = []
    for key in c.sample:
        found, want = got.get(key, []), c.truth[key]
        keys = [r.key for r in found][:10]
        first = next((n + 1 for n, k in enumerate(keys) if k in want), 0)
        if first == 1:
            continue
        theirs = base.related(key, 10)
        tf = next((n + 1 for n, k in enumerate(theirs) if k in want), 0)
        out.append(f"{key}: first linked at {first} (TF-IDF {tf}), {len(want)} linked")
        for r in found[:3]:
            mark = "*" if r.key in want else " "
            out.append(f"   {mark} {r.key} {r.score:.3f} {'; '.join(r.reasons)}")
    return out


def studykb_lists(c: Collection, options: RelatedOptions) -> dict[str, list[str]]:
    ranker = Ranker.for_vault(c.kb.vault, options.text)
    got = ranker.related_many(c.sample, options)
    return {k: [r.key for r in found] for k, found in got.items()}


@dataclass
class Book:
    """A book-like site: every page, its chapter (the first folder of its path)."""

    name: str
    kb: Session
    pages: list[str]
    chapter: dict[str, str]
    tfidf: float = 0.0

    def share(self, lists: dict[str, list[str]]) -> float:
        chapter = self.chapter
        vals = [sum(chapter[j] == chapter[k] for j in got[:5]) / 5 for k, got in lists.items()]
        return sum(vals) / max(1, len(vals))

    def studykb(self, options: RelatedOptions) -> float:
        ranker = Ranker.for_vault(self.kb.vault, options.text)
        ours = ranker.related_many(self.pages, replace(options, limit=5))
        return self.share({k: [r.key for r in v] for k, v in ours.items()})


def prepare_book(folder: Path, work: Path) -> Book:
    """The same-section measure's site, built, with the baseline's share."""
    copy = Path(tempfile.mkdtemp(dir=work)) / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(".studykb", ".git"))
    kb = Session.open(copy)
    kb.refresh()
    docs = kb.documents()
    pages = sorted(k for k, d in docs.items() if d.type in DEFAULT_TYPES and "/" in d.path)
    chapter = {k: docs[k].path.split("/", 1)[0] for k in docs}
    book = Book(f"{folder.parent.name}/{folder.name}", kb, pages, chapter)
    base = Baseline(kb)
    book.tfidf = book.share({k: base.related(k, 5) for k in pages})
    return book


# -- tuning -----------------------------------------------------------------------------------
GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: After the grid, each weight is tried at these multiples of its value.
REFINE = (0.5, 0.7, 0.88, 1.14, 1.4, 2.0)
#: A ratio to the baseline counts up to this much: a collection far ahead already cannot
#: pay for one behind.
CAP = 1.4


def tune(cols: list[Collection], books: list[Book], start: Weights, rounds: int = 3) -> Weights:
    """Coordinate descent on the weights: the mean, over ``cols``' recall@10 and MRR and
    ``books``' same-chapter share, of studykb's ratio to the baseline, each capped at
    :data:`CAP`."""
    base = []
    for c in cols:
        b = Baseline(c.kb)
        base.append(measure({k: b.related(k, 10) for k in c.sample}, c.truth))

    def value(w: Weights) -> float:
        opts = RelatedOptions(weights=w)
        ratios = []
        for c, (b_recall, b_mrr) in zip(cols, base, strict=True):
            recall, mrr = measure(studykb_lists(c, opts), c.truth)
            ratios += [recall / max(b_recall, 1e-9), mrr / max(b_mrr, 1e-9)]
        ratios += [b.studykb(opts) / max(b.tfidf, 1e-9) for b in books]
        return sum(min(r, CAP) for r in ratios) / max(1, len(ratios))

    best, best_value = start, value(start)
    for _round in range(rounds):
        moved = False
        for name in best.by_name():
            now = getattr(best, name)
            tries = GRID if _round == 0 else tuple(round(now * f, 3) for f in REFINE)
            for g in tries:
                trial = replace(best, **{name: g})
                v = value(trial)
                if v > best_value + 1e-9:
                    best, best_value, moved = trial, v, True
        print(f"  round {_round + 1}: {best_value:.4f} {best}", file=sys.stderr)
        if not moved and _round > 0:
            break
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--book", type=Path, action="append", default=[])
    ap.add_argument("--tune", action="store_true", help="fit the weights on FOLDERS and books")
    ap.add_argument("--rounds", type=int, default=3, help="tuning rounds (the grid, then finer)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="print the notes missed at rank 1")
    ap.add_argument("--diversity", type=float, default=RelatedOptions().diversity)
    ap.add_argument("--weights", default="{}", help='JSON of weights to change: {"text": 8}')
    args = ap.parse_args(argv)
    start = replace(Weights(), **json.loads(args.weights))
    options = RelatedOptions(limit=10, diversity=args.diversity, weights=start)
    rows = []
    with tempfile.TemporaryDirectory(prefix="studykb-eval-") as tmp:
        work = Path(tmp)
        cols = []
        for folder in args.folders:
            started = time.perf_counter()
            c = prepare(folder.resolve(), work, args.sample, args.seed)
            cols.append(c)
            print(
                f"{c.name}: {len(c.kb.documents())} documents, {len(c.sample)} notes, "
                f"{sum(map(len, c.truth.values()))} links hidden "
                f"({time.perf_counter() - started:.1f} s)",
                file=sys.stderr,
            )
        books = [prepare_book(b.resolve(), work) for b in args.book]
        if args.tune:
            fitted = tune(cols, books, start, args.rounds)
            print(json.dumps(fitted.by_name()))
            options = RelatedOptions(limit=10, weights=fitted, diversity=args.diversity)
        for c in cols:
            base = Baseline(c.kb)
            b_recall, b_mrr = measure({k: base.related(k, 10) for k in c.sample}, c.truth)
            s_recall, s_mrr = measure(studykb_lists(c, options), c.truth)
            if args.misses:
                print(f"\n{c.name}", *misses(c, options, base), sep="\n", file=sys.stderr)
            rows.append(
                {
                    "collection": c.name,
                    "notes": len(c.sample),
                    "links": sum(map(len, c.truth.values())),
                    "studykb_recall": s_recall,
                    "tfidf_recall": b_recall,
                    "recall_ratio": s_recall / b_recall if b_recall else math.inf,
                    "studykb_mrr": s_mrr,
                    "tfidf_mrr": b_mrr,
                    "mrr_ratio": s_mrr / b_mrr if b_mrr else math.inf,
                }
            )
            c.kb.close()
        shares = [
            {"book": b.name, "pages": len(b.pages), "studykb": b.studykb(options), "tfidf": b.tfidf}
            for b in books
        ]
        for b in books:
            b.kb.close()
    if args.json:
        print(json.dumps({"links": rows, "books": shares}, indent=2))
        return 0
    print(
        "| collection | notes | links | recall@10 studykb | TF-IDF | ratio "
        "| MRR studykb | TF-IDF | ratio |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['collection']} | {r['notes']} | {r['links']} | {r['studykb_recall']:.3f} | "
            f"{r['tfidf_recall']:.3f} | {r['recall_ratio']:.2f}x | {r['studykb_mrr']:.3f} | "
            f"{r['tfidf_mrr']:.3f} | {r['mrr_ratio']:.2f}x |"
        )
    for b in shares:
        print(
            f"\nsame chapter in the top 5, {b['book']} ({int(b['pages'])} pages): studykb "
            f"{b['studykb']:.3f}, TF-IDF {b['tfidf']:.3f} "
            f"({b['studykb'] / max(b['tfidf'], 1e-9):.2f}x)"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("STUDYKB_QUIET", "1")
    raise SystemExit(main())
