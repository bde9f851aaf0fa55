"""The static site's graph updated in its own text after body edits
(``graph_data.update``) is, byte for byte, the graph made whole: the edited documents'
edges made again and put where their documents now are (a changed file's documents
are the state's last), the backlink counts of the documents they go to, every other
node and edge as written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from studykb.session import Session
from studykb.web import graph_data
from studykb.web.links import Linker

EDITED = "notes/cs336-summary.md"
COURSE = "courses/cs336.md"


def _whole(kb: Session) -> bytes:
    return graph_data.dumps(graph_data.whole(kb, Linker("../", static=True)))


def test_an_updated_graph_is_the_whole_graph(bundled: Path, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for name in ("notes", "courses"):
        shutil.copytree(bundled / name, root / name, ignore=shutil.ignore_patterns(".studykb"))
    shutil.copy(bundled / "studykb.toml", root / "studykb.toml")
    kb = Session.open(root)
    kb.refresh()
    old = _whole(kb)
    note, course = root / EDITED, root / COURSE
    original = note.read_text(encoding="utf-8")
    target = "notes/kv-cache-serving-digest.md"
    edits = [
        ({EDITED}, note, original + "\nA new line on [[kv-cache-serving-digest]].\n"),
        ({EDITED}, note, original.replace("[[", "[").replace("]]", "]")),  # links gone
        (
            {EDITED, COURSE},
            course,
            course.read_text(encoding="utf-8") + "\nSee [[paged-attention]].\n",
        ),
        ({EDITED, COURSE}, note, original),
    ]
    counts = []
    for n, (paths, path, text) in enumerate(edits):
        path.write_text(text, encoding="utf-8")
        kb = Session.open(root)
        kb.refresh()
        updated = graph_data.update(kb, old, paths)
        assert updated == _whole(kb), n
        assert list(json.loads(updated)["nodes"][-1].values())[0] in {
            d.key for d in kb.documents().values() if d.path == path.relative_to(root).as_posix()
        }  # the edited file's documents are last
        counts.append(
            next(n["backlinks"] for n in json.loads(updated)["nodes"] if n["id"] == target)
        )
        old = updated
    assert counts[0] == counts[1] + 1  # the new link, then gone


def test_a_graph_of_other_documents_is_not_updated(bundled: Path) -> None:
    kb = Session.open(bundled)
    kb.refresh()
    data = graph_data.whole(kb, Linker("../", static=True))
    data["nodes"] = data["nodes"][1:]
    assert graph_data.update(kb, graph_data.dumps(data), {EDITED}) is None
    assert graph_data.update(kb, b'{"nodes":[],"edges":[]}', {EDITED}) is None
