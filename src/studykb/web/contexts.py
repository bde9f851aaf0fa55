"""Records of the library turned into the templates' plain dicts (text, numbers and
hrefs; see the contract in ``docs/design/web-frontend.md``): a sidebar, the curated
lists, a search hit, a reading plan."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studykb.web.links import Linker

if TYPE_CHECKING:
    from studykb.related.sidebar import Neighbour, Sidebar
    from studykb.search.query import Hit
    from studykb.study.plans import Plan, Step


def sidebar_context(found: Sidebar, link: Linker) -> dict[str, Any]:
    def neighbour(n: Neighbour) -> dict[str, Any]:
        return {"title": n.title, "url": link.key(n.key), "type": n.type, "note": n.note}

    return {
        "related": [
            {"title": r.title, "url": link.key(r.key), "type": r.type, "reasons": list(r.reasons)}
            for r in found.related
        ],
        "before": [neighbour(n) for n in found.before],
        "leads_to": [neighbour(n) for n in found.leads_to],
        "more_before": found.more_before,
        "more_leads_to": found.more_leads_to,
    }


def lists_context(tracker: Any, link: Linker) -> list[dict[str, Any]]:
    return [
        {
            "key": lp.list.key,
            "title": lp.list.title,
            "url": link.doc(lp.list),
            "items": lp.items,
            "read": lp.read,
            "beginner": lp.beginner,
        }
        for lp in tracker.lists
    ]


def hit_context(hit: Hit, link: Linker) -> dict[str, Any]:
    return {
        "id": hit.id,
        "key": hit.key,
        "path": hit.path,
        "title": hit.title,
        "type": hit.type,
        "score": round(hit.score, 3),
        "snippet": hit.snippet,
        "highlights": [list(h) for h in hit.highlights],
        "url": link.key(hit.key),
    }


def plan_context(plan: Plan, link: Linker) -> dict[str, Any]:
    """The plan as ``before --json`` gives it, with links, the target's own readings
    (recommended first, as the command line shows them) and the sentences every front
    end words alike (:mod:`studykb.outputs.plan_format`), without the ``--all`` hint."""
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import (
        empty_sentence,
        plan_json,
        skipped_sentence,
        totals_sentence,
    )

    data = plan_json(plan)
    target = plan.target
    data["target"].update(key=target.key, url=link.doc(target))
    for step, shown in zip(plan.steps, data["steps"], strict=True):
        _link_step(step, shown, link)
    for reading, out in zip(plan.target_readings, data["target"]["recommended"], strict=True):
        out.update(key=reading.doc.key, url=link.doc(reading.doc))
    data["target"]["readings"] = data["target"]["recommended"]
    data["sentences"] = {
        "empty": "" if plan.steps else empty_sentence(plan, hint=False),
        "totals": totals_sentence(plan) if plan.steps or plan.target_readings else "",
        "skipped": skipped_sentence(plan, hint=False),
    }
    return data


def _link_step(step: Step, shown: dict[str, Any], link: Linker) -> None:
    shown.update(key=step.doc.key, url=link.doc(step.doc))
    for need, out in zip(step.needed_by, shown["needed_by"], strict=True):
        out["url"] = link.doc(need.by)
    # the page shows the recommendation, best first (the JSON's "readings" keeps the
    # vault format's list of every covering document)
    for reading, out in zip(step.readings, shown["recommended"], strict=True):
        out.update(key=reading.doc.key, url=link.doc(reading.doc))
    shown["readings"] = shown["recommended"]


def unlocks(step: Step) -> str:
    """What a step leads to, for the status page's ready list."""
    names = [n.by.title for n in step.needed_by[:3]]
    return f"unlocks {', '.join(names)}" if names else ""
