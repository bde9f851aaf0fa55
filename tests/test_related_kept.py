"""What ranking one document keeps so that it need not read the whole vault again after
an edit (issue 24), each held to what reading everything again gives: the mention counts
kept with the vectors, the vectors' stamp made from the one before, the name table and
the labelled links as kept in the cache, the topic table across edits of other files,
the rows' pairs ordered by 16-bit sorts, and the count of dangling site links."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from studykb.related import row_scores
from studykb.related.labels import Blobs, Links
from studykb.related.mentions import _joined, _split, unpack
from studykb.related.textsim import TermVectors
from studykb.related.vectorcache import VECTORS, Vectors, stamp_after
from studykb.vault.topics import TOPICS, TopicTable
from test_related_update import files


def counted_again(tv: TermVectors) -> dict[str, int]:
    """How many documents name each key, read off every document's mentions."""
    named: Counter[str] = Counter()
    for key, n in tv.number.items():
        named.update({target for target, _t in unpack(tv.mentions[n]) if target != key})
    return dict(named)


def test_the_kept_mention_counts_are_the_mentions_counted_again(
    make_vault: Callable, open_vault: Callable
) -> None:
    root: Path = make_vault(files())
    vault = open_vault(root)
    tv = vault.derived(VECTORS).tv
    made = tv.made
    assert tv.named == counted_again(tv) and tv.named
    edits = {  # a mention added, one taken away, then the same file named by nobody
        "notes/n003.md": "# Topic 003\n\nNow names Topic 100, Topic 101 and Topic 102.\n",
        "notes/n007.md": "# Topic 007\n\nNames nothing at all.\n",
        "notes/n049.md": "# Topic 049\n\nPlain words.\n",
    }
    for path, text in edits.items():
        (root / path).write_text(text, encoding="utf-8")
        vault.refresh()
        tv = vault.derived(VECTORS).tv
        assert tv.made == made  # updated, not built again
        assert tv.named == counted_again(tv)
    assert tv.named["notes/n100.md"] == counted_again(tv)["notes/n100.md"] >= 1
    assert VECTORS.build(vault).tv.named == tv.named  # what a full build counts
    data = VECTORS.dump(vault.derived(VECTORS))
    assert VECTORS.load(data).tv.named == tv.named  # and what the cache gives back


def test_the_rows_weigh_mentions_by_the_kept_counts_or_by_counting(
    make_vault: Callable, open_vault: Callable
) -> None:
    vault = open_vault(make_vault(files(60)))
    from studykb.related.features import FEATURES

    ix, tv = vault.derived(FEATURES), vault.derived(VECTORS).tv
    n = len(ix.keys)
    kept = row_scores._named(ix, tv, n)
    tv.named = {}  # not read: the vectors hold a document the features do not
    tv.number["\0other"] = len(tv.keys)
    counted = row_scores._named(ix, tv, n)
    assert kept.tobytes() == counted.tobytes() and kept.sum() > 0


def test_an_updated_stamp_changes_with_what_the_update_changed(
    make_vault: Callable, open_vault: Callable
) -> None:
    root: Path = make_vault(files())
    first = open_vault(root)
    before = first.structures.stamp(VECTORS)
    first.close()
    (root / "notes/n010.md").write_text("# Topic 010\n\nKernel fusion words.\n", encoding="utf-8")
    stamps = []
    for _process in range(2):  # two processes update the kept value for the same edit
        later = open_vault(root)
        stamps.append(later.structures.stamp(VECTORS))
        later.close()
    assert stamps[0] == stamps[1] != before
    value = open_vault(root).derived(VECTORS)
    assert isinstance(value, Vectors) and not value.tv.touched
    assert stamp_after(value.tv, stamps[0]) == stamps[0]  # nothing changed since


def test_the_topic_table_is_kept_across_edits_of_other_files(
    make_vault: Callable, open_vault: Callable
) -> None:
    notes = files(40)
    notes["topics/kv.md"] = "---\ntype: topic\naliases: [KV]\n---\n# KV cache\n"
    root: Path = make_vault(notes)
    vault = open_vault(root)
    table = vault.derived(TOPICS)
    (root / "notes/n001.md").write_text("# Topic 001\n\nOther words.\n", encoding="utf-8")
    vault.refresh()
    assert vault.derived(TOPICS) is table
    edits = [
        ("notes/n002.md", "---\ntype: topic\n---\n# Paged attention\n"),  # a note becomes one
        ("topics/kv.md", "---\ntype: topic\naliases: [KV, kv-cache]\n---\n# KV cache\n"),
        ("notes/n002.md", "# Topic 002\n\nWords.\n"),  # and stops being one
    ]
    for path, text in edits:
        (root / path).write_text(text, encoding="utf-8")
        vault.refresh()
        now = vault.derived(TOPICS)
        afresh = TopicTable(vault.topic_rows())
        assert (now.digest, now.names, now.texts) == (afresh.digest, afresh.names, afresh.texts)
        assert now.vocabulary() == afresh.vocabulary()
    assert "kv-cache" in now.names and "paged attention" not in now.names


def test_a_topic_tables_vocabulary_is_kept_with_it() -> None:
    rows = [("t.md", "transformer", "Transformer", '["Quantization"]')]
    table = TopicTable(rows)
    kept = TopicTable.from_data(json.loads(json.dumps(table.to_data())))
    assert kept.vocabulary() == TopicTable(rows).vocabulary() == ["quantization"]
    with pytest.raises((ValueError, KeyError)):
        TopicTable.from_data({**table.to_data(), "vocabulary": None})


def test_kept_lists_of_names_read_back_as_they_were() -> None:
    lists = [["a", "b"], [], ["x\x1fy", "z"], [""], ["only"], "a\x1fb"]
    kept = _joined(lists)  # type: ignore[arg-type]
    assert [_split(x) for x in kept] == [
        ["a", "b"],
        [],
        ["x\x1fy", "z"],
        [""],
        ["only"],
        ["a", "b"],
    ]
    assert kept[0] == "a\x1fb" and kept[2] == ["x\x1fy", "z"] and kept[3] == [""]
    with pytest.raises(ValueError):
        _split(3)  # type: ignore[arg-type]


def test_labelled_links_kept_as_one_blob() -> None:
    raw = {f"notes/{i}.md": json.dumps([f"s{i}", f"t{i}", "label"]).encode() for i in range(50)}
    raw["empty.md"] = b""
    blobs = Blobs.from_data(Blobs.of(raw).data())
    assert dict(blobs.items()) == raw and list(blobs) == list(raw) and len(blobs) == len(raw)
    assert blobs["notes/7.md"] == raw["notes/7.md"] and "notes/7.md" in blobs
    assert "nowhere.md" not in blobs and blobs.get("nowhere.md") is None
    links = Links(blobs)
    assert links["notes/3.md"] == ["s3", "t3", "label"]
    assert links.data() == Blobs.of(raw).data()  # read, not changed: kept as it was
    changed = links.replaced(["notes/3.md"], {"notes/3.md": ["s3", "t9", "other"]})
    again = Links(Blobs.from_data(changed.data()))
    assert again["notes/3.md"] == ["s3", "t9", "other"] and again["notes/4.md"] == [
        "s4",
        "t4",
        "label",
    ]
    for bad in ({"a": b""}, ["a", b"", b"\x01"], ["a\0b", b"xy", np.array([2], "q").tobytes()]):
        with pytest.raises(ValueError):
            Blobs.from_data(bad)


@pytest.mark.parametrize("width", [7, 300, row_scores.SMALL + 5])
def test_the_rows_pairs_are_ordered_as_a_sort_orders_them(width: int) -> None:
    rng = np.random.default_rng(width)
    for shape in ("random", "rows in order", "columns in order", "sorted", "twice"):
        rows = rng.integers(0, 200, 3000)
        cols = rng.integers(0, width, 3000)
        if shape == "rows in order":
            rows = np.sort(rows)
        elif shape == "columns in order":
            cols = np.sort(cols)
        elif shape == "sorted":
            key = np.unique(rows * width + cols)
            rows, cols = key // width, key % width
        elif shape == "twice":
            rows, cols = np.concatenate([rows, rows]), np.concatenate([cols, cols])
        key = rows * width + cols
        order = row_scores._pair_order(rows, cols, key, 200, width)
        got = key if order is None else key[order]
        assert np.array_equal(got, np.sort(key)), shape


def test_the_rows_of_pairs_in_any_order_are_the_same() -> None:
    rng = random.Random(3)
    pairs = sorted({(rng.randrange(50), rng.randrange(80)) for _ in range(600)})
    shuffled = pairs[:]
    rng.shuffle(shuffled)
    for given in (pairs, shuffled):
        r = np.asarray([a for a, _b in given], dtype=np.int64)
        c = np.asarray([b for _a, b in given], dtype=np.int64)
        made = row_scores._Rows.of(r, c, 50, (r * 1000 + c).astype(np.float64))
        rows = np.repeat(np.arange(50), np.diff(made.indptr))
        assert [(int(a), int(b)) for a, b in zip(rows, made.indices, strict=True)] == pairs
        assert np.array_equal(made.data, (rows * 1000 + made.indices).astype(np.float64))


def test_dangling_site_links_are_counted_through_the_index(
    make_vault: Callable, open_vault: Callable
) -> None:
    hugo = {
        "hugo.toml": 'baseURL = "https://example.org/"\ntitle = "Docs"\n',
        "content/docs/_index.md": "---\ntitle: Docs\n---\n",
        "content/docs/a.md": "---\ntitle: A\n---\n[gone](/docs/nothing/), [b](/docs/b/), [x](x)\n",
        "content/docs/b.md": "---\ntitle: B\n---\n[gone too](/docs/none/), [[nothing]]\n",
    }
    vault = open_vault(make_vault(hugo, config=None))
    db = vault.store.refs.db
    plain = "SELECT count(*) FROM refs WHERE state='dangling' AND style='site'"
    assert vault.store.refs.dangling_site_links() == db.execute(plain).fetchone()[0] >= 2
