"""Large cache entries (studykb.vault.cache): written into their row in place, a piece at
a time, read back the same, replacing the older entry; the pieces are the packed bytes;
the engine's arrays packed as views of their bytes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgpack
import numpy as np

from studykb.related import stored
from studykb.vault import cache as cache_mod
from studykb.vault.cache import Cache


def test_a_large_entry_is_written_in_place_and_read_back(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    real = cache_mod._write_in_place  # noqa: SLF001

    def counted(db, name, key, value, size):  # type: ignore[no-untyped-def]
        calls.append(size)
        real(db, name, key, value, size)

    monkeypatch.setattr(cache_mod, "_write_in_place", counted)
    big = {"blob": bytes(range(256)) * (cache_mod.WRITTEN_IN_PLACE // 256 + 1), "n": 3}
    one = Cache(tmp_path)
    one.put("related-engine", "k1", {"small": 1}, keep=False)
    assert calls == []  # a small entry: one plain insert
    one.put("related-engine", "k2", big, keep=False)
    assert calls and calls[0] > cache_mod.WRITTEN_IN_PLACE
    one.close()
    two = Cache(tmp_path)
    assert two.get("related-engine", "k2") == big
    assert two.get("related-engine", "k1") is None  # replaced
    two.close()
    db = sqlite3.connect(tmp_path / cache_mod.CACHE_FILE)
    try:
        assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 1
    finally:
        db.close()


def test_a_packed_array_is_a_view_of_its_bytes_and_packs_the_same() -> None:
    a = np.arange(1000, dtype=np.float64)
    data = stored.pack_array(a)
    assert isinstance(data["bytes"], memoryview)
    assert msgpack.packb(data, use_bin_type=True) == msgpack.packb(
        {**data, "bytes": a.tobytes()}, use_bin_type=True
    )
    back = msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)
    assert np.array_equal(stored.unpack_array(back), a)


def test_packed_pieces_are_the_packed_bytes() -> None:
    big = np.arange(40_000, dtype=np.float64)
    value = {
        "made_at": ["s", 3],
        "inputs": {"a": "b"},
        "value": {
            "matrices": {"L": stored.pack_array(big), "small": stored.pack_array(big[:3])},
            "blobs": [b"x" * 70_000, b"y" * 10, (1, 2.5, None, True)],
            "text": "中文 and more",
            "n": -(2**40),
        },
    }
    pieces = cache_mod.packed_pieces(value)
    assert b"".join(bytes(p) for p in pieces) == cache_mod.pack(value)
    assert any(isinstance(p, memoryview) for p in pieces)  # the large arrays not copied


def test_a_large_entry_is_read_through_blob_io_as_stored(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    big = {"blob": bytes(range(256)) * (cache_mod.READ_IN_PLACE // 256 + 3), "n": [1, "x"]}
    one = Cache(tmp_path)
    one.put("related-vectors", "k1", big, keep=False)
    one.put("topics", "k2", {"small": [1, 2]}, keep=False)
    one.close()
    opened: list[int] = []
    real = sqlite3.Connection.blobopen
    connect = sqlite3.connect

    class Counting(sqlite3.Connection):
        def blobopen(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            opened.append(args[2])
            return real(self, *args, **kwargs)

    monkeypatch.setattr(
        cache_mod.sqlite3,
        "connect",
        lambda *a, **k: connect(*a, **k, factory=Counting),
    )
    two = Cache(tmp_path)
    assert two.get("related-vectors", "k1", keep=False) == big
    assert len(opened) == 1  # the large one through blob I/O
    assert two.get("topics", "k2", keep=False) == {"small": [1, 2]}
    assert two.get("related-vectors", "other key", keep=False) is None
    assert len(opened) == 1
    db = sqlite3.connect(tmp_path / cache_mod.CACHE_FILE)
    try:  # an entry that is text, not a packed value, is no entry (as a column read)
        db.execute("UPDATE entries SET value = ? WHERE name = 'topics'", ("x" * 2_000_000,))
        db.commit()
    finally:
        db.close()
    assert two.get("topics", "k2", keep=False) is None
    two.close()
