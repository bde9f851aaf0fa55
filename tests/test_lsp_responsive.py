"""The language server answers every buffer while it reads a large one, and answers a
bad position with an error (issue 30, Medium).

Nothing here is timed: what is checked is the order in which the server's messages
come (a small buffer's answer before a large buffer's), and that each request gets an
answer at all.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_client import LspClient
from studykb.editor.lsp_work import Readings

SMALL = "---\nid: small\n---\n# Small\n\nSee [[other]].\n"
OTHER = "---\nid: other\ntitle: The other note\n---\n# Other\n"


def _large(lines: int = 12_000) -> str:
    """A note of about 0.6 MB whose every paragraph has references to resolve (seconds to
    read: a second of them at least, then the rest as plain text, ``too-complex``)."""
    body = "".join(
        f"Line {i} sees [[other]] and [[missing-{i % 500}]] here.\n\n" for i in range(lines)
    )
    return "---\nid: large\n---\n# Large\n\n" + body


@pytest.fixture
def large_vault(tmp_path: Path) -> Path:
    """The two small notes and the large one (seconds for the server to read, at start
    and at each change)."""
    return _vault(tmp_path / "v", large=True)


def _vault(root: Path, large: bool) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "studykb.toml").write_text("", encoding="utf-8")
    (root / "notes" / "small.md").write_text(SMALL, encoding="utf-8")
    (root / "notes" / "other.md").write_text(OTHER, encoding="utf-8")
    if large:
        (root / "notes" / "large.md").write_text(_large(), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def small_lsp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LspClient, str]]:
    """One server, over the two small notes, for every test of a bad request (each
    checks that the server goes on answering; it leaves cleanly at the end, with no
    traceback), and the uri of the open small buffer."""
    vault = _vault(tmp_path_factory.mktemp("responsive") / "v", large=False)
    lsp = LspClient(vault)
    try:
        lsp.initialize(vault)
        small = lsp.open(vault / "notes" / "small.md")
        lsp.diagnostics(small, 1, timeout=120)
        yield lsp, small
    finally:
        assert lsp.close() == 0
    assert "Traceback" not in lsp.stderr, lsp.stderr


def _index(lsp: LspClient, wanted: tuple[str, object]) -> int:
    return lsp.order.index(wanted)


@pytest.mark.slow  # seconds: the server reads the large note at start and at each change
def test_a_large_buffer_being_read_holds_up_no_other(large_vault: Path) -> None:
    vault = large_vault
    with LspClient(vault) as lsp:
        lsp.initialize(vault)
        small = lsp.open(vault / "notes" / "small.md")
        assert lsp.diagnostics(small, 1, timeout=120) == []
        large = lsp.open(vault / "notes" / "large.md")
        assert lsp.diagnostics(large, 1, timeout=300)  # its dangling links
        lsp.change(large, _large(12_001), 2)
        # a request on the large buffer (it waits for the reading of version 2), then
        # one on the small buffer: the small one is answered first, before the large
        # buffer's new problems are published
        on_large = lsp.send("textDocument/hover", lsp.at(large, 5, 16))
        on_small = lsp.send("textDocument/hover", lsp.at(small, 5, 7))
        hover = lsp.answer(on_small, timeout=300)
        assert "The other note" in hover["contents"]["value"]
        assert lsp.answer(on_large, timeout=300) is not None
        assert lsp.diagnostics(large, 2, timeout=300)
        order = [kind for kind, _ in lsp.order]
        first_large = next(
            i
            for i, (kind, params) in enumerate(lsp.order)
            if (kind == "response" and params == on_large)
            or (
                kind == "textDocument/publishDiagnostics"
                and isinstance(params, dict)
                and params.get("uri") == large
                and params.get("version") == 2
            )
        )
        assert _index(lsp, ("response", on_small)) < first_large, order
    assert lsp.proc.returncode == 0


@pytest.mark.parametrize(
    ("method", "line", "character"),
    [
        ("textDocument/hover", -1, 0),
        ("textDocument/completion", 0, -3),
        ("textDocument/definition", 99, 0),
        ("textDocument/references", 7, 0),  # the buffer has lines 0 to 6
    ],
)
def test_a_bad_position_gets_an_error_reply(
    small_lsp: tuple[LspClient, str], method: str, line: int, character: int
) -> None:
    lsp, small = small_lsp
    params = lsp.at(small, line, character)
    if method == "textDocument/references":
        params["context"] = {"includeDeclaration": False}
    with pytest.raises(RuntimeError, match="-32602"):
        lsp.request(method, params, timeout=60)
    # and the server goes on answering
    assert lsp.request("textDocument/hover", lsp.at(small, 5, 7), timeout=60) is not None
    assert "Traceback" not in lsp.stderr, lsp.stderr


def test_a_character_past_the_end_of_its_line_is_the_end_of_the_line(
    small_lsp: tuple[LspClient, str],
) -> None:
    """As the protocol says (and editors count on it): not an error."""
    lsp, small = small_lsp
    assert lsp.request("textDocument/hover", lsp.at(small, 5, 999), timeout=60) is None
    at_end = lsp.request("textDocument/completion", lsp.at(small, 6, 40), timeout=60)
    assert at_end is None


def test_a_request_that_cannot_be_read_gets_an_error_reply(tmp_path: Path) -> None:
    """pygls drops a request it cannot read as its type: the client waited for ever.
    (A server of its own: pygls logs the request's traceback, which the shared server's
    stderr must not hold.)"""
    vault = _vault(tmp_path / "v", large=False)
    with LspClient(vault) as lsp:
        lsp.initialize(vault)
        small = lsp.open(vault / "notes" / "small.md")
        lsp.diagnostics(small, 1, timeout=120)
        with pytest.raises(RuntimeError, match="-32602"):  # no "context"
            lsp.request("textDocument/references", lsp.at(small, 5, 7), timeout=60)
        assert lsp.request("textDocument/hover", lsp.at(small, 5, 7), timeout=60) is not None


def test_a_bad_range_gets_an_error_reply(small_lsp: tuple[LspClient, str]) -> None:
    lsp, small = small_lsp
    params = {
        "textDocument": {"uri": small},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": -2, "character": 0}},
        "context": {"diagnostics": []},
    }
    with pytest.raises(RuntimeError, match="-32602"):
        lsp.request("textDocument/codeAction", params, timeout=60)
    assert lsp.request("textDocument/hover", lsp.at(small, 5, 7), timeout=60) is not None


def test_edits_coalesce_while_a_reading_runs() -> None:
    """Ten versions typed while the first is being read: one more reading, of the last
    version, and every request that waited gets it."""
    release = threading.Event()
    done: list[tuple[str, object, str]] = []

    def read(version: int) -> str:
        if version == 1:
            release.wait(30)
        return f"v{version}"

    async def main() -> list[str]:
        readings: Readings[str] = Readings(lambda name, key, value: done.append((name, key, value)))
        try:
            waiters = [readings.read("big", v, lambda v=v: read(v)) for v in range(1, 11)]
            other = readings.read("small", 1, lambda: "s1")
            assert await other == "s1"  # another buffer is not held up
            release.set()
            return [await w for w in waiters]
        finally:
            readings.close()

    got = asyncio.run(main())
    assert got == ["v1"] + ["v10"] * 9
    assert [(n, k) for n, k, _v in done if n == "big"] == [("big", 1), ("big", 10)]
