"""The study tracker: course progress, what is being read, what was finished, curated lists."""

from __future__ import annotations

from dataclasses import dataclass

from studykb.model import Document
from studykb.vault import Vault


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
    items: int
    read: int
    beginner: int


@dataclass(frozen=True)
class Tracker:
    courses: tuple[CourseProgress, ...]
    reading: tuple[Document, ...]
    finished: tuple[Document, ...]
    lists: tuple[ListProgress, ...]


def status(vault: Vault, recent: int = 5) -> Tracker:
    """Everything ``studykb status`` shows; loads only the documents it shows."""
    from studykb.study.plans import knowledge

    kb = knowledge(vault)
    info = kb.info
    docs = kb.docs
    courses = [k for k, row in info.items() if row[0] == "course"]
    units = [k for k, row in info.items() if row[0] == "unit"]
    reading = [k for k, row in info.items() if row[3] == "reading" and row[0] != "unit"]
    lists = [k for k, row in info.items() if row[0] == "list"]
    mtimes = {path: mtime for path, mtime, _hash in vault.file_rows()}
    done = sorted((k for k, row in info.items() if row[3] == "done"),
                  key=lambda k: (info[k][4] or "", mtimes.get(k.split("#", 1)[0], 0)),
                  reverse=True)[:recent]
    docs.prefetch([*courses, *units, *reading, *lists, *done])  # type: ignore[attr-defined]
    by_course: dict[str, list[Document]] = {}
    for key in units:
        unit = docs[key]
        by_course.setdefault(unit.parent or "", []).append(unit)
    progress = []
    for key in sorted(courses, key=lambda k: info[k][2]):
        mine = tuple(sorted(by_course.get(key, ()), key=lambda u: u.line))
        progress.append(CourseProgress(docs[key], mine,
                                       tuple(u for u in mine if u.status == "reading")))
    items: dict[str, list[str]] = {}
    for source, target, *_rest in vault.edges("item", order="source"):
        if target in info:
            items.setdefault(source, []).append(target)
    list_progress = tuple(
        ListProgress(docs[key], len(items.get(key, ())),
                     sum(k in kb.known for k in items.get(key, ())),
                     sum(info[k][1] == 1 for k in items.get(key, ())))
        for key in sorted(lists, key=lambda k: info[k][2]))
    reading_docs = tuple(sorted((docs[k] for k in reading),
                                key=lambda d: (d.level or 9, d.title.casefold())))
    return Tracker(tuple(progress), reading_docs, tuple(docs[k] for k in done), list_progress)
