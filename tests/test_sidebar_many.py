"""The sidebar of every document: made into text where it is made (in the workers for a
whole vault), with the same output as the sidebars made first and formatted after."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from conftest import write_files
from studykb.api import Session
from studykb.outputs import sidebar as fmt
from studykb.outputs.site_pages import SitePages
from studykb.related import sidebar as sidebar_mod
from studykb.runtime import pools

HUGO = {
    "hugo.toml": 'defaultContentLanguage = "en"\ncontentDir = "content/en"\n'
    '[languages.en]\n[languages.zh]\ncontentDir = "content/zh"\n',
    # the same page path in two languages: the second gets its language in front
    "content/en/docs/a.md": "---\ntags: [gpu]\n---\n# A <b> & {{ .Site }} {% x %}\n\n[[b]] [[c]]\n",
    "content/zh/docs/a.md": "---\ntags: [gpu]\n---\n# 甲 <i>\n\n[[b]] [[content/en/docs/a.md]]\n",
    "content/en/docs/b.md": "---\ntags: [gpu]\nrequires: [c]\n---\n# B\n\n[[c]] kernels\n",
    "content/en/docs/c.md": "---\ntags: [gpu, cuda]\n---\n# C\n\nkernels [[a]]\n",
}


@pytest.fixture
def hugo(tmp_path: Path) -> Session:
    root = write_files(tmp_path / "site", HUGO)
    kb = Session.open(root)
    kb.refresh()
    return kb


def test_keyed_json_is_to_json_of_keyed(hugo: Session) -> None:
    found = hugo.sidebars()
    pages = SitePages(hugo.site, hugo.documents())
    for ext, site in ((".md", None), (".html", None), (".md", pages)):
        whole = fmt.to_json(fmt.keyed(found, ext, site), indent=None)
        pieces = fmt.keyed_json([fmt.keyed_entry(sb, ext, site) for sb in found], site)
        assert pieces == whole
    assert '"zh/docs/a.md": ' in pieces and "\\u007b\\u007b" in pieces and "<" not in pieces
    assert fmt.keyed_json([], None) == fmt.to_json({}, indent=None)


def test_whole_vault_in_workers_is_the_same(hugo: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    if not pools.can_fork():
        pytest.skip("no fork")
    alone = hugo.sidebars()
    shape = partial(fmt.keyed_entry, ext=".md", pages=None)
    serial = hugo.sidebars_as(shape)
    monkeypatch.setattr(sidebar_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sidebar_mod, "cores", lambda: 2)
    forked = hugo.sidebars_as(shape)
    assert forked == serial == [shape(sb) for sb in alone]
    assert len(forked) == 4 and all(sb.related for sb in alone)
    assert hugo.sidebars() == alone  # the objects too, in the workers and back


def test_cli_whole_vault_formats(hugo: Session, run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    found = hugo.sidebars()
    pages = SitePages(hugo.site, hugo.documents())
    want = {
        "json": fmt.to_json(fmt.keyed(found, ".md", pages), indent=None),
        "html": "\n".join(fmt.to_html(sb, ".html") for sb in found),
        "md": "\n".join(f"<!-- {sb.path} -->\n{fmt.to_markdown(sb, '.md')}" for sb in found),
    }
    monkeypatch.setattr(sidebar_mod, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sidebar_mod, "cores", lambda: 2)
    for name, text in want.items():
        result = run("sidebar", "--format", name, vault=hugo.root)
        assert result.exit_code == 0, result.output
        assert result.stdout == text


def test_stream_gives_each_block_in_order(hugo: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    shape = partial(fmt.keyed_entry, ext=".md", pages=None)
    whole = hugo.sidebars_as(shape)
    monkeypatch.setattr(sidebar_mod, "CHUNK", 3)
    made = hugo.sidebars_stream(shape)
    assert [len(block) for block in made.blocks()] == [3, 1]
    assert list(made) == whole
    assert made.keys == sorted(made.keys) and made.paths == [path for _n, path, _t in whole]
    if pools.can_fork():  # a block at a time in the workers: the same items
        monkeypatch.setattr(sidebar_mod, "PARALLEL_MIN", 1)
        monkeypatch.setattr(sidebar_mod, "cores", lambda: 2)
        monkeypatch.setattr(sidebar_mod, "CHUNK", 1)
        assert list(hugo.sidebars_stream(shape)) == whole


def test_json_pieces_come_as_the_entries_come() -> None:
    entries = [("a.md", "a.md", "1"), ("b.md", "b.md", "2"), ("c.md", "c.md", "3")]
    pulled: list[str] = []

    def made():  # type: ignore[no-untyped-def]
        for entry in entries:
            pulled.append(entry[0])
            yield entry

    pieces = fmt.keyed_json_pieces(made(), [(n, p) for n, p, _t in entries])
    assert next(pieces) == "{" and pulled == []
    assert next(pieces) == '"a.md": 1' and pulled == ["a.md"]
    assert next(pieces) == ', "b.md": 2' and pulled == ["a.md", "b.md"]
    assert "".join(pieces) == ', "c.md": 3}\n'
    assert fmt.keyed_json(entries) == fmt.to_json({"a.md": 1, "b.md": 2, "c.md": 3}, indent=None)


def test_json_pieces_of_a_name_met_twice_are_a_dicts() -> None:
    # a name met again keeps the first place and takes the last value, as a dict does
    entries = [("a", "a", "1"), ("b", "b", "2"), ("a", "a", "3"), ("c", "c", "4")]
    want = fmt.to_json({"a": 3, "b": 2, "c": 4}, indent=None)
    assert fmt.keyed_json(entries) == want
    names = [(n, p) for n, p, _t in entries]
    assert "".join(fmt.keyed_json_pieces(iter(entries), names)) == want
    with pytest.raises(ValueError, match="announced"):
        "".join(fmt.keyed_json_pieces(iter(entries[:2]), names))
    with pytest.raises(ValueError, match="is 'c', not 'a'"):
        "".join(fmt.keyed_json_pieces(iter(entries[::-1]), names))


def test_output_file_is_put_in_place_whole(
    hugo: Session, run, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    out = hugo.root / "data" / "sidebar.json"
    out.parent.mkdir()
    out.write_text("old\n", encoding="utf-8")
    out.chmod(0o640)
    assert run("sidebar", "--format", "json", "-o", str(out), vault=hugo.root).exit_code == 0
    first = out.read_text(encoding="utf-8")
    assert first.startswith('{"') and (out.stat().st_mode & 0o777) == 0o640
    calls = []
    real = fmt.keyed_entry

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise OSError("no more")
        return real(*args, **kwargs)

    monkeypatch.setattr(sidebar_mod, "CHUNK", 1)  # two pieces written before the failure
    monkeypatch.setattr(fmt, "keyed_entry", failing)
    out.write_text("old\n", encoding="utf-8")
    with pytest.raises(OSError, match="no more"):
        run("sidebar", "--format", "json", "-o", str(out), vault=hugo.root)
    assert len(calls) == 3
    assert out.read_text(encoding="utf-8") == "old\n"  # the old file, not half of the new
    assert sorted(p.name for p in out.parent.iterdir()) == ["sidebar.json"]  # no leftovers
    missing = hugo.root / "never" / "made.json"
    calls.clear()
    with pytest.raises(OSError, match="no more"):
        run("sidebar", "--format", "json", "-o", str(missing), vault=hugo.root)
    assert not missing.exists()


def test_chunks_are_smaller_in_a_larger_vault() -> None:
    sizes = [sidebar_mod.chunk_size(n) for n in (1, 1000, 10_000, 50_000, 10**7)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == sidebar_mod.CHUNK
    assert sizes[2] * 10_000 <= sidebar_mod.CELLS and sizes[3] * 50_000 <= sidebar_mod.CELLS
    assert sizes[-1] == 16  # never fewer than 16 at a time


def test_output_to_a_pipe_is_written_as_it_comes(hugo: Session, run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import os
    import threading

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes")
    (tmp_path / "out").mkdir()
    pipe = tmp_path / "out" / "pipe"
    os.mkfifo(pipe)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_text(encoding="utf-8")))
    reader.start()
    result = run("sidebar", "--format", "json", "-o", str(pipe), vault=hugo.root)
    reader.join(timeout=60)
    assert result.exit_code == 0, result.stderr
    assert got and got[0].startswith('{"') and got[0].endswith("}\n")
    assert sorted(p.name for p in pipe.parent.iterdir()) == ["pipe"]  # no temporary file
