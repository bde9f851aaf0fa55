"""The study tracker: course progress, what is being read, what was finished, curated lists."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Document
from .vault import Vault


@dataclass(frozen=True)
class CourseProgress:
    course: Document
    units: tuple[Document, ...]
    current: tuple[Document, ...]
    """Units with status ``reading``."""

    @property
    def done(self) -> int:
        return sum(u.status == "done" for u in self.units)

    @property
    def total(self) -> int:
        return len(self.units)


@dataclass(frozen=True)
class ListProgress:
    list: Document
    items: tuple[Document, ...]

    @property
    def read(self) -> int:
        return sum(d.status == "done" for d in self.items)

    @property
    def beginner(self) -> int:
        return sum(d.level == 1 for d in self.items)


@dataclass(frozen=True)
class Tracker:
    courses: tuple[CourseProgress, ...]
    reading: tuple[Document, ...]
    finished: tuple[Document, ...]
    lists: tuple[ListProgress, ...]


def status(vault: Vault, recent: int = 5) -> Tracker:
    docs = vault.documents()
    units: dict[str, list[Document]] = {}
    for doc in docs.values():
        if doc.parent:
            units.setdefault(doc.parent, []).append(doc)
    courses = []
    for doc in sorted((d for d in docs.values() if d.type == "course"),
                      key=lambda d: d.title.casefold()):
        mine = tuple(sorted(units.get(doc.key, ()), key=lambda u: u.line))
        courses.append(CourseProgress(doc, mine, tuple(u for u in mine if u.status == "reading")))
    reading = tuple(sorted((d for d in docs.values()
                            if d.status == "reading" and d.type != "unit"),
                           key=lambda d: (d.level or 9, d.title.casefold())))
    mtimes = dict(vault.store.db.execute("SELECT path, mtime_ns FROM files"))
    done = [d for d in docs.values() if d.status == "done"]
    done.sort(key=lambda d: (d.date or "", mtimes.get(d.path, 0)), reverse=True)
    items: dict[str, list[Document]] = {}
    for link in vault.links("WHERE kind='item' AND target_key IS NOT NULL ORDER BY line, n"):
        target = docs.get(link.target or "")
        if target is not None:
            items.setdefault(link.ref.source, []).append(target)
    lists = tuple(ListProgress(d, tuple(items.get(d.key, ())))
                  for d in sorted((d for d in docs.values() if d.type == "list"),
                                  key=lambda d: d.title.casefold()))
    return Tracker(tuple(courses), reading, tuple(done[:recent]), lists)
