"""The progress chart of ``status --history`` and the web view's progress page: the
timeline read from the vault's git history, in buckets of a day, a week or a month.

Pure: plain text and numbers out. The terminal chart is made of block characters only
(``█`` done, ``▒`` reading, ``░`` todo), so it reads the same without colour and piped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studykb.repos.history import Day, Event, History

BY = ("auto", "day", "week", "month")
STATES = ("done", "reading", "todo")
#: Buckets shown at most (the latest ones).
MOST = 40
WIDTH = 40
GLYPHS = MappingProxyType({"done": "█", "reading": "▒", "todo": "░"})


@dataclass(frozen=True)
class Bucket:
    """The counts at the end of one day, week or month."""

    label: str
    done: int
    reading: int
    todo: int

    @property
    def total(self) -> int:
        return self.done + self.reading + self.todo


def choose(days: Sequence[Day], by: str = "auto") -> str:
    """``by``, or for ``auto`` the bucket that fits the span: a day up to a month, a week
    up to 40 weeks, else a month."""
    if by != "auto":
        return by
    if not days:
        return "day"
    span = (date.fromisoformat(days[-1].date) - date.fromisoformat(days[0].date)).days
    return "day" if span <= 31 else "week" if span <= 7 * MOST else "month"


def _start(day: date, by: str) -> date:
    if by == "week":
        return day - timedelta(days=day.weekday())
    if by == "month":
        return day.replace(day=1)
    return day


def _next(day: date, by: str) -> date:
    if by == "week":
        return day + timedelta(days=7)
    if by == "month":
        return (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    return day + timedelta(days=1)


def _label(day: date, by: str) -> str:
    if by == "week":
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}"
    if by == "month":
        return day.strftime("%Y-%m")
    return day.isoformat()


def buckets(days: Sequence[Day], by: str = "auto", most: int = MOST) -> tuple[str, list[Bucket]]:
    """(the bucket chosen, the latest ``most`` buckets from the first day to the last),
    each with the counts of the last day at or before its end; none without days."""
    by = choose(days, by)
    if not days:
        return by, []
    out: list[Bucket] = []
    current = _start(date.fromisoformat(days[0].date), by)
    last = date.fromisoformat(days[-1].date)
    i, now = 0, days[0]
    while current <= last:
        end = _next(current, by)
        while i < len(days) and date.fromisoformat(days[i].date) < end:
            now = days[i]
            i += 1
        out.append(Bucket(_label(current, by), now.done, now.reading, now.todo))
        current = end
    return by, out[-most:]


def bar(bucket: Bucket, scale: int, width: int = WIDTH) -> str:
    """The bucket as a bar of ``width`` characters for ``scale`` items, done first."""
    if scale <= 0:
        return ""
    done = round(bucket.done * width / scale)
    reading = round((bucket.done + bucket.reading) * width / scale) - done
    todo = round(bucket.total * width / scale) - done - reading
    return GLYPHS["done"] * done + GLYPHS["reading"] * reading + GLYPHS["todo"] * todo


def chart_lines(history: History, by: str = "auto", width: int = WIDTH) -> list[str]:
    """The chart: one line a bucket, its bar and its counts (plain text, not escaped)."""
    _chosen, rows = buckets(history.days, by)
    scale = max((b.total for b in rows), default=0)
    label_width = max((len(b.label) for b in rows), default=0)
    return [
        f"{b.label:<{label_width}} {bar(b, scale, width):<{width}} "
        f"{b.done:>3} done {b.reading:>3} reading {b.todo:>3} todo"
        for b in rows
    ] + ([] if rows else [f"(no status changed in {_counted_commits(history.commits)})"])


def legend(history: History, by: str = "auto") -> str:
    chosen = choose(history.days, by)
    where = f" in {history.folder}/" if history.folder else ""
    scope = "all of its history" if history.complete else "the commits walked"
    return (
        f"by {chosen}, from {_counted_commits(history.commits)} of the vault's git history"
        f"{where} ({scope}); {GLYPHS['done']} done  {GLYPHS['reading']} reading  "
        f"{GLYPHS['todo']} todo"
    )


def _counted_commits(n: int) -> str:
    return f"{n} commit{'s' if n != 1 else ''}"


def change(event: Event) -> str:
    """``reading → done``; ``new`` before a document's first status, ``removed`` after
    its last."""
    return f"{event.before or 'new'} → {event.after or 'removed'}"


def event_json(event: Event) -> dict[str, Any]:
    return {
        "date": event.date,
        "commit": event.commit,
        "id": event.id,
        "path": event.path,
        "title": event.title,
        "from": event.before,
        "to": event.after,
    }


def history_json(history: History) -> dict[str, Any]:
    """``status --history --json``."""
    return {
        "history": [
            {"date": d.date, "done": d.done, "reading": d.reading, "todo": d.todo}
            for d in history.days
        ],
        "events": [event_json(e) for e in history.events],
        "repository": history.repository,
        "folder": history.folder,
        "commits": history.commits,
        "complete": history.complete,
    }
