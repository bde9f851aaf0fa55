"""What is truly one per process, kept in one place behind three names.

Everything else in studykb is a value passed to whoever needs it (a vault, a topic
table, an :class:`~studykb.text.analysis.Analyser`) or a constant (frozen: see
``tests/test_module_state.py``, which fails on module-level mutable state outside this
package). What is left is per process by nature: a library imported on first use
(rjieba's dictionary takes 0.1-0.2 s to load), what the system can do (a libc call,
a key drawn for this process), the searchers kept open on an index, and caches of pure
functions whose answers never change within a process.

* :func:`once` -- the process's one object of a name, made on first use;
* :func:`memo` -- a cache of a pure function, kept per process;
* :func:`forget` -- drop all of that, as a new process would start (tests only need it
  to measure a cold start: nothing here changes an answer).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

T = TypeVar("T")
P = ParamSpec("P")

_ONCE: dict[str, Any] = {}
"""name -> the process's object of that name (see :func:`once`)."""
_MEMOS: list[Any] = []
"""The caches made by :func:`memo` (cleared by :func:`forget`)."""


def once(name: str, make: Callable[[], T]) -> T:
    """The process's one object called ``name``, made by ``make()`` on first use."""
    got = _ONCE.get(name)
    if got is None:
        got = _ONCE[name] = make()
    return cast("T", got)


def memo(maxsize: int | None = 128) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """``functools.lru_cache(maxsize)``, the cache being the process's (see :func:`forget`).
    Only for a function whose answer depends on its arguments alone."""

    def wrap(fn: Callable[P, T]) -> Callable[P, T]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _MEMOS.append(cached)
        return cast("Callable[P, T]", cached)

    return wrap


def is_memo(fn: object) -> bool:
    """Whether ``fn`` is a cache made by :func:`memo`."""
    return any(fn is m for m in _MEMOS)


def forget(name: str | None = None) -> None:
    """Drop the object called ``name`` (every object and every :func:`memo` cache without
    a name), as a new process starts without them."""
    if name is not None:
        _ONCE.pop(name, None)
        return
    _ONCE.clear()
    for cached in _MEMOS:
        cached.cache_clear()
