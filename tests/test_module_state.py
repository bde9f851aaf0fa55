"""No module of studykb outside ``runtime/`` holds mutable state of its own.

Every module-level name bound by an assignment must hold a value that cannot change: a
constant (``str``, numbers, ``tuple``, ``frozenset``, ``MappingProxyType`` over such
values, a compiled pattern), a function or class, or an object whose own attributes are
all of that kind (a frozen dataclass, a stateless spec). A cache of a function is the
process's, made by :func:`studykb.runtime.process.memo`; anything else that is truly per
process lives in :mod:`studykb.runtime.process` behind its names. No function rebinds a
module's name (``global``). What text analysis depends on is a value,
:class:`studykb.text.analysis.Analyser`; the last test shows two of them in one process.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import importlib
import logging
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "studykb"

#: Module-level names that may hold mutable state, each with its reason. Keep it short:
#: the way out is a frozen value, or :mod:`studykb.runtime.process`.
ALLOWED: dict[str, str] = {}

_IMMUTABLE = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    range,
    re.Pattern,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    enum.Enum,
    typing.TypeVar,
    typing.ParamSpec,
    Path,
    logging.Logger,  # the logging package's own registry, configured by the front end
)
_ALIASES = (types.GenericAlias, types.UnionType, type(typing.Any), type(typing.Union[int, str]))  # noqa: UP007


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if parts[:2] == ("studykb", "runtime"):
            continue
        out.append((".".join(parts), path))
    return out


def _assigned(tree: ast.Module) -> list[tuple[str, int]]:
    """Names bound by module-level assignments (under ``if``/``try`` at module level too)."""
    out: list[tuple[str, int]] = []

    def targets(node: ast.AST) -> list[ast.expr]:
        if isinstance(node, ast.Assign):
            return list(node.targets)
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and (
            not isinstance(node, ast.AnnAssign) or node.value is not None
        ):
            return [node.target]
        return []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.If, ast.Try)):
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                walk(node.body)
                walk(node.orelse)
                if isinstance(node, ast.Try):
                    for handler in node.handlers:
                        walk(handler.body)
                    walk(node.finalbody)
            for target in targets(node):
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out.append((name.id, node.lineno))

    walk(tree.body)
    return out


def _problem(value: Any, seen: set[int] | None = None) -> str | None:
    """Why ``value`` is mutable state (None when it is not)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, functools._lru_cache_wrapper):  # noqa: SLF001
        from studykb.runtime import process

        return None if process.is_memo(value) else "a cache not made by runtime.process.memo"
    if isinstance(value, (*_IMMUTABLE, *_ALIASES)):
        return None
    if isinstance(value, (tuple, frozenset)):
        return next((p for p in (_problem(v, seen) for v in value) if p), None)
    if isinstance(value, types.MappingProxyType):
        return next((p for p in (_problem(v, seen) for v in value.values()) if p), None)
    if isinstance(value, (dict, list, set, bytearray)) or hasattr(value, "__setitem__"):
        return f"a mutable {type(value).__name__}"
    if dataclasses.is_dataclass(value):
        if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            return f"a {type(value).__name__} that is not a frozen dataclass"
        for f in dataclasses.fields(value):
            problem = _problem(getattr(value, f.name), seen)
            if problem:
                return f"{type(value).__name__}.{f.name} is {problem}"
        return None
    own = dict(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        slots = getattr(klass, "__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                own[slot] = getattr(value, slot)
    for name, attr in own.items():
        problem = _problem(attr, seen)
        if problem:
            return f"{type(value).__name__}.{name} is {problem}"
    return None


def _findings() -> list[str]:
    found = []
    for name, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(SRC.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append(f"{where}:{node.lineno}: `global {', '.join(node.names)}`")
        if name.endswith("__main__"):  # runs the program when imported: nothing to bind
            continue
        module = importlib.import_module(name)
        names = _assigned(tree)
        for node in tree.body:  # decorated functions: their caches
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                fn = getattr(module, node.name, None)
                if isinstance(fn, functools._lru_cache_wrapper):  # noqa: SLF001
                    names.append((node.name, node.lineno))
        for var, line in names:
            if var == "__all__" or f"{name}.{var}" in ALLOWED or not hasattr(module, var):
                continue  # __all__: Python's list of a module's exports, read by tools
            problem = _problem(getattr(module, var))
            if problem:
                found.append(f"{where}:{line}: {var} is {problem}")
    return found


def test_no_module_outside_runtime_holds_mutable_state() -> None:
    found = _findings()
    assert not found, "module-level mutable state (freeze it, or see runtime/process.py):\n" + (
        "\n".join(found)
    )


def test_the_checker_sees_mutable_state() -> None:
    """The check fails on what it is meant to find (and passes frozen values)."""
    assert _problem({}) and _problem([]) and _problem(set()) and _problem(bytearray())
    assert _problem(functools.lru_cache(maxsize=2)(len))
    assert _problem((1, [2])) and _problem(types.MappingProxyType({"a": {}}))

    @dataclasses.dataclass
    class Open:
        x: int = 0

    @dataclasses.dataclass(frozen=True)
    class Shut:
        x: tuple[int, ...] = ()

    class Holder:
        def __init__(self) -> None:
            self.seen: dict[str, int] = {}

    assert _problem(Open()) and _problem(Holder()) and not _problem(Shut())
    assert not _problem(types.MappingProxyType({"a": (1, "b")})) and not _problem(frozenset("ab"))
    tree = ast.parse("X = {}\nif True:\n    Y: list[int] = []\nZ += 1\n")
    assert [n for n, _l in _assigned(tree)] == ["X", "Y", "Z"]


def test_two_analysers_with_different_protected_words_do_not_interfere() -> None:
    """Protected words are a value: two analysers in one process stem as each says,
    whichever ran last, and their remembered stems stay their own."""
    from studykb.text.analysis import Analyser
    from studykb.text.terms import TECH_TERMS

    plain = Analyser()
    vault = Analyser.of_names(["Quantization", "Transformer"])
    assert "quantization" in vault.protected and "quantization" not in plain.protected
    for _ in range(2):  # in either order, again: nothing left behind by the other
        assert plain.stem("quantization") == "quantiz"
        assert vault.stem("quantization") == "quantization"
        assert vault.analyze("Quantizations of models") == ["quantization", "model"]
        assert plain.analyze("Quantizations of models") == ["quantiz", "model"]
    assert plain.stem("transformers") == vault.stem("transformers") == "transformer"  # TECH
    assert plain.protected == TECH_TERMS and plain == Analyser() and vault != plain
    assert plain.digest != vault.digest


def test_a_schema_read_back_from_an_index_refuses_to_analyse_until_bound() -> None:
    """The whoosh schema carries its analyser in memory only: a pickled one reads back
    unbound (the index format does not change) and says so if used; :func:`bind` fixes it."""
    import pickle

    from studykb.search.schema import bind, make_schema
    from studykb.text.analysis import Analyser

    vault = Analyser.of_names(["Quantization"])
    schema = make_schema(vault)
    again = pickle.loads(pickle.dumps(schema, 2))
    with pytest.raises(RuntimeError, match="bound"):
        list(again["body"].analyzer("quantization"))
    bind(again, vault)
    assert [t.text for t in again["body"].analyzer("quantization")] == ["quantization"]
    bind(again, Analyser())
    assert [t.text for t in again["body"].analyzer("quantization")] == ["quantiz"]


def test_what_is_per_process_is_made_once_and_forgotten_as_a_new_process_would() -> None:
    from studykb.runtime import process

    made: list[int] = []
    calls: list[int] = []

    @process.memo(maxsize=None)
    def double(n: int) -> int:
        calls.append(n)
        return 2 * n

    def make() -> list[int]:
        made.append(1)
        return [len(made)]

    name = "tests.module-state"
    first = process.once(name, make)
    assert process.once(name, make) is first and made == [1]
    assert double(2) == double(2) == 4 and calls == [2] and process.is_memo(double)
    process.forget(name)
    assert process.once(name, make) is not first and made == [1, 1]
    process.forget()
    assert double(2) == 4 and calls == [2, 2]
    process.forget(name)
