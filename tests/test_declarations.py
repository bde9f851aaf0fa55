"""The derived structures' declarations hold: what a structure says it is made by covers
the code it runs, and every entry the cache holds is one something declares.

A structure's cache entry is keyed by the source of the modules of its ``made_by`` and,
recursively, its inputs' (:func:`studykb.vault.derived.code_version`). A module its code
imports but does not declare could change its value without invalidating the entry: a
stale cache (the bug issue 25 names: the topic rules missing from the plans'). So the
declarations are checked against the imports, read from the source (every import,
function-level ones included; ``TYPE_CHECKING`` blocks left out, as they run nothing).
"""

from __future__ import annotations

import ast
import importlib.util
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from studykb.structures import ALL, names
from studykb.vault.cache import MADE_BY
from studykb.vault.derived import Derived, made_by

#: Modules a structure's code may import without declaring them, each with its reason.
INFRASTRUCTURE = {
    "studykb.vault.derived": "the mechanism itself (Change, Snapshot): decides no value",
    "studykb.vault.cache": "where values are kept: decides no value",
    "studykb.vault": "the Snapshot's implementation; a structure reads the state only "
    "through the Snapshot, whose rows the state's own version covers",
    "studykb.errors": "exceptions",
    "studykb.runtime": "speed seams (process pools, GC pauses): same values, faster",
    "studykb.vault.damage": "recognises a damaged file (to start it afresh); decides no value",
    "studykb.vault.statedir": "where the state folder is; decides no value",
}


def made_with_the_state(module: str) -> bool:
    """Whether ``module`` is code the state is made by (``MADE_BY["state"]``): a change
    to it makes the state anew, under a new name, and every structure's value with it
    (a value is kept only for the state it was made at), so a structure may run it, or
    read the rows it stores, without declaring it."""
    return covered(module, MADE_BY["state"])


def infrastructure(module: str) -> bool:
    """Whether ``module`` is one of :data:`INFRASTRUCTURE` (runtime: any of its modules)."""
    return module in INFRASTRUCTURE or module.startswith("studykb.runtime.")


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, AttributeError):  # a name inside a module, not a module
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str) -> set[str]:
    """The studykb modules ``name`` imports when it runs (absolute names)."""
    path = _module_file(name)
    if path is None:
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if not base.startswith("studykb"):
                return
            modules = [f"{base}.{a.name}" for a in node.names]
            modules = [m for m in modules if _module_file(m) is not None]
            found.update(modules)  # `from studykb.related import stored`
            if len(modules) < len(node.names):
                found.add(base)  # names defined in ``base`` itself
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m == "studykb" or m.startswith("studykb.")}


def covered(module: str, declared: tuple[str, ...]) -> bool:
    """Whether ``module`` is one of ``declared`` or inside a declared package."""
    return any(module == d or module.startswith(d + ".") for d in declared)


def closure(spec: Derived[object]) -> set[str]:
    """The studykb modules the structure's code runs: its declared modules and what they
    import, transitively, stopping at the infrastructure and at its inputs' modules
    (checked on their own)."""
    inputs = tuple(m for given in spec.inputs for m in made_by(given))
    todo = [m for m in spec.made_by if _module_file(m) is not None]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for imported in imports_of(module):
            if infrastructure(imported) or covered(imported, inputs):
                continue
            if made_with_the_state(imported):
                continue
            if imported == "studykb":
                continue
            todo.append(imported)
    return seen


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.name)
def test_made_by_covers_the_code_a_structure_runs(spec: Derived[object]) -> None:
    module = type(spec).__module__
    assert covered(module, spec.made_by), f"{spec.name}: its own module {module} is undeclared"
    undeclared = sorted(m for m in closure(spec) if not covered(m, spec.made_by))
    assert not undeclared, (
        f"{spec.name} runs code it does not declare (add to made_by, or to its inputs): "
        f"{undeclared}"
    )


def test_the_check_finds_an_undeclared_import() -> None:
    """The checker itself: the plan tables import what a step needs (``study.needs``);
    without it declared, the check must say so."""
    from studykb.study.plans import TABLES

    class Partial:
        name = "partial"
        made_by = tuple(m for m in TABLES.made_by if m != "studykb.study.needs")
        inputs = TABLES.inputs

    found = closure(Partial())  # type: ignore[arg-type]
    assert "studykb.study.needs" in found
    assert not covered("studykb.study.needs", Partial.made_by)


def test_code_the_state_is_made_by_needs_no_declaring() -> None:
    """What the state's own version covers (its rows, the parser, the graph's loops) is
    left out of the check: a change there makes every structure anew with the state."""
    assert made_with_the_state("studykb.graph")
    assert made_with_the_state("studykb.vault.state.docs")
    assert not made_with_the_state("studykb.study.needs")


def test_inputs_are_structures_of_the_list_and_names_are_unique() -> None:
    listed = {id(s) for s in ALL}
    for spec in ALL:
        for given in spec.inputs:
            assert id(given) in listed, f"{spec.name} reads {given.name}, which ALL lacks"
    assert len(names()) == sum(1 + len(getattr(s, "entries", ())) for s in ALL)
    assert not names() & MADE_BY.keys(), "a structure's name is also a MADE_BY entry"


def test_every_cache_entry_is_declared(
    make_vault: Callable[..., Path], run: Callable[..., object]
) -> None:
    """After the commands that fill the cache, every entry is a MADE_BY name or a
    structure's (so the pruning of stale entries never drops a live one)."""
    root = make_vault(
        {
            "notes/a.md": "---\ncovers: [kv]\n---\n# Paged attention\n\nKV 缓存 in pages; [[b]].\n",
            "notes/b.md": "---\nrequires: [a]\n---\n# Continuous batching\n\nSee [[a]].\n",
            "topics/kv.md": "---\ntype: topic\n---\n# KV cache\n",
        }
    )
    for args in (("build",), ("related", "a"), ("before", "b"), ("search", "缓存"), ("topics",)):
        run(*args, vault=root)
    with sqlite3.connect(root / ".studykb" / "cache.sqlite") as db:
        held = {name for (name,) in db.execute("SELECT name FROM entries")}
    # what these commands made (plans: if asked; the index's changes: after an edit)
    assert names() <= held | {"plans", "search-held-changes"}
    assert held <= MADE_BY.keys() | names(), held - (MADE_BY.keys() | names())


def test_prune_drops_only_what_nothing_declares(make_vault: Callable[..., Path]) -> None:
    from studykb.vault.cache import Cache

    root = make_vault({"notes/a.md": "# A\n"})
    state = root / ".studykb-test-cache"
    state.mkdir()
    cache = Cache(state)
    cache.put("related-journal", "k", {"old": True})  # an older version's entry
    cache.put("search-names", "k", {"kept": True})
    cache.put("related-engine", "k", {"kept": True}, keep=False)
    cache.prune(names())
    assert cache.get("related-journal", "k") is None
    assert cache.get("search-names", "k") == {"kept": True}
    assert cache.get("related-engine", "k") == {"kept": True}
    cache.close()


#: Modules the state's code imports that decide none of the rows it stores, each with its
#: reason (everything else it runs must be in ``MADE_BY["state"]``: a change to it makes
#: the state anew).
STATE_NEEDS_NOT = {
    "studykb.config": "the settings are an input: what a scan lets in shows as files that "
    "came or went, and the reading rules are stored with the state (meta 'reading')",
    "studykb.vault.scope": "which files are read: a change shows at the next scan",
    "studykb.vault.damage": "recognises a damaged file; decides no row",
    "studykb.vault.statedir": "makes the .studykb folder",
    "studykb.vault.files": "reads a note's bytes (read_note)",
    "studykb.vault.reads": "reads a note's bytes",
}


def test_the_state_version_covers_the_code_that_writes_it() -> None:
    """``MADE_BY["state"]`` (the state's version: a change makes the state anew) covers
    the state package and every module the code that fills it runs."""

    class State:
        name = "state"
        made_by = MADE_BY["state"]
        inputs = ()

    assert covered("studykb.vault.state.refs", State.made_by)
    undeclared = sorted(
        m
        for m in closure(State())  # type: ignore[arg-type]
        if not covered(m, State.made_by) and m not in STATE_NEEDS_NOT
    )
    assert not undeclared, f"the state's code runs modules MADE_BY['state'] lacks: {undeclared}"
