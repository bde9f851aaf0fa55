"""The study tracker: course progress, what is being read, what was finished, curated lists.

"Reading now" holds every document or course unit whose status is ``reading``. "Finished
lately" orders what is ``done`` by the date ``mark`` recorded when it became done (front
matter ``done``), newest first; what was marked done by hand without a date comes after,
by its file's modification time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from studykb.model import Document
from studykb.study.plans import knowledge
from studykb.vault import Vault

if TYPE_CHECKING:
    from studykb.study.plans import Knowledge


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
    """Documents and course units being read, lower level first."""
    finished: tuple[Document, ...]
    """The latest documents and units done, newest first."""
    lists: tuple[ListProgress, ...]


def status(vault: Vault, recent: int = 5) -> Tracker:
    """Everything ``studykb status`` shows; loads only the documents it shows."""
    kb = knowledge(vault)
    info = kb.info
    docs = kb.docs
    courses = [k for k, row in info.items() if row.type == "course"]
    units = [k for k, row in info.items() if row.type == "unit"]
    reading = [k for k, row in info.items() if row.status == "reading"]
    lists = [k for k, row in info.items() if row.type == "list"]
    done = _finished(vault, kb, recent)
    docs.prefetch([*courses, *units, *reading, *lists, *done])  # type: ignore[attr-defined]
    reading_docs = tuple(
        sorted((docs[k] for k in reading), key=lambda d: (d.level or 9, d.title.casefold()))
    )
    return Tracker(
        _courses(kb, courses, units),
        reading_docs,
        tuple(docs[k] for k in done),
        _lists(vault, kb, lists),
    )


def _finished(vault: Vault, kb: Knowledge, recent: int) -> list[str]:
    """Keys of the latest ``recent`` documents done: by the date they became done, then
    (no date recorded) by their file's modification time."""
    mtimes = {path: mtime for path, mtime, _hash in vault.file_rows()}
    done = [k for k, row in kb.info.items() if row.status == "done"]
    done.sort(
        key=lambda k: (kb.info[k].done or "", mtimes.get(k.split("#", 1)[0], 0)), reverse=True
    )
    return done[:recent]


def _courses(kb: Knowledge, courses: list[str], units: list[str]) -> tuple[CourseProgress, ...]:
    by_course: dict[str, list[Document]] = {}
    for key in units:
        unit = kb.docs[key]
        by_course.setdefault(unit.parent or "", []).append(unit)
    progress = []
    for key in sorted(courses, key=lambda k: kb.info[k].title):
        mine = tuple(sorted(by_course.get(key, ()), key=lambda u: u.line))
        progress.append(
            CourseProgress(kb.docs[key], mine, tuple(u for u in mine if u.status == "reading"))
        )
    return tuple(progress)


def _lists(vault: Vault, kb: Knowledge, lists: list[str]) -> tuple[ListProgress, ...]:
    items: dict[str, list[str]] = {}
    for source, target, *_rest in vault.edges("item", order="source"):
        if target in kb.info:
            items.setdefault(source, []).append(target)
    return tuple(
        ListProgress(
            kb.docs[key],
            len(items.get(key, ())),
            sum(k in kb.known for k in items.get(key, ())),
            sum(kb.info[k].level == 1 for k in items.get(key, ())),
        )
        for key in sorted(lists, key=lambda k: kb.info[k].title)
    )
