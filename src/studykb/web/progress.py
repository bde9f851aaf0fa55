"""The progress page (``/progress/``): the timeline of ``status --history`` as an SVG chart
drawn here, on the server, as numbers the template writes into ``<rect>`` elements (no
script, nothing fetched); every text goes through the template's autoescape.

A vault in no git repository (or whose repository cannot be read) gets the page with a
note instead of a chart; the note names no folder, as the page may be published.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studykb.errors import StudyError
from studykb.outputs.progress import STATES, buckets, change, choose

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.web.links import Linker

WIDTH = 720
HEIGHT = 240
#: Room for the axis: left (counts), bottom (dates), top.
LEFT, BOTTOM, TOP = 36, 28, 8
#: Date labels under the chart at most.
LABELS = 8
#: Changes listed, the latest ones.
EVENTS = 50
MOST = 60
#: The widest column, in pixels (a short history has few).
COLUMN = 56
NO_HISTORY = (
    "No progress history: the vault is not in a git repository, or its repository cannot "
    "be read (studykb status --history says why)."
)


def progress_context(kb: Session, link: Linker) -> dict[str, Any]:
    """The context of ``progress.html``."""
    try:
        history = kb.repos().history()
    except StudyError:  # its message names folders of this machine: not for a published site
        return {"note": NO_HISTORY, "chart": None, "events": []}
    by = choose(history.days)
    _by, rows = buckets(history.days, by, MOST)
    events = []
    for event in reversed(history.events[-EVENTS:]):
        unit = event.id.split("#", 1)[1] if "#" in event.id else ""
        key = event.path + (f"#{unit}" if unit else "")
        events.append(
            {
                "date": event.date,
                "commit": event.commit,
                "title": event.title,
                "id": event.id,
                "change": change(event),
                "url": link.key(key) if kb.document(key) is not None else None,
            }
        )
    return {
        "note": "",
        "by": by,
        "commits": history.commits,
        "complete": history.complete,
        "folder": history.folder,
        "chart": chart(rows) if rows else None,
        "rows": [{"label": b.label, **{s: getattr(b, s) for s in STATES}} for b in rows],
        "events": events,
        "total_events": len(history.events),
    }


def chart(rows: list[Any]) -> dict[str, Any]:
    """The geometry of a stacked column chart of ``rows`` (buckets): done at the bottom,
    then reading, then todo; whole numbers of pixels."""
    scale = max((b.total for b in rows), default=0) or 1
    inner_w, inner_h = WIDTH - LEFT, HEIGHT - BOTTOM - TOP
    step = inner_w / len(rows)
    width = min(max(1.0, step * 0.8), COLUMN)
    every = max(1, -(-len(rows) // LABELS))
    bars = []
    for n, b in enumerate(rows):
        x = LEFT + n * step + (step - width) / 2
        bottom = float(TOP + inner_h)
        segments = []
        for state in STATES:
            count = getattr(b, state)
            h = inner_h * count / scale
            if count:
                segments.append(
                    {"state": state, "count": count, "y": round(bottom - h, 1), "h": round(h, 1)}
                )
            bottom -= h
        bars.append(
            {
                "x": round(x, 1),
                "w": round(width, 1),
                "mid": round(x + width / 2, 1),
                "label": b.label,
                "show_label": n % every == 0 or n == len(rows) - 1,
                "segments": segments,
                "done": b.done,
                "reading": b.reading,
                "todo": b.todo,
            }
        )
    ticks = sorted({0, scale // 2, scale})
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top": TOP,
        "base": TOP + inner_h,
        "bars": bars,
        "ticks": [{"value": t, "y": round(TOP + inner_h - inner_h * t / scale, 1)} for t in ticks],
    }
