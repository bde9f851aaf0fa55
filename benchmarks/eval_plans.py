"""Evaluate the readings a plan shows for a topic against judged best readings.

    python benchmarks/eval_plans.py                 # the bundled vault (notes/, courses/)
    python benchmarks/eval_plans.py --misses        # also list every topic that misses
    python benchmarks/eval_plans.py --markdown --json figures.json

``benchmarks/eval/plans_judged.json`` holds, for each judged topic of the bundled vault,
the readings a practitioner would hand a learner first. The bundled vault is copied to a
temporary folder and built there; for each judged topic the plan for that topic is made
(``studykb before TOPIC``) and the first reading it shows for the topic itself is
compared with the judged ones. Reported: how often it is a judged best one (precision at
1; the goal is 0.9), and how often one of the first three shown is (what the terminal
shows); also as if nothing were done, so the figure does not lean on the bundled vault's
finished CS336 units.

``benchmarks/eval/answers_judged.json`` (issue 26) holds the answers an expert signs:
names typed the way people type them and the document each must find; questions in
English and Chinese with the command (and so the direction: before, after, next from what
I know) and the document each must answer; documents built on ideas and a step their
plan must hold; and readings a plan must show in its first three (a post is ranked,
never dropped) or never first (a unit that is only a title). Each group is reported as
the share answered right, and every miss is listed (``--misses``).

Two baselines, computed in the same run on the same knowledge, both in the former
level-first order (unread first, then level, entries before notes before units, curated
order, title): every document that covers *or is tagged with* the topic (how tags counted
before covers and tags were told apart: the baseline the ratio is against), and the
documents that cover it followed by those tagged with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Table, ratio, report  # noqa: E402

from studykb.study import plans  # noqa: E402
from studykb.vault import Vault  # noqa: E402
from studykb.vault.lookup import find  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
JUDGED = REPO / "benchmarks" / "eval" / "plans_judged.json"
ANSWERS = REPO / "benchmarks" / "eval" / "answers_judged.json"
GOAL = 0.9
SHOWN = 3


@dataclass(frozen=True)
class Judged:
    topic: str
    best: frozenset[str]
    why: str


@dataclass(frozen=True)
class Outcome:
    topic: str
    shown: tuple[str, ...]
    """Ids of the readings in the order shown."""
    best: frozenset[str]

    @property
    def first_is_best(self) -> bool:
        return bool(self.shown) and self.shown[0] in self.best

    @property
    def best_in_shown(self) -> bool:
        return any(r in self.best for r in self.shown[:SHOWN])


def copy_bundled(dest: Path) -> Path:
    """The repository's vault (notes/, courses/, studykb.toml) copied under ``dest``."""
    for name in ("notes", "courses"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(REPO / "studykb.toml", dest / "studykb.toml")
    return dest


def load_judged(path: Path = JUDGED) -> list[Judged]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [Judged(r["topic"], frozenset(r["best"]), r.get("why", "")) for r in rows]


def shown_by_plan(vault: Vault, kb: plans.Knowledge, topic: str) -> tuple[str, ...]:
    """Ids of the readings the plan for ``topic`` shows for the topic itself."""
    plan = plans.plan(vault, find(vault, topic), kb=kb)
    return tuple(r.doc.id for r in plan.target_readings)


def _level_first(kb: plans.Knowledge, keys: list[str]) -> list[str]:
    """``keys`` unread first, then by level, entries before notes before units, curated
    order, title: how plans sorted readings before they were ranked."""
    type_order = {"entry": 0, "note": 1, "unit": 2}

    def key(k: str) -> tuple[bool, bool, int, int, int, str]:
        row = kb.info[k]
        return (
            k in kb.known,
            row.level is None,
            row.level or 0,
            type_order.get(row.type, 9),
            kb.list_pos.get(k, 1 << 30),
            row.title,
        )

    return sorted((k for k in keys if kb.info[k].type in type_order), key=key)


def covers_then_tags(vault: Vault, kb: plans.Knowledge, topic: str) -> tuple[str, ...]:
    """Baseline: the documents that cover the topic, then those tagged with it, each
    level first (the order the ranking replaces)."""
    key = find(vault, topic).key
    keys = [*_level_first(kb, kb.covers.get(key, [])), *_level_first(kb, kb.tagged.get(key, []))]
    return tuple(kb.docs[k].id for k in keys)


def tags_as_covers(vault: Vault, kb: plans.Knowledge, topic: str) -> tuple[str, ...]:
    """Baseline: every document that covers or is tagged with the topic, level first (a
    tag counted as teaching before covers and tags were told apart)."""
    key = find(vault, topic).key
    keys = _level_first(kb, [*kb.covers.get(key, []), *kb.tagged.get(key, [])])
    return tuple(kb.docs[k].id for k in keys)


def evaluate(
    vault: Vault,
    judged: list[Judged],
    order: Callable[[Vault, plans.Knowledge, str], tuple[str, ...]],
    blind: bool = False,
) -> list[Outcome]:
    """Each judged topic with the readings ``order`` gives it; ``blind``: as if nothing
    were done (the learner's progress left out of the order)."""
    kb = plans.knowledge(vault)
    if blind:
        kb.known = set()
    return [Outcome(j.topic, order(vault, kb, j.topic), j.best) for j in judged]


def precision(outcomes: list[Outcome]) -> float:
    return sum(o.first_is_best for o in outcomes) / len(outcomes) if outcomes else 0.0


def in_shown(outcomes: list[Outcome]) -> float:
    return sum(o.best_in_shown for o in outcomes) / len(outcomes) if outcomes else 0.0


def judge_answers(root: Path, judged: dict) -> dict[str, list[str]]:
    """Every judged answer of ``answers_judged.json`` run against the vault at ``root``:
    group -> the cases answered wrong, in words (an empty list: all right)."""
    from studykb.errors import StudyError
    from studykb.session import Session

    misses: dict[str, list[str]] = {"names": [], "asks": [], "plans": [], "readings": []}
    with Session.open(root) as kb:

        def named(text: str) -> str | None:
            try:
                return kb.lookup(text).doc.id
            except StudyError:
                return None

        for case in judged["names"]:
            got = named(case["typed"])
            if got != case["id"]:
                misses["names"].append(f"{case['typed']!r}: {got} (judged {case['id']})")
        for case in judged["asks"]:
            try:
                asked = kb.ask(case["question"])
                got = (asked.command, named(asked.target) if asked.target else None)
            except StudyError as exc:
                got = ("refused", str(exc).splitlines()[0])
            want = (case["command"], case["target"])
            if got != want:
                misses["asks"].append(f"{case['question']!r}: {got} (judged {want})")
        kn = kb.knowledge()
        for case in judged["plans"]:
            try:
                plan = kb.plan(kb.lookup(case["of"]).doc, include_known=True, kb=kn)
            except StudyError as exc:
                misses["plans"].append(f"before {case['of']!r}: {str(exc).splitlines()[0]}")
                continue
            ids = {s.doc.id for s in plan.steps}
            if not set(case["needs"]) <= ids:
                shown = sorted(ids)[:6]
                misses["plans"].append(f"before {case['of']!r}: {shown} (judged {case['needs']})")
        for case in judged["readings"]:
            shown = [r.doc.id for r in kb.plan(kb.find(case["topic"]), kb=kn).target_readings]
            if any(r not in shown[:SHOWN] for r in case.get("shown", ())) or (
                shown and shown[0] in case.get("first_not", ())
            ):
                misses["readings"].append(f"{case['topic']}: shows {shown[:SHOWN]}")
    return misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--misses", action="store_true", help="list the topics that miss")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--json", dest="json_out", help="write the figures as JSON here")
    parser.add_argument("--answers", type=Path, default=ANSWERS)
    args = parser.parse_args()
    judged = load_judged(args.judged)
    answers = json.loads(args.answers.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="studykb-eval-plans-") as tmp:
        vault = Vault.open(copy_bundled(Path(tmp)))
        vault.refresh()
        ranked = evaluate(vault, judged, shown_by_plan)
        blind = evaluate(vault, judged, shown_by_plan, blind=True)
        baselines = {
            "level first, tags count as covers (baseline)": evaluate(vault, judged, tags_as_covers),
            "level first, covers then tags": evaluate(vault, judged, covers_then_tags),
        }
        vault.close()
        answered = judge_answers(Path(tmp), answers)
    base = precision(next(iter(baselines.values())))
    table = Table(
        "order",
        "topics",
        "first is a judged best",
        f"a judged best in first {SHOWN}",
        "vs baseline",
    )
    for name, outcomes in (
        *baselines.items(),
        ("ranked by how much it teaches", ranked),
        ("ranked, as if nothing were done", blind),
    ):
        table.add(
            name,
            len(outcomes),
            precision(outcomes),
            in_shown(outcomes),
            ratio(precision(outcomes), base),
        )
    p1 = precision(ranked)
    figures = {
        "topics": len(judged),
        "goal": GOAL,
        "precision_at_1": p1,
        "best_in_first_3": in_shown(ranked),
        "precision_at_1_blind": precision(blind),
        "baselines": {
            name: {"precision_at_1": precision(o), "best_in_first_3": in_shown(o)}
            for name, o in baselines.items()
        },
        "misses": [o.topic for o in ranked if not o.first_is_best],
        "answers": {
            group: {"cases": len(answers[group]), "right": len(answers[group]) - len(wrong)}
            for group, wrong in answered.items()
        },
    }
    report(table, figures, args.markdown, args.json_out)
    print(f"goal {GOAL}: {'met' if p1 >= GOAL else 'NOT met'}")
    for group, wrong in answered.items():
        total = len(answers[group])
        print(f"answers, {group}: {total - len(wrong)} of {total} right")
        for line in wrong if args.misses else ():
            print(f"  {line}")
    if args.misses:
        for mine in ranked:
            if not mine.first_is_best:
                print(
                    f"  {mine.topic}: shows {', '.join(mine.shown[:SHOWN]) or '(none)'}; "
                    f"judged {', '.join(sorted(mine.best))}"
                )


if __name__ == "__main__":
    main()
