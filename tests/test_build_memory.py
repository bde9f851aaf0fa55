"""What a full build holds while it makes the related structures (issue 24, peak memory):
the first build's documents and edges let go and read back the same from the state; the
graph features made from the edges as they are read, their strings shared, the same as
from a list of them; the text vectors made with no documents held; a large cache entry
packed and written a stretch at a time, the same bytes; the name table's automaton let
go with the same mentions found; a full build's feature index holding its rows packed
only; the graph edges a first build keeps, as columns, read back as added; the
resolver's name table the same with a set of names for each row only."""

from __future__ import annotations

import json
from collections.abc import Callable

import msgpack
import numpy as np

from studykb.related import stored

PAGES = {
    "topics/graphs.md": "---\ntype: topic\n---\n# Graphs\n",
    "a.md": (
        "---\ntags: [graphs, misc]\n---\n# Alpha\n\nSee [[b]] and [Gamma](c.md), [[b|the beta]].\n"
    ),
    "b.md": "---\nrequires: [a]\nrelated: [c]\n---\n# Beta\n\nAfter [[a]]; Gamma is near.\n",
    "c.md": "# Gamma\n\nBack to [[a|the alpha]] and [[b|the beta]].\n\n## Part\n\nAlpha again.\n",
    "d.md": '# Delta\n\n[[a|the alpha]], [Gamma](./c.md "t") and [[missing]].\n',
}


def test_a_released_vault_reads_back_the_documents_and_edges_its_first_build_kept(
    make_vault: Callable, open_vault: Callable
) -> None:
    vault = open_vault(make_vault(PAGES))
    assert vault._edges is not None and vault._blobs is not None  # noqa: SLF001 - kept
    kept_edges = [tuple(e) for e in vault.graph_edges()]
    kept_docs = dict(vault.documents())
    assert kept_edges and len(kept_docs) >= 5
    vault.release()
    assert [tuple(e) for e in vault.graph_edges()] == kept_edges
    assert vault.documents() == kept_docs


def test_the_features_from_the_edges_as_read_are_those_of_a_list_of_them(
    make_vault: Callable, open_vault: Callable
) -> None:
    from studykb.related import features
    from studykb.vault.topics import TOPICS

    vault = open_vault(make_vault(PAGES))
    listed = [(e.source, e.kind, e.target, e.reason) for e in vault.edges(order="line")]
    rows = list(features.shared_refs(vault.each_edge(order="line")))
    assert rows == listed
    targets = {}
    for row in rows:  # each distinct string is one object
        assert targets.setdefault(row[2], row[2]) is row[2]
    docs, topics = vault.documents(), vault.derived(TOPICS)
    files = {path: digest for path, _mtime, digest in vault.file_rows()}
    from_list = features.build(docs, listed, "f", topics, files).to_data()
    assert features.from_vault(vault, "f").to_data() == from_list


def test_the_build_makes_the_vectors_and_engine_holding_no_documents(
    make_vault: Callable, open_vault: Callable, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from studykb.related import engine
    from studykb.related.vectorcache import VECTORS

    root = make_vault(PAGES)
    vault = open_vault(root)
    held: list[bool] = []
    real = type(VECTORS).build

    def spied(self, snapshot):  # type: ignore[no-untyped-def]
        held.append(snapshot._docs is not None or snapshot._edges is not None)  # noqa: SLF001
        return real(self, snapshot)

    monkeypatch.setattr(type(VECTORS), "build", spied)
    lean = engine.made_lean(vault)
    assert held == [False]
    fresh = open_vault(root)
    fresh.cache.forget()
    monkeypatch.setattr(type(VECTORS), "build", real)
    made = engine.for_vault(fresh)
    lean_m, lean_a = lean.stored()
    made_m, made_a = made.stored()
    assert lean_m.keys() == made_m.keys()
    for name, m in lean_m.items():
        assert (m != made_m[name]).nnz == 0, name
    assert all(np.array_equal(lean_a[n], made_a[n]) for n in lean_a if n != "tv_made")


def _value() -> dict:
    big = np.arange(30_000, dtype=np.float64)
    return {
        "matrices": {"L": stored.pack_array(big), "small": stored.pack_array(big[:3])},
        "rows": [(bytes([n % 256]) * (n % 50), n, "词" * (n % 7)) for n in range(5_000)],
        "blob": b"x" * 70_000,
        "tail": {"n": -(2**40), "f": 2.5, "none": None},
    }


def test_a_large_entry_is_written_a_stretch_at_a_time_as_the_packed_bytes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from studykb.vault import cache_pack

    monkeypatch.setattr(cache_pack, "STRETCH", 4096)
    value = _value()
    copied = {k: {**v, "bytes": bytes(v["bytes"])} for k, v in value["matrices"].items()}
    packed = msgpack.packb({**value, "matrices": copied}, use_bin_type=True)
    writes: list[bytes] = []
    views: list[bool] = []

    def write(piece) -> None:  # type: ignore[no-untyped-def]
        views.append(isinstance(piece, memoryview))
        writes.append(bytes(piece))

    assert cache_pack.write_packed(write, value) == len(packed)
    assert b"".join(writes) == packed
    assert cache_pack.packed_size(value) == len(packed)
    assert b"".join(bytes(p) for p in cache_pack.packed_pieces(value)) == packed
    small = [len(w) for w, view in zip(writes, views, strict=True) if not view]
    assert len(small) > 10 and max(small) < 4096 + 200  # stretches, never the whole
    assert sum(views) == 2  # the large array and the large blob, as they are


def test_the_name_table_finds_the_same_mentions_without_its_automaton() -> None:
    from studykb.related.mentions import Names

    rows = [
        ("a", "alpha", "Alpha Centauri", ["the alpha"]),
        ("b", "beta", "Beta Test", ["线段树"]),
        ("c", "gamma", "Gamma", []),
    ]
    texts = [
        "The alpha and Alpha Centauri; beta test? 用线段树, gamma gamma.",
        "线段树线段树 and the alphabet",
        "",
    ]
    table = Names(rows).for_many()
    with_automaton = [table.mentioned("c", t) for t in texts]
    assert with_automaton[0]  # something is found
    table.for_few()
    assert [table.mentioned("c", t) for t in texts] == with_automaton


def test_a_full_builds_feature_index_holds_its_rows_packed_only(
    make_vault: Callable, open_vault: Callable
) -> None:
    from studykb.related import features
    from studykb.related.feature_index import FeatureIndex

    vault = open_vault(make_vault(PAGES))
    ix = features.from_vault(vault, "f")
    rows = (ix.out, ix.inc, ix.picked, ix.required, ix.topics, ix.tag_ids)
    groups = (ix.covering, ix.tagged, ix.members)
    assert all(not r._cache for r in (*rows, *groups))  # noqa: SLF001 - nothing unpacked held
    again = FeatureIndex.from_data(ix.to_data())
    n = {key: i for i, key in enumerate(ix.keys)}
    a, b, c = n["a.md"], n["b.md"], n["c.md"]
    assert ix.out[a] == again.out[a] and set(ix.out[a]) == {b, c}
    assert ix.inc[a] == again.inc[a] and set(ix.inc[a]) >= {b, c}
    assert list(ix.inc[a]) == sorted(ix.inc[a])  # sources in node order
    assert ix.required[b] == (a,) and ix.picked[b] == (c,)


def test_the_kept_edges_read_back_as_the_rows_added() -> None:
    from studykb.vault.kept_edges import KeptEdges

    rows = [
        ("a.md", "b.md", "link", "a.md", 3, ""),
        ("a.md", "c.md", "requires", "a.md", 1, "needs c"),
        ("c.md#u1", "a.md", "link", "c.md", 70_000, ""),
        ("b.md", "b.md", "ref", "b.md", 2, "needs c"),
    ]
    kept = KeptEdges()
    for row in rows[:3]:
        kept.add(*row)
    kept.done().add(*rows[3])
    assert len(kept) == 4
    assert list(kept) == rows and list(kept) == rows  # read as often as asked


def test_a_name_table_names_a_key_met_twice_once() -> None:
    from studykb.vault.resolve import Names, names_of

    row = ("a.md", "a.md", "a", "Alpha", "note", '["Alpha", "al", "al"]', None)
    other = ("b.md", "b.md", "b", "Alpha", "note", "[]", None)
    expected: dict[str, list[tuple[int, str]]] = {}
    for key, path, doc_id, title, _t, aliases, _u in (row, other):
        read = json.loads(aliases)
        for name, level in names_of(key, path, doc_id, title, read):
            if (level, key) not in expected.setdefault(name, []):
                expected[name].append((level, key))
    assert dict(Names([row, other]).table) == expected
    assert dict(Names([row, other, row]).table) == expected  # a key met again adds nothing
