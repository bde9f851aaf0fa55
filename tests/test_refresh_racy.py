"""A first build confirms the files it stored "racily clean" (:mod:`studykb.vault.racy`),
so that the first command after it reads none of them again, and a file changed in
between is still read again by the next refresh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from studykb.vault import Vault, racy
from studykb.vault import files as vault_files


def _vault(root: Path) -> None:
    (root / "a.md").write_text("[[bbb]]\n", encoding="utf-8")
    (root / "bbb.md").write_text("# B\n", encoding="utf-8")
    (root / "ccc.md").write_text("# C\n", encoding="utf-8")


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The confirmation happens ``seconds`` after the scan (a build that long)."""
    real = racy.clock
    monkeypatch.setattr(racy, "clock", lambda: real() + int(seconds * 1e9))


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = vault_files.read_note

    def counted(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
        read.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(vault_files, "read_note", counted)
    return read


def test_after_a_long_first_build_the_next_refresh_reads_no_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _vault(tmp_path)  # just written: every file is within the racy second of the build
    _later(monkeypatch, 5)
    vault = Vault.open(tmp_path)
    vault.refresh()
    mark = int(vault.store.meta.get("scanned_ns") or 0)
    monkeypatch.undo()
    read = _reads(monkeypatch)
    stats = vault.refresh()
    assert read == []
    assert stats.modified == [] and stats.added == []
    assert mark > max(p.stat().st_mtime_ns for p in tmp_path.glob("*.md"))
    vault.close()


def test_without_the_confirmation_the_first_refresh_reads_the_racy_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the seam saves (and the proof that the test above measures it)."""
    _vault(tmp_path)
    monkeypatch.setattr(racy, "settle", lambda *_: 0)
    vault = Vault.open(tmp_path)
    vault.refresh()
    read = _reads(monkeypatch)
    vault.refresh()
    assert sorted(read) == ["a.md", "bbb.md", "ccc.md"]
    vault.close()


def test_a_file_rewritten_during_the_build_keeps_the_mark_and_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A same-size rewrite that keeps the mtime, after the build read the file and before
    it confirmed it: the mark stays, and the next refresh finds the change."""
    _vault(tmp_path)
    note = tmp_path / "a.md"
    real = racy.clock

    def rewrite_then_later() -> int:
        stamp = note.stat().st_mtime_ns
        note.write_text("[[ccc]]\n", encoding="utf-8")
        os.utime(note, ns=(stamp, stamp))
        return real() + 5 * 10**9

    monkeypatch.setattr(racy, "clock", rewrite_then_later)
    vault = Vault.open(tmp_path)
    mark_before: list[str | None] = []
    real_settle = racy.settle

    def settle(store, root, racy_ns):  # type: ignore[no-untyped-def]
        mark_before.append(store.meta.get("scanned_ns"))
        return real_settle(store, root, racy_ns)

    monkeypatch.setattr(racy, "settle", settle)
    vault.refresh()
    assert vault.store.meta.get("scanned_ns") == mark_before[0]  # not moved
    monkeypatch.undo()
    assert vault.refresh().modified == ["a.md"]
    assert [lk.target for lk in vault.outgoing("a.md")] == ["ccc.md"]
    vault.close()


def test_a_file_written_just_before_the_confirmation_is_still_racy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quick build: the files are within the racy second of the confirmation too, so
    a same-tick rewrite after the build is still seen (the case of test_resolution)."""
    _vault(tmp_path)
    vault = Vault.open(tmp_path)
    vault.refresh()
    note = tmp_path / "a.md"
    stamp = note.stat().st_mtime_ns
    note.write_text("[[ccc]]\n", encoding="utf-8")
    os.utime(note, ns=(stamp, stamp))
    assert vault.refresh().modified == ["a.md"]
    vault.close()
