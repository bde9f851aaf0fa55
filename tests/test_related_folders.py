"""The folder component's groups: a file's folder and the sections above it."""

from __future__ import annotations

from studykb.related.feature_index import HUB_CAP
from studykb.related.weights import folders, shared_folder


def _named(paths: list[str]) -> list[set[str]]:
    """Each path's groups as folder names (the group numbers read back)."""
    rows, width = folders(paths)
    names: dict[int, str] = {}
    for path, row in zip(paths, rows, strict=True):
        folder = path.rpartition("/")[0]
        chain = []
        while folder:
            chain.append(folder)
            folder = folder.rpartition("/")[0]
        for g in row:
            names.setdefault(g, next(f for f in chain if _holds(paths, rows, g, f)))
    assert len(names) == width
    return [{names[g] for g in row} for row in rows]


def _holds(paths: list[str], rows: list[list[int]], g: int, folder: str) -> bool:
    members = {p for p, row in zip(paths, rows, strict=True) if g in row}
    return all(p.startswith(folder + "/") for p in members)


def test_pages_of_one_section_share_it_however_deep() -> None:
    paths = [
        "pwn/linux/stack/rop.md",
        "pwn/linux/heap/tcache.md",
        "pwn/intro.md",
        "crypto/rsa.md",
        "crypto/aes.md",
        "web/sqli.md",
    ]
    got = _named(paths)
    assert got[0] == {"pwn/linux/stack", "pwn/linux", "pwn"}
    assert got[1] & got[0] == {"pwn/linux", "pwn"}
    assert got[2] == {"pwn"}
    assert got[3] == got[4] == {"crypto"}
    assert not got[5] & got[0]


def test_the_content_root_above_a_file_is_no_section() -> None:
    # notes/ holds every page: it stays the group of the files in it, but it is no
    # section of the files further down (as a term in every document says nothing)
    paths = ["notes/a.md", "notes/b.md", "notes/entries/x.md", "notes/entries/y.md", "c/z.md"]
    got = _named(paths)
    assert got[0] == got[1] == {"notes"}
    assert got[2] == got[3] == {"notes/entries"}
    assert got[4] == {"c"}


def test_a_folder_too_big_to_count_is_left_out() -> None:
    paths = [f"big/p{n}.md" for n in range(HUB_CAP + 1)] + ["small/a.md", "small/b.md"]
    rows, width = folders(paths)
    assert width == 1
    assert all(row == [] for row in rows[: HUB_CAP + 1])
    assert rows[-1] == rows[-2] == [0]


def test_the_reason_names_the_deepest_shared_folder() -> None:
    assert shared_folder("pwn/linux/stack/rop.md", "pwn/linux/heap/tcache.md") == "pwn/linux"
    assert shared_folder("pwn/linux/stack/rop.md", "pwn/linux/stack/ret2libc.md") == (
        "pwn/linux/stack"
    )
    assert shared_folder("pwn/rop.md", "web/sqli.md") == ""
    assert shared_folder("top.md", "pwn/rop.md") == ""
