"""What a refresh after an edit asks the state once instead of for every page or twice:
the pages that include files, looked up by path for the edited pages
(``Texts.including``), and whether a course or entry says ``notes``, kept for one
refresh (``vault/saying.py``); each shortcut gives what the whole question gives."""

from __future__ import annotations

from pathlib import Path

from studykb.vault import Vault
from studykb.vault.saying import Saying
from studykb.vault.state.rows import ParsedRows

PAGE = '---\ntitle: {title}\n---\n\n{{{{% include "/_common/install" %}}}}\n\n{extra}'
FILES = {
    "hugo.toml": 'baseURL = "https://x.org/"\n',
    "content/_common/install.md": "---\ntitle: Common\n---\n\n## Install\n",
    "content/docs/b.md": PAGE.format(title="B", extra=""),
    "content/docs/plain.md": "---\ntitle: Plain\n---\n\nNo include.\n",
    "content/docs/a.md": PAGE.format(title="A", extra='{{% include "/no/such" %}}\n'),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


def _missing(root: Path) -> list[tuple[str, int]]:
    vault = Vault.open(root)
    try:
        vault.refresh()
        return sorted((p.path, p.line) for p in vault.problems() if p.code == "missing-attachment")
    finally:
        vault.close()


def test_the_including_pages_of_paths_are_the_whole_list_filtered_in_its_order(
    tmp_path: Path,
) -> None:
    _write(tmp_path, FILES)
    vault = Vault.open(tmp_path)
    try:
        vault.refresh()
        texts = vault.store.texts
        every = texts.including()
        assert [p for p, _o in every] == ["content/docs/b.md", "content/docs/a.md"]  # file order
        for paths in (
            ["content/docs/a.md", "content/docs/b.md"],
            ["content/docs/a.md", "content/docs/plain.md", "gone.md"],
            ["content/docs/plain.md"],
            [],
        ):
            assert texts.including(paths) == [row for row in every if row[0] in paths]
    finally:
        vault.close()


def test_an_edited_page_gains_and_loses_its_missing_include_warning(tmp_path: Path) -> None:
    _write(tmp_path, FILES)
    assert _missing(tmp_path) == [("content/docs/a.md", 7)]
    b = tmp_path / "content/docs/b.md"
    b.write_text(PAGE.format(title="B", extra='{{% include "/not/here" %}}\n'), "utf-8")
    assert _missing(tmp_path) == [("content/docs/a.md", 7), ("content/docs/b.md", 7)]
    a = tmp_path / "content/docs/a.md"
    a.write_text(PAGE.format(title="A", extra=""), "utf-8")
    assert _missing(tmp_path) == [("content/docs/b.md", 7)]


def _parsed(*docs: tuple[str, str]) -> ParsedRows:
    rows = [
        (f"k{n}", "p.md", "", "", kind, 0, "[]", None, data) for n, (kind, data) in enumerate(docs)
    ]
    return ParsedRows("p.md", 0, 0, "", rows, [], [], ("p.md", "", "[]", "{}"))


def test_a_kept_answer_is_asked_once_and_follows_the_write() -> None:
    asked: list[tuple[tuple[str, ...], str]] = []
    said = {"now": False}

    def ask(types: tuple[str, ...], word: str) -> bool:
        asked.append((types, word))
        return said["now"]

    kept = Saying()
    types = ("course", "entry")
    assert kept.answer(ask, types, '"notes"') is False
    assert kept.answer(ask, types, '"notes"') is False
    assert len(asked) == 1
    # a write of documents none of which says it (or says it, but is of another type)
    kept.written([_parsed(("note", '{"notes": 1}'), ("entry", '{"x": 1}'))])
    assert kept.answer(ask, types, '"notes"') is False
    assert len(asked) == 1  # known without the state
    # an entry written now says it: yes, without the state
    kept.written([_parsed(("entry", '["a", {"notes": ["x/"]}]'))])
    assert kept.answer(ask, types, '"notes"') is True
    assert len(asked) == 1
    # after any write a yes is asked again (the document saying it may have gone)
    kept.written([])
    said["now"] = False
    assert kept.answer(ask, types, '"notes"') is False
    assert len(asked) == 2
    kept.written(None)  # a whole new state: everything asked again
    assert kept.answer(ask, types, '"notes"') is False
    assert len(asked) == 3


def test_a_refresh_asks_once_and_the_answers_go_with_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from studykb.repos import notes
    from studykb.vault.state.docs import Docs

    _write(tmp_path, FILES)
    asked: list[str] = []
    real = Docs.any_saying

    def counted(self: Docs, types: tuple[str, ...], word: str) -> bool:
        asked.append(word)
        return real(self, types, word)

    monkeypatch.setattr(Docs, "any_saying", counted)
    vault = Vault.open(tmp_path)
    try:
        vault.outside = notes.source
        vault.refresh()
        (tmp_path / "content/docs/plain.md").write_text("---\ntitle: Plain\n---\n\nEdited.\n")
        asked.clear()
        stats = vault.refresh()
        assert stats.modified == ["content/docs/plain.md"]
        assert asked == ['"notes"']  # before the write; after it, known (was: twice)
        assert vault.saying is None
        assert vault.any_saying(("course",), '"x"') is False
        assert vault.any_saying(("course",), '"x"') is False
        assert asked[1:] == ['"x"', '"x"']  # no refresh running: the state each time
    finally:
        vault.close()
