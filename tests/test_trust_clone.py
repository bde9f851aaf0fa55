"""Trust, third round: what a cloned repository can plant must never run or delete.

Each test plants the attack a reviewer found (issue 30, the three High items) and fails
on the code before the fix: a module in the vault imported by an index worker, a
committed ``.studykb/`` read when the user has no private place for the key, and a
committed site manifest with a link that made ``studykb site`` delete a note.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import studykb.runtime.pools as pools
import studykb.search.sync as sync


def studykb(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB_DEBUG"))}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "studykb", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=180,
        check=False,
    )


class _Payload:
    """Unpickling this creates the marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "w"))


PLANTED = "open({marker!r}, 'w').write('ran')\n"


def _plant_modules(root: Path, marker: Path) -> None:
    """Modules an index worker imports, planted at the vault's root."""
    for name in ("json", "random", "struct", "zlib", "whoosh", "studykb_worker"):
        (root / f"{name}.py").write_text(PLANTED.format(marker=str(marker)), encoding="utf-8")


def test_index_workers_never_import_from_the_vault(
    make_vault, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = {f"n{i}.md": f"# Note {i}\n\nzebracorn {i} words\n" for i in range(6)}
    root = make_vault(notes)
    marker = tmp_path / "PWNED"
    _plant_modules(root, marker)
    started: list[int] = []
    real = pools.python_workers

    def counted(entry: str, jobs, workers: int = 2):  # type: ignore[no-untyped-def]
        started.append(len(jobs))
        return real(entry, jobs, workers)

    # the parallel build of a fresh clone, without writing 1,500 notes
    monkeypatch.setattr(sync, "PARALLEL_MIN", 2)
    monkeypatch.setattr(sync.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(pools, "python_workers", counted)
    monkeypatch.syspath_prepend(str(root))  # even with the vault on this process's path
    result = run("search", "zebracorn", "--json", cwd=root)
    assert result.exit_code == 0, result.output
    assert started, "the parallel index build did not run"
    assert not marker.exists()
    hits = json.loads(result.stdout)["hits"]
    assert {h["path"] for h in hits} == set(notes)


def test_a_worker_runs_isolated_from_the_working_folder(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    folder = tmp_path / "cwd"
    folder.mkdir()
    _plant_modules(folder, marker)
    old = Path.cwd()
    os.chdir(folder)
    try:
        # pools imports json on its way to the function: a planted json.py would run
        codes = pools.python_workers("studykb.runtime.pools:cores", [(), ()], workers=2)
    finally:
        os.chdir(old)
    assert codes == [0, 0]
    assert not marker.exists()
    assert pools.worker_path() == [str(Path(pools.__file__).resolve().parents[2])]


# -- a committed .studykb/ without a private key ------------------------------------------------

NO_HOME = {"HOME": "/dev/null/home", "XDG_STATE_HOME": "/dev/null/state"}


def _built_vault(make_vault, run) -> Path:
    root = make_vault(
        {
            "a.md": "---\ntags: [t]\n---\n# Alpha\n\nalpha words [[b]]\n",
            "b.md": "# Beta\n\nbeta alpha\n",
        }
    )
    assert run("search", "alpha", vault=root).exit_code == 0
    return root


def test_a_committed_state_folder_is_not_read_without_a_key(
    make_vault, run, tmp_path: Path
) -> None:
    made = _built_vault(make_vault, run)
    marker = tmp_path / "PWNED"
    clone = tmp_path / "clone"
    shutil.copytree(made, clone)  # a repository that committed its .studykb/
    (clone / ".studykb").chmod(0o700)
    tocs = list((clone / ".studykb" / "index").glob("_MAIN_*.toc"))
    assert tocs
    for toc in tocs:
        toc.write_bytes(pickle.dumps(_Payload(marker)))
    for _ in range(2):  # and again: what the first run made is not trusted by the next
        result = studykb("search", "alpha", cwd=clone, env=NO_HOME)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert not marker.exists()
        assert "a.md" in result.stdout
        assert "not trusted" in result.stderr


def test_without_a_key_the_state_made_in_this_process_is_used(
    make_vault, run, tmp_path: Path
) -> None:
    root = make_vault({"a.md": "# Alpha\n\nalpha [[b]]\n", "b.md": "# Beta\n\nbeta\n"})
    result = studykb("check", "--json", cwd=root, env=NO_HOME)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["problems"] == []
    result = studykb("related", "b", "--json", cwd=root, env=NO_HOME)
    assert result.returncode == 0, result.stderr
    assert "a.md" in result.stdout


# -- studykb site -o and what the output folder holds -------------------------------------------


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _site_vault(make_vault) -> Path:
    return make_vault({"notes/important.md": "# Important\n\nkeep me\n", "b.md": "# B\n\nb\n"})


def test_site_never_deletes_through_a_link_in_the_output(make_vault, run, tmp_path: Path) -> None:
    root = _site_vault(make_vault)
    public = root.parent / "public"
    public.mkdir()
    note = root / "notes" / "important.md"
    planted = {"link/important.md": _digest(note.read_bytes())}
    manifest = {"version": 1, "state": "x", "files": planted}
    (public / ".studykb-site.json").write_text(json.dumps(manifest), encoding="utf-8")
    (public / "link").symlink_to(root / "notes")
    result = run("site", "-o", str(public), vault=root)
    assert result.exit_code == 2
    assert "symbolic link" in result.stderr and "link" in result.stderr
    assert note.read_text(encoding="utf-8") == "# Important\n\nkeep me\n"


def test_site_never_writes_through_a_linked_folder(make_vault, run, tmp_path: Path) -> None:
    root = _site_vault(make_vault)
    public = tmp_path / "public"
    public.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (public / "static").symlink_to(elsewhere)
    result = run("site", "-o", str(public), vault=root)
    assert result.exit_code == 2
    assert "symbolic link" in result.stderr
    assert list(elsewhere.iterdir()) == []
    assert not (public / "index.html").exists()


def test_site_refuses_a_file_link_deep_in_the_output(make_vault, run, tmp_path: Path) -> None:
    """A link planted as a file two folders down, after the site was made, is refused
    before anything is written, also when an edit asks for a few pages only."""
    root = _site_vault(make_vault)
    public = tmp_path / "public"
    assert run("site", "-o", str(public), vault=root).exit_code == 0
    before = {p: p.read_bytes() for p in public.rglob("*") if p.is_file()}
    folder = next(p.parent for p in public.rglob("*.html") if len(p.relative_to(public).parts) > 2)
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_text("not the site's\n", encoding="utf-8")
    (folder / "planted.html").symlink_to(elsewhere)
    note = root / "b.md"
    note.write_text("# B\n\nb, edited\n", encoding="utf-8")
    result = run("site", "-o", str(public), vault=root)
    assert result.exit_code == 2
    assert "symbolic link" in result.stderr and "planted.html" in result.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert elsewhere.read_text(encoding="utf-8") == "not the site's\n"


def test_site_removes_only_files_it_wrote(make_vault, run, tmp_path: Path) -> None:
    root = _site_vault(make_vault)
    public = tmp_path / "public"
    assert run("site", "-o", str(public), vault=root).exit_code == 0
    page = next(p for p in public.rglob("*.html") if p.stem == "b" and "static" not in p.parts)
    data = json.loads((public / ".studykb-site.json").read_text(encoding="utf-8"))
    # a file the manifest names with a digest it does not have: not the site's to remove
    (public / "mine.txt").write_text("my own file\n", encoding="utf-8")
    data["files"]["mine.txt"] = _digest(b"something else")
    (public / ".studykb-site.json").write_text(json.dumps(data), encoding="utf-8")
    # a page the site wrote, whose note is gone: removed
    (root / "b.md").unlink()
    result = run("site", "-o", str(public), vault=root)
    assert result.exit_code == 0, result.output
    assert (public / "mine.txt").read_text(encoding="utf-8") == "my own file\n"
    assert not page.exists()


# -- whoosh's pickles, should one ever be read --------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_a_planted_index_pickle_cannot_run_code(make_vault, run, tmp_path: Path) -> None:
    """Behind the state folder's stamp: even a table of contents in a trusted folder
    (a folder the user vouched for, say) builds only the index's own objects."""
    root = _built_vault(make_vault, run)
    marker = tmp_path / "PWNED"
    (toc,) = (root / ".studykb" / "index").glob("_MAIN_*.toc")
    data = toc.read_bytes()
    start = data.index(b"\x80\x02")  # the schema, pickled (protocol 2) after its length
    schema_len = None
    for width in (1, 2, 3):
        prefix = data[start - width : start]
        value = 0
        for k, byte in enumerate(prefix):
            value |= (byte & 0x7F) << (7 * k)
        if _varint(value) == prefix and data[start + value - 1 : start + value] == b".":
            schema_len = (width, value)
    assert schema_len is not None
    width, value = schema_len
    evil = pickle.dumps(_Payload(marker), protocol=2)
    toc.write_bytes(data[: start - width] + _varint(len(evil)) + evil + data[start + value :])
    result = run("search", "alpha", "--json", vault=root)
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "a.md" in result.stdout
    assert "rebuilding" in result.stderr


def test_the_index_unpickler_builds_only_the_index_objects(tmp_path: Path) -> None:
    from studykb.search import store, unpickle

    marker = tmp_path / "PWNED"
    with pytest.raises(pickle.UnpicklingError):
        unpickle.loads(pickle.dumps(_Payload(marker)))
    assert not marker.exists()
    for name in ("system", "popen"):
        evil = b"cos\n" + name.encode() + b"\n(S'true'\ntR."
        with pytest.raises(pickle.UnpicklingError):
            unpickle.loads(evil)
    # and the schema studykb writes reads back whole
    schema = store.make_schema()
    assert sorted(unpickle.loads(pickle.dumps(schema, 2)).names()) == sorted(schema.names())
    import whoosh.filedb.structfile as structfile
    import whoosh.index as windex

    assert windex.pickle.loads is unpickle.loads
    assert structfile.load is unpickle.load
    assert not windex.toc_loaders
