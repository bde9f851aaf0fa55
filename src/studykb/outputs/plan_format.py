"""Reading plans as JSON (the contract) and Markdown (for pasting into a note)."""

from __future__ import annotations

import re
from typing import Any

from studykb.model import Document
from studykb.outputs.sidebar import CONTROL, md_escape
from studykb.study.plans import Plan, Step


def _reading(doc: Document, known: bool) -> dict[str, Any]:
    return {"id": doc.id, "path": doc.path, "title": doc.title, "type": doc.type,
            "level": doc.level, "url": doc.url, "status": doc.status, "known": known,
            "minutes": doc.minutes}


def step_json(step: Step, n: int, ids: dict[str, str] | None = None) -> dict[str, Any]:
    doc = step.doc
    ids = ids or {}
    return {"n": n, "id": doc.id, "path": doc.path, "title": doc.title, "type": doc.type,
            "level": doc.level, "status": doc.status, "known": step.known,
            "depth": step.depth,
            "needed_by": [{"id": need.by.id, "title": need.by.title, "reason": need.reason}
                          for need in step.needed_by],
            "readings": [_reading(r.doc, r.known) for r in step.readings],
            "loop": [ids.get(k, k) for k in step.loop]}


def plan_json(plan: Plan) -> dict[str, Any]:
    target = plan.target
    ids = {s.doc.key: s.doc.id for s in plan.steps}
    return {"target": {"id": target.id, "path": target.path, "title": target.title,
                       "type": target.type, "level": target.level, "status": target.status},
            "steps": [step_json(s, n, ids) for n, s in enumerate(plan.steps, 1)],
            "all": plan.include_known, "depth": plan.depth,
            "loops": [[ids.get(k, k) for k in loop] for loop in plan.loops],
            "totals": {"steps": len(plan.steps), "readings": len(plan.readings),
                       "minutes": plan.minutes}}


def _md(text: str) -> str:
    return md_escape(text)


#: What a wikilink's label may not hold as written: its own syntax, HTML, and the
#: template syntax of Hugo (``{{< >}}``) and Jekyll/Liquid (``{% %}``), written as
#: character references, which Obsidian and the site generators show as the character.
_LABEL_REFS = {"[": "&#91;", "]": "&#93;", "|": "&#124;", "<": "&lt;", ">": "&gt;",
               "{": "&#123;", "}": "&#125;", "%": "&#37;", '"': "&quot;", "&": "&amp;",
               "#": "&#35;", "\\": "&#92;"}
_LABEL = re.compile("[" + re.escape("".join(_LABEL_REFS)) + "]")
_SAFE_TARGET = re.compile(r"^[^\[\]|#<>{}%\"&\\\s]+$")


def _wl(doc: Document) -> str:
    """A wikilink to ``doc`` with its title as label, escaped as the sidebar escapes text."""
    target = doc.id if _SAFE_TARGET.match(doc.id) else doc.path
    label = _LABEL.sub(lambda m: _LABEL_REFS[m.group()],
                       CONTROL.sub("\ufffd", " ".join(doc.title.split())))
    return f"[[{target}|{label}]]" if label != target else f"[[{target}]]"


def plan_markdown(plan: Plan) -> str:
    lines = [f"## Reading plan: {_md(plan.target.title)}", ""]
    if not plan.steps:
        lines.append("Nothing to read first: everything it needs is already known.")
        return "\n".join(lines) + "\n"
    loop_open: tuple[str, ...] = ()
    for n, step in enumerate(plan.steps, 1):
        if step.loop and step.loop != loop_open:
            lines.append(f"<!-- prerequisite loop: {len(step.loop)} steps read together -->")
            loop_open = step.loop
        doc = step.doc
        box = "x" if step.known else " "
        facts = ", ".join(x for x in (doc.type, f"level {doc.level}" if doc.level else "") if x)
        needed = ", ".join(_wl(need.by) for need in step.needed_by)
        lines.append(f"{n}. [{box}] {_wl(doc)} ({facts})" + (f"; for {needed}" if needed else ""))
        for reading in step.readings:
            mark = "x" if reading.known else " "
            lines.append(f"    - [{mark}] {_wl(reading.doc)}")
    lines += ["", f"{len(plan.steps)} steps, {len(plan.readings)} readings"
              + (f", about {plan.minutes} minutes" if plan.minutes else "") + "."]
    return "\n".join(lines) + "\n"
