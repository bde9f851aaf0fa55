"""Write a synthetic vault with topical structure, for evaluating related documents.

    python benchmarks/gen_topical.py OUT_DIR --docs 2000 [--seed 1]

``gen_vault.py`` draws its links at random (no ranker can beat chance on it); here
links follow subjects, as in real notes, so hiding one and ranking its source is a
held-out test of related documents. The vault:

* **subjects** (one per ~40 documents), each a topic page with an English and a Chinese
  name, grouped into **areas** (five subjects each); every subject has its own words in
  both languages (made-up, so no ranker knows them in advance), an area has words too;
* **notes and entries** (readings) each about a main subject and sometimes a second
  one: their text mixes their subjects' words (a third of it), their area's, and a
  background every document shares: common technical words and the filler of notes
  (``这是``, ``内容``, ``笔记``, ``page``, ``notes``); 40 % Chinese (half of their
  technical terms written in English, as real notes do), 40 % English, the rest mixed;
* **threads**: each subject has four narrower threads (a paper and its follow-ups),
  with words of their own; a document belongs to one;
* **links** (body wikilinks and front-matter ``refs``): a note cites 6-18 documents
  (the bundled notes cite 12 on average, its readings 0.4; a reading here cites 0 or 1),
  half of them of its own thread, a quarter of its subject, the rest of its area or
  anywhere, some documents far more often than others (Zipf); readings cite few;
  ``tags``/``covers`` name the subjects;
* **reading lists**: most about one subject; a few cite everything (40 items drawn
  from the whole vault), which is no evidence that two of their items are related;
* **courses** with units on the subjects of one area.

``OUT_DIR/.bench.json`` records the seed and counts. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gen_vault import EN_WORDS, ZH_WORDS, _yaml  # noqa: E402

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tor",
    "vex",
    "qua",
    "zim",
    "pol",
    "dra",
    "fen",
    "sul",
    "bri",
    "gon",
    "hal",
    "nex",
    "ori",
    "pax",
    "tem",
    "wyn",
    "cor",
    "dal",
    "ish",
    "mur",
]
HAN_CHARS = "衡彦珂瑶琛璃瑾砚翊樾霁昀皓岚澈珩钰琪骁煜晗旻渊峤澄弈岑"
FILLER_ZH = ["这是", "内容", "笔记", "部分", "相关", "介绍", "记录"]
FILLER_EN = ["page", "notes", "section", "example", "thing", "part", "read"]
SUBJECT_SIZE = 40
AREA_SUBJECTS = 5
THREADS = 4


@dataclass
class Subject:
    n: int
    area: int
    en: list[str]
    zh: list[str]
    topic: str = ""
    name: str = ""
    threads: list[tuple[list[str], list[str]]] = field(default_factory=list)
    """Narrower threads of the subject (a paper and its follow-ups...), with words."""


@dataclass
class Doc:
    path: str
    id: str
    title: str
    type: str
    lang: str
    main: int = -1
    second: int = -1
    thread: int = 0
    meta: dict = field(default_factory=dict)
    links: list[str] = field(default_factory=list)


class Topical:
    def __init__(self, n: int, seed: int) -> None:
        self.n, self.rng = n, random.Random(seed)
        self.subjects: list[Subject] = []
        self.areas: list[tuple[list[str], list[str]]] = []
        self.docs: list[Doc] = []
        self.han_pool = _dictionary_nouns()
        self.rng.shuffle(self.han_pool)

    # -- words -------------------------------------------------------------------------------
    def made_word(self) -> str:
        return "".join(self.rng.choices(SYLLABLES, k=self.rng.randint(2, 3)))

    def made_han(self) -> str:
        """A Chinese word for a subject: a dictionary noun (so segmentation finds it, as
        in real notes), else made up."""
        if self.han_pool:
            return self.han_pool.pop()
        return "".join(self.rng.sample(HAN_CHARS, k=self.rng.randint(2, 3)))

    def plan(self) -> None:
        count = max(5, self.n // SUBJECT_SIZE)
        for _area in range(-(-count // AREA_SUBJECTS)):
            self.areas.append(
                ([self.made_word() for _ in range(8)], [self.made_han() for _ in range(6)])
            )
        for s in range(count):
            subject = Subject(
                s,
                s // AREA_SUBJECTS,
                [self.made_word() for _ in range(12)],
                [self.made_han() for _ in range(8)],
            )
            subject.name = f"{subject.en[0].title()} {subject.en[1]}"
            subject.threads = [
                ([self.made_word() for _ in range(4)], [self.made_han() for _ in range(3)])
                for _ in range(THREADS)
            ]
            subject.topic = f"s{s:04d}-{subject.en[0]}"
            self.subjects.append(subject)
            self.docs.append(
                Doc(
                    f"notes/topics/{subject.topic}.md",
                    subject.topic,
                    subject.name,
                    "topic",
                    "en",
                    s,
                    meta={"aliases": [subject.zh[0] + subject.zh[1]]},
                )
            )
        rest = self.n - count
        for k in range(rest):
            r = self.rng.random()
            kind = "note" if r < 0.55 else "entry" if r < 0.93 else "course" if r < 0.96 else "list"
            self.docs.append(self._doc(kind, k))
        self._links()

    def _doc(self, kind: str, k: int) -> Doc:
        rng = self.rng
        main = rng.randrange(len(self.subjects))
        second = -1
        if rng.random() < 0.3:
            area = self.subjects[main].area
            near = [s.n for s in self.subjects if s.area == area and s.n != main]
            second = (
                rng.choice(near)
                if near and rng.random() < 0.7
                else rng.randrange(len(self.subjects))
            )
        lang = rng.choices(("zh", "en", "mix"), (0.4, 0.4, 0.2))[0]
        subject = self.subjects[main]
        folder = {
            "note": "notes",
            "entry": "notes/entries",
            "course": "courses",
            "list": "notes/lists",
        }[kind]
        title = (
            f"{subject.en[rng.randrange(12)].title()} {rng.choice(EN_WORDS[:60])} "
            f"{subject.zh[rng.randrange(8)]} {k}"
        )
        return Doc(
            f"{folder}/{kind[0]}{k:05d}.md",
            f"{kind[0]}{k:05d}",
            title,
            kind,
            lang,
            main,
            second,
            rng.randrange(THREADS),
        )

    # -- links -------------------------------------------------------------------------------
    def _links(self) -> None:
        rng = self.rng
        by_subject: dict[int, list[Doc]] = {}
        by_thread: dict[tuple[int, int], list[Doc]] = {}
        by_area: dict[int, list[Doc]] = {}
        readable = [d for d in self.docs if d.type in ("note", "entry")]
        for d in readable:
            by_subject.setdefault(d.main, []).append(d)
            by_thread.setdefault((d.main, d.thread), []).append(d)
            by_area.setdefault(self.subjects[d.main].area, []).append(d)
        # some documents are cited much more than others (a Zipf law), as in real notes
        order = list(readable)
        rng.shuffle(order)
        fame = {x.id: 1.0 / (1 + n % 50) for n, x in enumerate(order)}
        for d in self.docs:
            if d.type == "topic":
                continue
            topics = [self.subjects[d.main].topic] + (
                [self.subjects[d.second].topic] if d.second >= 0 else []
            )
            d.meta["tags" if rng.random() < 0.5 else "covers"] = topics
            if d.type == "list":
                pool = readable if rng.random() < 0.3 else by_subject.get(d.main, readable)
                size = 40 if pool is readable else min(12, len(pool))
                d.meta["items"] = [x.id for x in rng.sample(pool, min(size, len(pool)))]
                continue
            if d.type == "course":
                area = self.subjects[d.main].area
                units = [s for s in self.subjects if s.area == area]
                d.meta["units"] = [
                    {"id": f"u{u}", "title": f"Unit {u}: {s.name}", "tags": [s.topic]}
                    for u, s in enumerate(units)
                ]
                continue
            # as in the bundled vault: notes cite 12 documents on average, readings 0.4
            wanted = rng.randint(6, 18) if d.type == "note" else int(rng.random() < 0.4)
            for _ in range(wanted):
                r = rng.random()
                pool = (
                    by_thread.get((d.main, d.thread), readable)
                    if r < 0.5
                    else by_subject.get(d.main, readable)
                    if r < 0.75
                    else by_area.get(self.subjects[d.main].area, readable)
                    if r < 0.9
                    else readable
                )
                target = rng.choices(pool, [fame[x.id] for x in pool])[0]
                if target is not d and target.id not in d.links:
                    d.links.append(target.id)

    # -- text ----------------------------------------------------------------------------------
    def words(self, d: Doc, k: int) -> list[str]:
        rng = self.rng
        main = self.subjects[d.main]
        second = self.subjects[d.second] if d.second >= 0 else main
        area_en, area_zh = self.areas[main.area]
        out = []
        zh = d.lang == "zh" or (d.lang == "mix" and rng.random() < 0.5)
        for _ in range(k):
            r = rng.random()
            # Chinese notes write half of their technical terms in English, as real ones do
            term_zh = zh and rng.random() < 0.5
            if r < 0.15:
                out.append(rng.choice(main.zh if term_zh else main.en))
            elif r < 0.25:
                thread_en, thread_zh = main.threads[d.thread]
                out.append(rng.choice(thread_zh if term_zh else thread_en))
            elif r < 0.33:
                out.append(rng.choice(second.zh if term_zh else second.en))
            elif r < 0.43:
                out.append(rng.choice(area_zh if term_zh else area_en))
            elif r < 0.55:
                out.append(rng.choice(FILLER_ZH if zh else FILLER_EN))
            else:
                out.append(rng.choice(ZH_WORDS if zh else EN_WORDS))
        return out

    def body(self, d: Doc) -> str:
        rng = self.rng
        parts = [f"# {d.title}", ""]
        if d.type == "topic":
            s = self.subjects[d.main]
            parts += [" ".join(s.en[:6]) + "。" + "".join(s.zh[:4]) + "。", ""]
        for _ in range(rng.randint(3, 6)):
            zh = d.lang == "zh"
            words = self.words(d, rng.randint(12, 24))
            text = "".join(w if _han(w) else f" {w} " for w in words) if zh else " ".join(words)
            parts += [" ".join(text.split()) + ("。" if zh else "."), ""]
        if d.links:
            body_links = d.links[: max(1, len(d.links) // 2)]
            parts += ["See " + ", ".join(f"[[{t}]]" for t in body_links) + ".", ""]
            d.meta["refs"] = d.links[len(body_links) :]
        return "\n".join(parts)

    def render(self, d: Doc) -> str:
        meta = {"id": d.id, "title": d.title, "type": d.type, **d.meta}
        meta = {k: v for k, v in meta.items() if v not in ([], None)}
        front = "---\n" + "".join(f"{k}: {_yaml(v)}\n" for k, v in meta.items()) + "---\n"
        return front + "\n" + self.body(d)


def _han(word: str) -> bool:
    return "\u4e00" <= word[0] <= "\u9fff"


def _dictionary_nouns() -> list[str]:
    """Two- and three-character nouns of mid frequency from jieba's dictionary (sorted),
    or [] without jieba."""
    try:
        import jieba
    except ImportError:
        return []
    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if (
                len(parts) == 3
                and parts[2] == "n"
                and 2 <= len(parts[0]) <= 3
                and 200 <= int(parts[1]) <= 3000
                and all("\u4e00" <= c <= "\u9fff" for c in parts[0])
            ):
                out.append(parts[0])
    return sorted(set(out) - set(ZH_WORDS) - set(FILLER_ZH))


def generate(out: str, n: int, seed: int = 1) -> dict:
    gen = Topical(n, seed)
    gen.plan()
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for d in gen.docs:
        path = os.path.join(out, d.path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = gen.render(d)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(out, "studykb.toml"), "w", encoding="utf-8") as fh:
        fh.write(f"# topical vault for the related evaluation: {n} documents, seed {seed}\n")
    info = {
        "docs": len(gen.docs),
        "seed": seed,
        "subjects": len(gen.subjects),
        "generator": "gen_topical",
    }
    with open(os.path.join(out, ".bench.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=2)
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("out", help="folder to write (replaced)")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if (
        os.path.exists(args.out)
        and os.listdir(args.out)
        and not os.path.exists(os.path.join(args.out, ".bench.json"))
    ):
        ap.error(f"{args.out} is not empty and not a generated vault; refusing to overwrite it")
    info = generate(args.out, args.docs, args.seed)
    print(f"{info['docs']} documents, {info['subjects']} subjects -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
