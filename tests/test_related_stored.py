"""The engine's matrices kept in the cache: a second process loads them (the build
function runs zero times), an edit never serves a stale list, ``build`` makes them, and
what is stored is plain data that cannot run code.

The engine ranks sidebars (one document's here: ``sidebar ID``); ``related ID`` ranks one
document from the rows of the engine's inputs and never makes it
(:mod:`studykb.related.row_scores`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from studykb.related import engine as engine_mod
from studykb.related import stored
from studykb.related.features import FEATURES
from studykb.related.vectorcache import VECTORS
from studykb.vault.derived import code_version


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times the engine's matrices were made (one entry per build)."""
    yield _counted(monkeypatch, "_build")


def _counted(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Each call of ``Engine.<method>`` recorded (the engine's size), the method still run."""
    made: list[int] = []
    real = getattr(engine_mod.Engine, method)

    def counted(self: engine_mod.Engine) -> None:
        made.append(self.n)
        real(self)

    monkeypatch.setattr(engine_mod.Engine, method, counted)
    return made


FILES = {
    "notes/a.md": "# Paged attention\n\nKV cache blocks in pages; [[b]] batches them.\n",
    "notes/b.md": "# Continuous batching\n\nRequests join a running batch; see [[a]].\n",
    "notes/c.md": "# Speculative decoding\n\nA draft model proposes tokens, verified.\n",
    "notes/d.md": "# Quantization\n\nInt8 and fp8 weights for serving.\n",
}


def related_ids(run: Callable, root: Path, query: str) -> list[str]:
    """The related list of ``query``'s sidebar (ranked over the engine)."""
    result = run("sidebar", query, "--format", "json", vault=root)
    assert result.exit_code == 0, result.output
    return [r["id"] for r in json.loads(result.stdout)["related"]]


def one_ids(run: Callable, root: Path, query: str) -> list[str]:
    """``related query``'s list (ranked from the rows of the engine's inputs)."""
    result = run("related", query, "--json", vault=root)
    assert result.exit_code in (0, 1), result.output  # 1: nothing related
    return [r["id"] for r in json.loads(result.stdout)["related"]]


def test_a_second_process_loads_the_matrices_instead_of_making_them(
    make_vault: Callable, run: Callable, builds: list[int]
) -> None:
    root = make_vault(FILES)
    first = run("sidebar", "a", "--format", "json", vault=root).stdout
    assert len(builds) == 1
    second = run("sidebar", "a", "--format", "json", vault=root).stdout
    assert len(builds) == 1  # loaded: made zero times in the second process
    assert second == first


def test_an_edit_gives_the_new_list_not_the_kept_one(
    make_vault: Callable, run: Callable, builds: list[int]
) -> None:
    root = make_vault(FILES)
    assert related_ids(run, root, "c") == []
    (root / "notes/c.md").write_text(
        "# Speculative decoding\n\nA draft model proposes tokens; see [[d]] for fp8 weights.\n",
        encoding="utf-8",
    )
    after = related_ids(run, root, "c")
    assert after[0] == "d"  # the new link, not the list kept before the edit
    assert len(builds) == 2  # other inputs: made again
    assert related_ids(run, root, "c") == after
    assert len(builds) == 2  # and kept for the next process
    assert one_ids(run, root, "c") == after  # related ranks the same, without the engine
    assert len(builds) == 2


def test_build_makes_what_related_needs(
    make_vault: Callable, run: Callable, builds: list[int]
) -> None:
    root = make_vault(FILES)
    assert run("build", "--json", vault=root).exit_code == 0
    assert len(builds) == 1
    assert related_ids(run, root, "a")[0] == "b"
    assert len(builds) == 1  # the first sidebar after the build loads
    assert run("build", "--json", vault=root).exit_code == 0  # nothing changed
    (root / "notes/d.md").write_text("# Quantization\n\nInt4 weights.\n", encoding="utf-8")
    assert run("build", "--json", vault=root).exit_code == 0  # one edit: left to related
    assert len(builds) == 1
    assert one_ids(run, root, "a")[0] == "b"
    assert len(builds) == 1  # related never makes the engine


def test_a_stored_entry_that_is_not_plain_numbers_is_never_used(
    make_vault: Callable, open_vault: Callable, run: Callable, builds: list[int]
) -> None:
    root = make_vault(FILES)
    good = related_ids(run, root, "a")
    vault = open_vault(root)
    spec = engine_mod.ENGINE
    entry = code_version(spec)
    data = vault.cache.get(spec.name, entry, keep=False)
    assert isinstance(data, dict)
    data["value"]["matrices"]["L"]["data"]["dtype"] = "|O"  # an object array: refused
    vault.cache.put(spec.name, entry, data, keep=False)
    vault.close()
    assert related_ids(run, root, "a") == good
    assert len(builds) == 2  # not loaded: made again


def test_arrays_are_stored_as_bytes_dtype_and_shape() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    data = stored.pack_array(a)
    assert data == {"dtype": "<f8", "shape": [2, 3], "bytes": a.tobytes()}
    assert np.array_equal(stored.unpack_array(data), a)
    with pytest.raises(TypeError):
        stored.pack_array(np.array([object()]))
    with pytest.raises(ValueError):
        stored.unpack_array({**data, "shape": [4, 3]})
    with pytest.raises(ValueError):
        stored.unpack_array({**data, "dtype": "|O"})


def test_a_link_edit_writes_the_engine_so_a_text_edit_after_it_keeps_the_graph(
    make_vault: Callable, open_vault: Callable, run: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine is written back when the graph features changed: the next process,
    after an edit of the text only, keeps the graph's matrices as written (made zero
    times), the same matrices as an engine made whole from the same inputs."""
    made = _counted(monkeypatch, "_graph")
    # enough other notes that one edited file is read incrementally (the drift bound)
    files = {**FILES, **{f"more/n{i}.md": f"# Note {i}\n\nWords {i} here.\n" for i in range(150)}}
    root = make_vault(files)
    related_ids(run, root, "c")
    (root / "notes/c.md").write_text(
        "# Speculative decoding\n\nA draft model proposes tokens; see [[d]] for fp8 weights.\n",
        encoding="utf-8",
    )
    made.clear()
    assert related_ids(run, root, "c")[0] == "d"
    assert len(made) == 1  # the graph's matrices made again, once
    (root / "notes/d.md").write_text(
        "# Quantization\n\nInt8 and fp8 weights for serving; draft tokens too.\n",
        encoding="utf-8",
    )
    made.clear()
    after = run("sidebar", "c", "--format", "json", vault=root).stdout
    assert made == []  # kept as written after the link edit
    assert json.loads(after)["related"][0]["id"] == "d"
    vault = open_vault(root)  # the engine as kept and updated, against one made whole
    kept = engine_mod.for_vault(vault)
    whole = engine_mod.Engine(vault.derived(FEATURES), vault.derived(VECTORS).tv)
    for name in engine_mod.MATRICES:
        a, b = getattr(kept, name), getattr(whole, name)
        assert a.shape == b.shape and (a != b).nnz == 0, name
    for name in engine_mod.ARRAYS:
        assert np.array_equal(getattr(kept, name), getattr(whole, name)), name
