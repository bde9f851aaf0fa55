"""The static site's search index updated in its own text after body edits
(``search_index.update``) is, byte for byte, the index made whole (``build``): the
edited documents' entries and postings, terms gone or new, and terms whose first
document is now another one, in the order a whole build puts them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from studykb.session import Session
from studykb.web import search_index
from studykb.web.links import Linker

EDITED = "notes/cs336-summary.md"
OTHER = "notes/gpu-infra-ops-digest.md"


def _session(root: Path) -> Session:
    kb = Session.open(root)
    kb.refresh()
    return kb


def test_an_updated_index_is_the_whole_index(bundled: Path, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    link = Linker("", static=True)
    kb = _session(root)
    old = search_index.dumps(search_index.build(kb, link))
    keys = sorted(d.key for d in kb.documents().values() if d.type != "unit")
    note, other = root / EDITED, root / OTHER
    head, _sep, body = note.read_text(encoding="utf-8").partition("\n---\n")
    edits = [
        # new words (one never seen: a new term), a link
        (note, head + "\n---\n" + body + "\nzyxwvut 新词汇 and [[kv-cache-serving-digest]].\n"),
        # the body gone: its terms leave, others' first documents move
        (note, head + "\n---\n\n# Title only\n"),
        # two files at once, one back as it was
        (note, head + "\n---\n" + body),
        (other, other.read_text(encoding="utf-8") + "\nzyxwvut again, 调度 and tensors.\n"),
    ]
    for n, (path, text) in enumerate(edits):
        path.write_text(text, encoding="utf-8")
        changed = {EDITED} if n < 3 else {EDITED, OTHER}
        kb = _session(root)
        whole = search_index.dumps(search_index.build(kb, link))
        updated = search_index.update(kb, link, old, changed, kb.texts)
        assert updated == whole, n
        old = updated
    index = json.loads(old)
    assert [e["key"] for e in index["docs"]] == keys
    # the new word: in the other note only now
    assert [p[0] for p in index["terms"]["zyxwvut"]] == [keys.index(OTHER)]


def test_an_index_of_other_documents_is_not_updated(bundled: Path) -> None:
    kb = _session(bundled)
    link = Linker("", static=True)
    index = search_index.build(kb, link)
    index["docs"] = index["docs"][1:]
    assert search_index.update(kb, link, search_index.dumps(index), {EDITED}, kb.texts) is None
    assert search_index.update(kb, link, b'{"docs":[],"terms":{}}', {EDITED}, kb.texts) is None
