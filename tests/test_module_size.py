"""No module over 500 lines (issue 25): a module that long holds more than one idea.

A module over the limit fails here; one that cannot be split yet would be listed, with
the size it may not grow past (none is).
"""

from __future__ import annotations

from pathlib import Path

import studykb

LIMIT = 500
#: Modules not yet split, and the most lines each may have until it is.
NOT_YET_SPLIT: dict[str, int] = {}


def sizes() -> dict[str, int]:
    root = Path(studykb.__file__).parent
    return {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(root.rglob("*.py"))
    }


def test_no_module_over_the_limit() -> None:
    over = {name: n for name, n in sizes().items() if n > NOT_YET_SPLIT.get(name, LIMIT)}
    assert not over, f"modules over {LIMIT} lines (or grown past their listed size): {over}"


def test_the_list_names_only_modules_still_over_it() -> None:
    found = sizes()
    done = sorted(name for name in NOT_YET_SPLIT if found.get(name, 0) <= LIMIT)
    assert not done, f"split now: take these off NOT_YET_SPLIT: {done}"
