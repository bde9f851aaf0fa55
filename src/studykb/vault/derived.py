"""One mechanism that keeps every derived structure fresh.

A *derived structure* is anything made from the vault's state and kept between commands
(the topic table, the reading-plan tables, the related documents' features, text vectors
and matrices, what the search index holds). Each one is a :class:`Derived`: it declares
what it is made from and how it is made, and this module does the rest, the same way for
all of them:

- **in memory**, per open vault (:class:`Structures`, owned by the vault; no
  module-level memo anywhere): a value is used while the state and its inputs are the
  ones it was made from;
- **on disk**, one entry of the vault's cache (:mod:`studykb.vault.cache`): the value's
  plain data (:meth:`Derived.dump`) with the state it was made at and its inputs'
  stamps; its key is a digest of the code that makes it (:func:`code_version`: its own
  declared modules and, recursively, its inputs'), so a change of the code of any
  structure it is made from invalidates it;
- **after an edit**, :meth:`Derived.update` gets a :class:`Change` (the files that came,
  went or changed since the value was made, and which inputs changed) and may decline;
  declining, or a change the state's journal cannot name, builds it again. An updated
  value is written back whole only once the files changed since it was last written
  pass :data:`REWRITE_AFTER`, or at once when an input's value changed (unless the
  structure says ``write_when_inputs_change = False``: its update costs no more than
  loading it; or names, as a frozenset, the inputs whose change it is written after);
  until then the next process loads the written value and updates it for the same files
  again, which is cheaper than rewriting megabytes after every save (a structure whose
  update writes files of its own, such as the search index, sets ``rewrite_after = 0``:
  its value is written after every update, as it must say what
  those files hold). That is the one journal: the state's own
  (``Store.changed_since``).
- **an updated value's stamp** is its :meth:`Derived.stamp`, a digest of its content,
  unless the structure has a ``stamp_after(value, before)``: the stamp of ``value``
  just updated, made from the stamp it had before and what the update changed (a
  digest of the whole of a large value after every edit costs more than the update;
  see :func:`studykb.related.vectorcache.stamp_after`). Such a stamp changes whenever
  the content does; the same content reached by other updates may be named otherwise,
  which only tells dependents of a change that was none.

Adding a structure is one module with a :class:`Derived` and one line in
:data:`studykb.structures.ALL` (see ``docs/design/architecture.md``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from studykb.runtime import process
from studykb.vault.cache import Cache, modules_version

if TYPE_CHECKING:
    from pathlib import Path

    from studykb.config import Config
    from studykb.model import Document
    from studykb.vault.state.rows import DocNames, Edge, EdgeRow, StoredFile, TopicRow
    from studykb.vault.topics import TopicTable

T = TypeVar("T")

#: An updated value is written back whole once this many files changed since it was.
REWRITE_AFTER = 64


@dataclass(frozen=True, slots=True)
class Change:
    """What changed since a value was made: what :meth:`Derived.update` is given."""

    paths: frozenset[str]
    """The files that came, went or changed (vault-relative paths)."""
    inputs: frozenset[str] = frozenset()
    """The names of the input structures whose value changed (their stamps differ)."""


class Snapshot(Protocol):
    """What a derived structure may read: the vault's state, read only (a
    :class:`studykb.vault.Vault` is one), and the other structures through
    :meth:`derived`."""

    @property
    def root(self) -> Path: ...
    @property
    def config(self) -> Config: ...

    def generation(self) -> tuple[str, int]: ...
    def fingerprint(self) -> str: ...
    def derived(self, spec: Derived[T]) -> T: ...
    def documents(self) -> dict[str, Document]: ...
    def documents_for(self, keys: Iterable[str]) -> dict[str, Document]: ...
    def document(self, key: str) -> Document | None: ...
    def documents_in(self, paths: Iterable[str]) -> dict[str, list[Document]]: ...
    def keys_in(self, paths: Iterable[str]) -> list[str]: ...
    def name_rows(self, paths: Iterable[str] | None = None) -> list[DocNames]: ...
    def edges(self, kind: str | None = None, order: str = "n") -> list[Edge]: ...
    def each_edge(self, kind: str | None = None, order: str = "n") -> Iterator[Edge]: ...
    def edges_in(self, paths: Iterable[str]) -> list[Edge]: ...
    def graph_edges(self) -> Iterable[EdgeRow]: ...
    def file_rows(self) -> list[StoredFile]: ...
    def file_hashes(self, paths: Iterable[str] | None = None) -> dict[str, str]: ...
    def wiki_labels(
        self, paths: Iterable[str] | None = None
    ) -> list[tuple[str, str, str, str]]: ...
    def texts(self, paths: Iterable[str] | None = None) -> dict[str, tuple[str, list[str]]]: ...
    def topic_rows(self) -> list[TopicRow]: ...
    def topics(self) -> TopicTable: ...
    def course_links(self, paths: Iterable[str] | None = None) -> dict[str, set[str]]: ...
    def course_sources(self) -> set[str]: ...
    def changed_since(self, generation: int, now: int) -> set[str] | None: ...


class Derived(Protocol[T]):
    """A structure made from the vault's state, kept fresh by :class:`Structures`.

    ``name`` names its cache entry; ``made_by`` lists the modules (or packages) whose
    code decides it (a test checks them against the imports); ``inputs`` are the
    structures it reads (through :meth:`Structures.get`), whose code and stamps it
    depends on too.
    """

    @property
    def name(self) -> str: ...
    @property
    def made_by(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[Derived[Any], ...]: ...

    def build(self, vault: Snapshot) -> T:
        """The value for the vault's state as it is (read only: never writes the state)."""
        ...

    def update(self, value: T, change: Change, vault: Snapshot) -> T | None:
        """``value`` brought up to date for ``change`` (may be ``value`` itself, changed
        in place), or None to decline (it is built again)."""
        ...

    def stamp(self, value: T) -> str | None:
        """A name of the value's content: dependents are told when it changes. None: the
        value is named by the state and the inputs it was made from (for a structure
        that is made again after every edit, where naming its content would cost a
        digest of all of it for nothing)."""
        ...

    def dump(self, value: T) -> Any:
        """The value as plain data (msgpack: loading it can never run code)."""
        ...

    def load(self, data: Any) -> T:
        """The value :meth:`dump` made; raises ``ValueError``, ``KeyError`` or
        ``TypeError`` when ``data`` is not one (it is then built again)."""
        ...


def _stamp(
    spec: Derived[Any],
    value: Any,
    made_at: tuple[str, int],
    inputs: dict[str, str],
    before: str | None = None,
) -> str:
    """The value's own stamp, or one naming the state and inputs it was made from;
    ``before``: the stamp of the value this one was updated from (see ``stamp_after``
    in the module's docstring)."""
    after = getattr(spec, "stamp_after", None)
    if before is not None and after is not None:
        return str(after(value, before))
    own = spec.stamp(value)
    if own is not None:
        return own
    named = repr((made_at, sorted(inputs.items())))
    return hashlib.blake2b(named.encode(), digest_size=16).hexdigest()


def code_version(spec: Derived[Any]) -> str:
    """A digest of the source of everything ``spec`` is made by, its inputs' included."""
    return _version(spec.name, tuple(spec.made_by), tuple(code_version(i) for i in spec.inputs))


@process.memo(maxsize=None)
def _version(name: str, modules: tuple[str, ...], inputs: tuple[str, ...]) -> str:
    digest = hashlib.blake2b(name.encode(), digest_size=12)
    digest.update(modules_version(modules).encode())
    for given in inputs:
        digest.update(given.encode())
    return digest.hexdigest()


def made_by(spec: Derived[Any]) -> tuple[str, ...]:
    """Every module whose code decides ``spec``: its own and its inputs', recursively."""
    out = dict.fromkeys(spec.made_by)
    for given in spec.inputs:
        out.update(dict.fromkeys(made_by(given)))
    return tuple(out)


@dataclass(slots=True)
class _Held:
    value: Any
    made_at: tuple[str, int]
    """The state's (name, write) the value is up to date with."""
    inputs: dict[str, str]
    """Each input's stamp when the value was made."""
    stamp: str
    written_at: tuple[str, int]
    """The state the written (cached) value was made at."""
    unwritten: frozenset[str] = field(default_factory=frozenset)
    """Files changed since the written value, not yet in it."""


class Structures:
    """The derived structures of one open vault, each made, loaded or updated on use."""

    def __init__(self, vault: Snapshot, cache: Cache) -> None:
        self._vault = vault
        self._cache = cache
        self._held: dict[str, _Held] = {}
        self._made: dict[str, tuple[object, Any]] = {}

    def made_of(self, name: str, key: object, make: Callable[[], T]) -> T:
        """A value made from structures of this vault and kept in memory only (never
        written), while ``key`` (what it is made of: their stamps) is the same."""
        held = self._made.get(name)
        if held is not None and held[0] == key:
            return held[1]  # type: ignore[no-any-return]
        value = make()
        self._made[name] = (key, value)
        return value

    def get(self, spec: Derived[T]) -> T:
        """The value of ``spec`` for the vault's state now."""
        now = self._vault.generation()
        inputs = {given.name: self.stamp(given) for given in spec.inputs}
        held = self._held.get(spec.name)
        if held is not None and held.made_at == now and held.inputs == inputs:
            return held.value  # type: ignore[no-any-return]
        if held is None:
            held = self._read(spec)
        if held is not None and (held.made_at != now or held.inputs != inputs):
            held = self._update(spec, held, now, inputs)
        if held is None:
            value = spec.build(self._vault)
            held = _Held(value, now, inputs, _stamp(spec, value, now, inputs), now)
            self._write(spec, held)
        self._held[spec.name] = held
        return held.value  # type: ignore[no-any-return]

    def stamp(self, spec: Derived[Any]) -> str:
        """The stamp of ``spec``'s value now (made or updated first when due)."""
        self.get(spec)
        return self._held[spec.name].stamp

    def preload(self, spec: Derived[Any], stamp: str | None = None) -> None:
        """Read ``spec``'s written value ahead of :meth:`get` (the cache only, never the
        state: a fresh command does it while its refresh runs beside it); with ``stamp``,
        only a value of that stamp. :meth:`get` takes it after updating it for what
        changed since."""
        if spec.name in self._held:
            return
        held = self._read(spec)
        if held is not None and (stamp is None or held.stamp == stamp):
            self._held[spec.name] = held

    def current(self, spec: Derived[T]) -> T | None:
        """The value of ``spec`` when the one in memory or written is up to date with the
        state and inputs now; None otherwise (nothing is made or updated: a command that
        only needs to know, such as ``build`` with nothing changed, loads none of the
        structure's code)."""
        now = self._vault.generation()
        held = self._held.get(spec.name) or self._read(spec)
        if held is None or held.made_at != now:
            return None
        if held.inputs != {given.name: self.stamp(given) for given in spec.inputs}:
            return None
        self._held[spec.name] = held
        return held.value  # type: ignore[no-any-return]

    def held(self, spec: Derived[T]) -> T | None:
        """The value of ``spec`` in memory, if any (nothing is made or read)."""
        held = self._held.get(spec.name)
        return None if held is None else held.value

    def kept(self, spec: Derived[Any]) -> bool:
        """Whether a value of ``spec`` is in memory or written (without reading it)."""
        return spec.name in self._held or self._cache.holds(spec.name)

    def forget(self, specs: Iterable[Derived[Any]] = ()) -> None:
        """Drop the values kept in memory (all without ``specs``); the cache keeps its."""
        names = [s.name for s in specs]
        for name in names or list(self._held):
            self._held.pop(name, None)
        self._made.clear()

    def _update(
        self, spec: Derived[T], held: _Held, now: tuple[str, int], inputs: dict[str, str]
    ) -> _Held | None:
        if held.made_at[0] != now[0] or held.made_at[1] > now[1]:
            return None  # another state file (made anew), or one rolled back
        paths = self._vault.changed_since(held.made_at[1], now[1])
        if paths is None:
            return None
        changed = frozenset(n for n, s in inputs.items() if held.inputs.get(n) != s)
        value = spec.update(held.value, Change(frozenset(paths), changed), self._vault)
        if value is None:
            return None
        unwritten = held.unwritten | paths
        stamp = _stamp(spec, value, now, inputs, held.stamp)
        out = _Held(value, now, inputs, stamp, held.written_at, unwritten)
        rewrite_after = getattr(spec, "rewrite_after", REWRITE_AFTER)
        when = getattr(spec, "write_when_inputs_change", True)
        rewrite = bool(changed & when if isinstance(when, frozenset) else changed and when)
        if rewrite or rewrite_after == 0 or len(unwritten) > rewrite_after:
            out.written_at, out.unwritten = now, frozenset()
            self._write(spec, out)
        return out

    def _read(self, spec: Derived[T]) -> _Held | None:
        data = self._cache.get(spec.name, code_version(spec), keep=False)
        if not isinstance(data, dict):
            return None
        try:
            made_at = (str(data["made_at"][0]), int(data["made_at"][1]))
            inputs = {str(k): str(v) for k, v in data["inputs"].items()}
            value = spec.load(data["value"])
            return _Held(value, made_at, inputs, str(data["stamp"]), made_at)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def _write(self, spec: Derived[Any], held: _Held) -> None:
        data = {
            "made_at": list(held.made_at),
            "inputs": held.inputs,
            "stamp": held.stamp,
            "value": spec.dump(held.value),
        }
        self._cache.put(spec.name, code_version(spec), data, keep=False)


__all__ = [
    "Change",
    "Derived",
    "Snapshot",
    "REWRITE_AFTER",
    "Structures",
    "code_version",
    "made_by",
]
