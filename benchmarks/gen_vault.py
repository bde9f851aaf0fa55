"""Write a synthetic studykb vault for benchmarks.

    python benchmarks/gen_vault.py OUT_DIR --docs 10000 [--seed 1]

About 2 KB per document (about 23 MB for 10k), a fifth of the prose Chinese, some
mixed Chinese/English; deterministic for a seed. Every kind of front matter (YAML,
TOML ``+++``, JSON; a few with a BOM, CRLF line ends or blank lines before it) and
every kind of reference (wikilinks with label/heading, embeds, relative Markdown
links, bare URLs and URLs matching entries' ``url``, front-matter refs/requires
(also ``{ref, reason}``)/related/course/items, tags and covers naming topics),
code blocks and ``$$`` math holding fake links, and a small fraction of dangling
references, ambiguous titles and one prerequisite loop.

Topics form a deep DAG of prerequisites (each requires an earlier neighbour plus
random earlier topics), so at 10k documents some topic has well over 300
ancestors. ``OUT_DIR/.bench.json`` records it as ``deep_target`` together with a
few other handy names (a much-linked topic for ``backlinks``, a file to edit).
``OUT_DIR/studykb.toml`` excludes ``drafts/`` (which holds a few extra files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field

EN_WORDS = [
    "tensor",
    "kernel",
    "gradient",
    "attention",
    "memory",
    "bandwidth",
    "latency",
    "throughput",
    "batch",
    "shard",
    "pipeline",
    "scheduler",
    "cache",
    "token",
    "embedding",
    "layer",
    "optimizer",
    "warp",
    "thread",
    "block",
    "register",
    "compiler",
    "graph",
    "operator",
    "fusion",
    "precision",
    "quantization",
    "checkpoint",
    "collective",
    "ring",
    "tree",
    "allreduce",
    "scatter",
    "gather",
    "overlap",
    "stream",
    "launch",
    "occupancy",
    "tile",
    "matrix",
    "vector",
    "sparse",
    "dense",
    "loss",
    "schedule",
    "learning",
    "rate",
    "momentum",
    "variance",
    "norm",
    "residual",
    "projection",
    "head",
    "query",
    "key",
    "value",
    "softmax",
    "causal",
    "mask",
    "rotary",
    "position",
    "context",
    "window",
    "decode",
    "prefill",
    "speculative",
    "draft",
    "verify",
    "accept",
    "reject",
    "sample",
    "beam",
    "greedy",
    "temperature",
    "serving",
    "replica",
    "router",
    "queue",
    "request",
    "profile",
    "trace",
    "timeline",
    "roofline",
    "arithmetic",
    "intensity",
    "flop",
    "byte",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "that",
    "for",
    "with",
    "on",
    "as",
    "by",
    "this",
    "we",
    "it",
    "from",
    "at",
    "which",
    "can",
    "be",
    "are",
    "when",
    "more",
    "than",
    "each",
    "one",
    "two",
]
ZH_WORDS = [
    "张量",
    "内核",
    "梯度",
    "注意力",
    "显存",
    "带宽",
    "延迟",
    "吞吐",
    "批次",
    "分片",
    "流水线",
    "调度",
    "缓存",
    "词元",
    "嵌入",
    "层",
    "优化器",
    "线程",
    "寄存器",
    "编译器",
    "计算图",
    "算子",
    "融合",
    "精度",
    "量化",
    "检查点",
    "通信",
    "环形",
    "规约",
    "重叠",
    "占用率",
    "矩阵",
    "向量",
    "稀疏",
    "稠密",
    "损失",
    "学习率",
    "动量",
    "方差",
    "归一化",
    "残差",
    "投影",
    "查询",
    "键",
    "值",
    "因果",
    "掩码",
    "旋转",
    "位置",
    "上下文",
    "窗口",
    "解码",
    "预填充",
    "投机",
    "草稿",
    "验证",
    "采样",
    "温度",
    "服务",
    "副本",
    "路由",
    "队列",
    "请求",
    "性能",
    "分析",
    "时间线",
    "屋顶线",
    "算术",
    "强度",
    "的",
    "是",
    "在",
    "和",
    "了",
    "与",
    "对",
    "把",
    "可以",
    "需要",
    "因为",
    "所以",
    "如果",
    "这个",
    "一个",
    "我们",
    "通过",
    "进行",
    "实现",
    "使用",
    "问题",
    "方法",
]
AREAS = ("gpu", "training", "serving", "compilers", "systems", "models", "data", "math")
KINDS = ("article", "tutorial", "talk", "course", "repo", "paper", "book", "video", "docs", "post")
LEVELS = (1, 2, 3, 4, 5, "intro", "intermediate", "advanced", "入门", "进阶")
STATUSES = ("todo", "reading", "done", "read", "learned", None, None, None)
FAKE = "[[fake-in-code]] [not a link](fake.md) https://fake.example.com/x"


@dataclass
class Doc:
    """One document to write."""

    path: str
    id: str
    title: str
    type: str
    lang: str  # en | zh | mix
    meta: dict = field(default_factory=dict)
    body_links: list[str] = field(default_factory=list)
    explicit_id: bool = True


class Gen:
    def __init__(self, n: int, seed: int) -> None:
        self.n = n
        self.rng = random.Random(seed)
        self.docs: list[Doc] = []

    # -- text ---------------------------------------------------------------------
    def words(self, lang: str, k: int) -> str:
        rng = self.rng
        if lang == "zh":
            return "".join(rng.choices(ZH_WORDS, k=k))
        if lang == "mix":
            half = k // 2
            return (
                " ".join(rng.choices(EN_WORDS, k=half))
                + " "
                + "".join(rng.choices(ZH_WORDS, k=k - half))
            )
        return " ".join(rng.choices(EN_WORDS, k=k))

    def sentence(self, lang: str) -> str:
        text = self.words(lang, self.rng.randint(8, 16))
        return text[0].upper() + text[1:] + ("。" if lang == "zh" else ".")

    def paragraph(self, lang: str, sentences: int) -> str:
        return " ".join(self.sentence(lang) for _ in range(sentences))

    def pick_lang(self) -> str:
        r = self.rng.random()
        return "zh" if r < 0.15 else "mix" if r < 0.25 else "en"

    # -- plan of the vault ------------------------------------------------------------
    def plan(self) -> None:
        n, rng = self.n, self.rng
        n_topics = max(12, n * 15 // 100)
        n_courses = max(2, n * 2 // 100)
        n_lists = max(2, n * 2 // 100)
        n_entries = max(5, n * 40 // 100)
        n_notes = max(1, n - n_topics - n_courses - n_lists - n_entries)
        self.topics = [self._topic(i) for i in range(n_topics)]
        self.entries = [self._entry(i) for i in range(n_entries)]
        self.courses = [self._course(i) for i in range(n_courses)]
        self.notes = [self._note(i) for i in range(n_notes)]
        self.lists = [self._list(i) for i in range(n_lists)]
        self.docs = self.topics + self.entries + self.courses + self.notes + self.lists
        self._prerequisites()
        self._cross_refs()
        # a few documents without a front matter id whose title repeats another's: ambiguous-ref
        self.dup_titles: list[str] = []
        for i in range(0, len(self.notes), 250):
            if i + 1 < len(self.notes):
                self.notes[i + 1].title = self.notes[i].title
                self.dup_titles.append(self.notes[i].title)
        rng.shuffle(self.docs)

    def _topic(self, i: int) -> Doc:
        area = AREAS[i % len(AREAS)]
        stem = f"t{i:05d}-{EN_WORDS[i % 60]}-{EN_WORDS[(i * 7) % 60]}"
        doc = Doc(
            f"notes/topics/{area}/{stem}.md",
            stem,
            f"{EN_WORDS[i % 60].title()} {EN_WORDS[(i * 7) % 60].title()} {i}",
            "topic",
            self.pick_lang(),
        )
        doc.meta["aliases"] = [f"{ZH_WORDS[i % 40]}{ZH_WORDS[(i * 3) % 40]}{i}"]
        doc.meta["level"] = 1 + (i * 5) // max(1, self.n * 15 // 100)
        return doc

    def _entry(self, i: int) -> Doc:
        kind = KINDS[i % len(KINDS)]
        stem = f"e{i:05d}"
        doc = Doc(
            f"notes/entries/{kind}s/{stem}.md",
            f"entry-{i:05d}",
            f"{self.words('en', 4).title()} ({kind} {i})",
            "entry",
            self.pick_lang(),
        )
        doc.meta["url"] = f"https://example.org/{kind}/{i:05d}"
        doc.meta["kind"] = kind
        doc.meta["source"] = "Synthetic Weekly"
        doc.meta["authors"] = ["A. Author", "B. 作者"]
        return doc

    def _course(self, i: int) -> Doc:
        stem = f"c{i:04d}"
        doc = Doc(
            f"courses/{stem}.md",
            stem,
            f"Course {i}: {self.words('en', 3).title()}",
            "course",
            self.pick_lang(),
        )
        doc.meta["url"] = f"https://courses.example.edu/c{i:04d}/"
        return doc

    def _note(self, i: int) -> Doc:
        area = AREAS[i % len(AREAS)]
        folder = "notes" if i % 5 == 0 else f"notes/{area}"
        stem = f"n{i:05d}"
        doc = Doc(
            f"{folder}/{stem}.md",
            stem,
            f"Note {i} on {self.words('en', 3)}",
            "note",
            self.pick_lang(),
            explicit_id=(i % 3 != 0),
        )
        return doc

    def _list(self, i: int) -> Doc:
        stem = f"l{i:04d}"
        return Doc(f"notes/lists/{stem}.md", stem, f"Reading list {i}", "list", self.pick_lang())

    def _prerequisites(self) -> None:
        rng, topics = self.rng, self.topics
        parents: list[list[int]] = []
        for i, topic in enumerate(topics):
            ps: list[int] = []
            if i:
                ps.append(rng.randint(max(0, i - 6), i - 1))
                for _ in range(rng.randint(0, 2)):
                    ps.append(rng.randrange(i))
            ps = sorted(set(ps))
            parents.append(ps)
            reqs: list[object] = []
            for j, p in enumerate(ps):
                if j == 0 and i % 4 == 0:
                    reqs.append({"ref": topics[p].id, "reason": self.words("en", 5)})
                elif j == 1 and i % 7 == 0:
                    reqs.append(f"[[{topics[p].id}]]")
                else:
                    reqs.append(topics[p].id)
            if reqs:
                topic.meta["requires"] = reqs
        # ancestors by bitsets, to name a deep target
        anc: list[int] = []
        for ps in parents:
            bits = 0
            for p in ps:
                bits |= anc[p] | (1 << p)
            anc.append(bits)
        counts = [bin(b).count("1") for b in anc]
        candidates = range(len(topics) - 3 if len(topics) >= 12 else len(topics))  # not the loop
        self.deep = max(candidates, key=lambda k: (counts[k], -k))
        self.deep_ancestors = counts[self.deep]
        self.mid = min(candidates, key=lambda k: (abs(counts[k] - 300), k))
        self.mid_ancestors = counts[self.mid]
        # a deliberate loop among three extra topics nobody requires
        if len(topics) >= 12:
            loop = topics[-3:]
            for a, b in zip(loop, loop[1:] + loop[:1], strict=True):
                a.meta["requires"] = [b.id]

    def _cross_refs(self) -> None:
        rng = self.rng
        topics, entries, courses, notes = self.topics, self.entries, self.courses, self.notes
        nt = len(topics)
        for k, e in enumerate(entries):
            t = rng.randrange(nt - 3)
            cov = [topics[t].id] + ([topics[t].meta["aliases"][0]] if k % 5 == 0 else [])
            e.meta["covers"] = cov
            e.meta["tags"] = [AREAS[k % len(AREAS)], "synthetic"]
            if t and k % 2 == 0:
                e.meta["requires"] = [topics[rng.randrange(t)].id]
            e.meta["level"] = rng.choice(LEVELS)
            _set(e.meta, "status", rng.choice(STATUSES))
        for c in courses:
            units = []
            for u in range(5):
                unit: dict = {
                    "id": f"u{u}",
                    "title": f"Unit {u}: {self.words('en', 3)}",
                    "tags": [topics[rng.randrange(nt - 3)].id],
                }
                if u:
                    unit["requires"] = [f"u{u - 1}"]
                unit["status"] = rng.choice(("todo", "reading", "done"))
                units.append(unit)
            c.meta["units"] = units
            c.meta["tags"] = [topics[rng.randrange(nt - 3)].id for _ in range(3)]
            c.meta["related"] = [entries[rng.randrange(len(entries))].id]
        for k, n in enumerate(notes):
            refs: list[object] = [entries[rng.randrange(len(entries))].id for _ in range(2)]
            if k % 3 == 0:
                refs.append(f"[[{entries[rng.randrange(len(entries))].id}]]")
            if k % 4 == 0:
                refs.append(entries[rng.randrange(len(entries))].meta["url"])
            if k % 97 == 0:
                refs.append(f"missing-entry-{k}")  # dangling
            n.meta["refs"] = refs
            n.meta["tags"] = [topics[rng.randrange(nt - 3)].id, AREAS[k % len(AREAS)]]
            n.meta["requires"] = [topics[rng.randrange(nt - 3)].id]
            if k % 4 == 0 and courses:
                c = courses[rng.randrange(len(courses))]
                n.meta["course"] = c.id
                n.meta["related"] = [f"{c.id}#u{rng.randrange(5)}"]
            elif k % 4 == 1:
                n.meta["related"] = [notes[rng.randrange(len(notes))].id]
            _set(n.meta, "status", rng.choice(STATUSES))
            n.meta["date"] = f"2026-{1 + k % 12:02d}-{1 + k % 28:02d}"
        for lst in self.lists:
            items = [entries[rng.randrange(len(entries))].id for _ in range(rng.randint(15, 30))]
            items.insert(3, f"[[{topics[rng.randrange(nt - 3)].id}]]")
            lst.meta["items"] = items
        for d in self.docs:
            if d.type in ("note", "course") and rng.random() < 0.3:
                d.meta["level"] = rng.choice(LEVELS)

    # -- body ---------------------------------------------------------------------------
    def relpath(self, src: str, dst: str) -> str:
        return os.path.relpath(dst, os.path.dirname(src) or ".").replace(os.sep, "/")

    def body(self, d: Doc) -> str:
        rng, lang = self.rng, d.lang
        topics, entries, notes = self.topics, self.entries, self.notes
        t1, t2 = rng.choice(topics), rng.choice(topics)
        e1, e2 = rng.choice(entries), rng.choice(entries)
        n1 = rng.choice(notes)
        u = e1.meta["url"]
        url_variant = rng.choice(
            (
                u,
                u + "/",
                u.replace("https://example.org", "HTTPS://Example.ORG"),
                u + "?utm_source=feed#part",
                u + "#intro",
            )
        )
        dangling = rng.random() < 0.02
        parts = [
            f"# {d.title}",
            "",
            self.paragraph(lang, 4),
            "",
            "## Overview",
            "",
            f"{self.sentence(lang)} See [[{t1.id}]] and [[{t2.id}|{t2.title}]], "
            f"then [[{e1.id}#Details]] for background.",
            f"The entry [{e2.title}]({self.relpath(d.path, e2.path)}) and "
            f"[the note]({self.relpath(d.path, n1.path)}#details) help; "
            f"read it at {url_variant} or [{self.words('en', 2)}]({e2.meta['url']}/).",
            "",
            self.paragraph(lang, 3),
            "",
        ]
        if rng.random() < 0.3:
            parts += [f"![[{t1.id}]]", "", "![[diagram.png]]", ""]
        if rng.random() < 0.25:
            parts += [f"Also by alias: [[{t1.meta['aliases'][0]}]], by title: [[{t2.title}]].", ""]
        if self.dup_titles and rng.random() < 0.01:
            parts += [f"Which one? [[{rng.choice(self.dup_titles)}]].", ""]
        if dangling:
            parts += [f"A broken one: [[no-such-note-{rng.randrange(10**6)}]].", ""]
        parts += [
            "## Details",
            "",
            self.paragraph(lang, 3),
            "",
            "```python",
            f"# {FAKE}",
            "x = load('[[also-fake]]')",
            "```",
            "",
            "Inline `[[inline-fake]]` code, external https://www.python.org/doc/ "
            "and [docs](https://docs.python.org/3/).",
            "",
        ]
        if rng.random() < 0.5:
            parts += ["$$", r"\sum_i x_i [[math-fake]] (fake.md)", "$$", ""]
        if rng.random() < 0.2:
            parts += ["    indented [[indented-fake]] code", ""]
        parts += [
            "## 要点",
            "",
            self.paragraph(lang, 2),
            "",
            "- " + self.sentence(lang),
            "- " + self.sentence(lang),
            "",
        ]
        return "\n".join(parts)

    # -- front matter -----------------------------------------------------------------------
    def front(self, d: Doc, fmt: str) -> str:
        meta: dict = {}
        if d.explicit_id:
            meta["id"] = d.id
        meta["title"] = d.title
        if d.type in ("note", "entry", "topic") and self.rng.random() < 0.05:
            meta["type"] = d.type
        meta.update(d.meta)
        if fmt == "json":
            return json.dumps(meta, ensure_ascii=False, indent=2) + "\n"
        if fmt == "toml":
            return "+++\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in meta.items()) + "+++\n"
        if self.rng.random() < 0.5:  # block style lists
            lines = []
            for k, v in meta.items():
                if isinstance(v, list) and v:
                    lines.append(f"{k}:\n" + "".join(f"  - {_yaml(x)}\n" for x in v))
                else:
                    lines.append(f"{k}: {_yaml(v)}\n")
            return "---\n" + "".join(lines) + "---\n"
        return "---\n" + "".join(f"{k}: {_yaml(v)}\n" for k, v in meta.items()) + "---\n"

    def render(self, d: Doc) -> bytes:
        r = self.rng.random()
        fmt = "toml" if r < 0.08 else "json" if r < 0.13 else "none" if r < 0.17 else "yaml"
        if fmt == "none" and (d.type != "note" or d.explicit_id):
            fmt = "yaml"  # only notes named by their file name can do without front matter
        if fmt == "none":
            d.explicit_id = False
            text = self.body(d)
        else:
            text = self.front(d, fmt) + "\n" + self.body(d)
        if self.rng.random() < 0.02:
            text = "\n\n" + text
        if self.rng.random() < 0.03:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        if self.rng.random() < 0.02:
            data = b"\xef\xbb\xbf" + data
        return data


def _set(meta: dict, key: str, value: object) -> None:
    if value is not None:
        meta[key] = value


def _yaml(v: object) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_yaml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_yaml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a YAML string
    return json.dumps(v)


def _toml(v: object) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return json.dumps(v)


def generate(out: str, n: int, seed: int = 1) -> dict:
    """Write the vault to ``out`` (emptied first) and return the ``.bench.json`` data."""
    t0 = time.perf_counter()
    gen = Gen(n, seed)
    gen.plan()
    if os.path.isdir(out):
        for name in os.listdir(out):
            full = os.path.join(out, name)
            shutil.rmtree(full) if os.path.isdir(full) and not os.path.islink(full) else os.remove(
                full
            )
    os.makedirs(out, exist_ok=True)
    made: set[str] = set()
    total = 0
    for d in gen.docs:
        folder = os.path.join(out, os.path.dirname(d.path))
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        data = gen.render(d)
        total += len(data)
        with open(os.path.join(out, d.path), "wb") as fh:
            fh.write(data)
    # excluded and hidden files that must not be read
    os.makedirs(os.path.join(out, "drafts"), exist_ok=True)
    os.makedirs(os.path.join(out, ".obsidian"), exist_ok=True)
    for where in ("drafts/wip.md", ".obsidian/hidden.md"):
        with open(os.path.join(out, where), "w", encoding="utf-8") as fh:
            fh.write("---\nid: should-not-be-read\n---\n[[nowhere]]\n")
    with open(os.path.join(out, "studykb.toml"), "w", encoding="utf-8") as fh:
        fh.write(f'# synthetic benchmark vault: {n} documents, seed {seed}\nexclude = ["drafts"]\n')
    deep = gen.topics[gen.deep]
    edit = next(d for d in gen.notes if d.explicit_id)
    info = {
        "docs": len(gen.docs),
        "seed": seed,
        "bytes": total,
        "deep_target": deep.id,
        "deep_target_path": deep.path,
        "deep_ancestors": gen.deep_ancestors,
        "mid_target": gen.topics[gen.mid].id,
        "mid_ancestors": gen.mid_ancestors,
        "backlinks_target": gen.topics[0].id,
        "edit_file": edit.path,
    }
    with open(os.path.join(out, ".bench.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=2)
    info["seconds"] = round(time.perf_counter() - t0, 2)
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", help="folder to write (its contents are replaced)")
    ap.add_argument("--docs", type=int, default=1000, help="number of documents (default 1000)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = ap.parse_args(argv)
    if args.docs < 20:
        ap.error("--docs must be at least 20")
    if (
        os.path.exists(args.out)
        and os.listdir(args.out)
        and not os.path.exists(os.path.join(args.out, ".bench.json"))
    ):
        ap.error(f"{args.out} is not empty and not a generated vault; refusing to overwrite it")
    info = generate(args.out, args.docs, args.seed)
    print(
        f"{info['docs']} documents, {info['bytes'] / 1e6:.1f} MB in {info['seconds']} s -> "
        f"{args.out}"
    )
    print(f"deep_target: {info['deep_target']} ({info['deep_ancestors']} ancestors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
