"""What a related score is made of: the components, how much evidence a raw value is, how
they are blended (:class:`Weights`), and the engine's limits on text matches.

Plain constants (no numpy, no scipy): the engine (:mod:`studykb.related.engine`), the
rows of a few documents (:mod:`studykb.related.row_scores`), the scoring, the reasons and
the batch lists all read them from here; the engine's module table says what each
component is.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType

COMPONENTS = (
    "link_out",
    "link_in",
    "mentions",
    "mentioned_by",
    "refs",
    "cocite",
    "prereq",
    "topics",
    "tags",
    "course",
    "sibling",
    "text",
    "folder",
)
#: Raw value of each component that counts as half of full evidence (0: a yes/no
#: component, its evidence 1).
HALF = MappingProxyType(
    {
        "link_out": 0.5,
        "link_in": 0.5,
        "mentions": 0.25,
        "mentioned_by": 0.25,
        "refs": 0.25,
        "cocite": 0.25,
        "prereq": 0.25,
        "topics": 0.75,
        "tags": 0.75,
        "course": 0.0,
        "sibling": 0.0,
        "text": 0.15,
        "folder": 0.1,
    }
)
#: Components that are no evidence on their own (two pages of one folder may share
#: nothing else), only alongside another's...
ALONGSIDE = frozenset({"folder"})
#: ...and then at most this share of a pair's score.
ALONGSIDE_SHARE = 0.25
#: Text matches kept per document (the best ones; the rest never reach a list).
TEXT_POOL = 50
#: A term in more documents' vectors than this is skipped when looking for text matches.
MAX_POSTING = 400


@dataclass(frozen=True)
class Weights:
    """How much each component counts (see the table of :mod:`studykb.related.engine`)."""

    link_out: float = 0.5
    link_in: float = 1.4
    mentions: float = 2.28
    mentioned_by: float = 0.0
    refs: float = 0.7
    cocite: float = 2.0
    prereq: float = 0.5
    topics: float = 0.5
    tags: float = 0.0
    course: float = 1.0
    sibling: float = 1.0
    text: float = 4.0
    folder: float = 1.4

    def total(self) -> float:
        return sum(getattr(self, f.name) for f in fields(self)) or 1.0

    def by_name(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
