"""Reading plans as JSON (the contract) and Markdown (for pasting into a note), and the
sentences every format shares (what a plan left out, why it is empty)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from studykb.model import Document
from studykb.outputs.sidebar import CONTROL, md_escape
from studykb.study.plans import Plan, Reading, Step


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``; ``plural`` for nouns that do not just take an s."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def facts(doc: Document, known: bool = False) -> list[str]:
    """What a plan says about a document: kind (or type), level, status, minutes.

    No status written means none shown (not "todo"); ``known`` marks a document known
    through what is done."""
    parts = ["course unit" if doc.type == "unit" else doc.kind or doc.type]
    if doc.level:
        parts.append(f"level {doc.level}")
    if doc.status:
        parts.append(doc.status)
    elif known:
        parts.append("known")
    if doc.minutes:
        parts.append(f"{doc.minutes} min")
    return parts


def empty_sentence(plan: Plan, hint: bool = True) -> str:
    """Why a plan has no steps: the target needs nothing, or all it needs is left out
    (known, or needed only through what is known: each counted in its own words).
    ``hint``: say how to see them (``--all``; the web view links instead)."""
    title = plan.target.title
    if plan.needs_nothing:
        return f"Nothing to read first: {title} has no prerequisites."
    shows = f" ({_shows(plan.skipped)})" if hint else ""
    if not plan.skipped_through:
        if plan.skipped == 1:
            return f"Nothing to read first: the 1 step it needs is already known{shows}."
        return f"Nothing to read first: the {plan.skipped} steps it needs are already known{shows}."
    return f"Nothing to read first: {_left_out(plan)} {_were(plan.skipped)} skipped{shows}."


def skipped_sentence(plan: Plan, hint: bool = True) -> str:
    """What a plan with steps left out, or "" when nothing was; ``hint`` as in
    :func:`empty_sentence`."""
    if not plan.skipped or not plan.steps:
        return ""
    shows = f" ({_shows(plan.skipped)})" if hint else ""
    return f"{_left_out(plan)} {_were(plan.skipped)} skipped{shows}."


def _left_out(plan: Plan) -> str:
    """``3 steps you already know and 1 step only they need``: the two counts in words."""
    parts = []
    if plan.skipped_known:
        parts.append(f"{counted(plan.skipped_known, 'step')} you already know")
    if plan.skipped_through:
        parts.append(f"{counted(plan.skipped_through, 'step')} only they need")
    text = " and ".join(parts)
    return text[0].upper() + text[1:]


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


def _shows(n: int) -> str:
    return "--all shows it" if n == 1 else "--all shows them"


def totals_sentence(plan: Plan) -> str:
    minutes = plan.minutes
    about = (
        f", about {minutes} min"
        if minutes and minutes < 90
        else (f", about {minutes / 60:.1f} h" if minutes else "")
    )
    counts = [counted(len(plan.steps), "step")] if plan.steps else []
    counts.append(counted(len(plan.readings), "reading"))
    return f"{', '.join(counts)}{about}."


def _reading(reading: Reading) -> dict[str, Any]:
    doc = reading.doc
    return {
        "id": doc.id,
        "path": doc.path,
        "title": doc.title,
        "type": doc.type,
        "kind": doc.kind,
        "level": doc.level,
        "url": doc.url,
        "status": doc.status,
        "known": reading.known,
        "teaches": reading.teaches,
        "minutes": doc.minutes,
    }


def step_json(step: Step, n: int, ids: dict[str, str] | None = None) -> dict[str, Any]:
    doc = step.doc
    ids = ids or {}
    return {
        "n": n,
        "id": doc.id,
        "path": doc.path,
        "title": doc.title,
        "type": doc.type,
        "level": doc.level,
        "status": doc.status,
        "known": step.known,
        "depth": step.depth,
        "needed_by": [
            {"id": need.by.id, "title": need.by.title, "reason": need.reason}
            for need in step.needed_by
        ],
        "readings": [_reading(r) for r in step.covering],
        "recommended": [_reading(r) for r in step.readings],
        "loop": [ids.get(k, k) for k in step.loop],
    }


def plan_json(plan: Plan) -> dict[str, Any]:
    target = plan.target
    ids = {s.doc.key: s.doc.id for s in plan.steps}
    return {
        "target": {
            "id": target.id,
            "path": target.path,
            "title": target.title,
            "type": target.type,
            "level": target.level,
            "status": target.status,
            "readings": [_reading(r) for r in plan.target_covering],
            "recommended": [_reading(r) for r in plan.target_readings],
        },
        "steps": [step_json(s, n, ids) for n, s in enumerate(plan.steps, 1)],
        "all": plan.include_known,
        "depth": plan.depth,
        "loops": [[ids.get(k, k) for k in loop] for loop in plan.loops],
        "skipped": {"known": plan.skipped_known, "through_known": plan.skipped_through},
        "totals": {
            "steps": len(plan.steps),
            "readings": len(plan.readings),
            "minutes": plan.minutes,
        },
    }


#: What a wikilink's label may not hold as written: its own syntax, HTML, and the
#: template syntax of Hugo (``{{< >}}``) and Jekyll/Liquid (``{% %}``), written as
#: character references, which Obsidian and the site generators show as the character.
_LABEL_REFS = MappingProxyType(
    {
        "[": "&#91;",
        "]": "&#93;",
        "|": "&#124;",
        "<": "&lt;",
        ">": "&gt;",
        "{": "&#123;",
        "}": "&#125;",
        "%": "&#37;",
        '"': "&quot;",
        "&": "&amp;",
        "#": "&#35;",
        "\\": "&#92;",
    }
)
_LABEL = re.compile("[" + re.escape("".join(_LABEL_REFS)) + "]")
_SAFE_TARGET = re.compile(r"^[^\[\]|#<>{}%\"&\\\s]+$")


def _wl(doc: Document) -> str:
    """A wikilink to ``doc`` with its title as label, escaped as the sidebar escapes text."""
    target = doc.id if _SAFE_TARGET.match(doc.id) else doc.path
    label = _LABEL.sub(
        lambda m: _LABEL_REFS[m.group()], CONTROL.sub("\ufffd", " ".join(doc.title.split()))
    )
    return f"[[{target}|{label}]]" if label != target else f"[[{target}]]"


def _md_readings(readings: tuple[Reading, ...]) -> list[str]:
    return [
        f"    - [{'x' if r.known else ' '}] {_wl(r.doc)} ({md_escape(', '.join(facts(r.doc)))})"
        for r in readings
    ]


def plan_markdown(plan: Plan) -> str:
    lines = [f"## Reading plan: {md_escape(plan.target.title)}", ""]
    if not plan.steps:
        lines.append(md_escape(empty_sentence(plan)))
    loop_open: tuple[str, ...] = ()
    for n, step in enumerate(plan.steps, 1):
        if step.loop and step.loop != loop_open:
            lines.append(f"<!-- prerequisite loop: {len(step.loop)} steps read together -->")
            loop_open = step.loop
        doc = step.doc
        box = "x" if step.known else " "
        needed = ", ".join(_wl(need.by) for need in step.needed_by)
        lines.append(
            f"{n}. [{box}] {_wl(doc)} ({md_escape(', '.join(facts(doc, step.known)))})"
            + (f"; for {needed}" if needed else "")
        )
        lines += _md_readings(step.readings)
    if plan.target_readings:
        lines += ["", f"Then {_wl(plan.target)} itself:"] + _md_readings(plan.target_readings)
    if plan.steps or plan.target_readings:
        lines += [
            "",
            md_escape(" ".join(filter(None, (totals_sentence(plan), skipped_sentence(plan))))),
        ]
    return "\n".join(lines) + "\n"
