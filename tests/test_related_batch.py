"""The batch seam (``studykb.related.batch``): a whole block made into lists at once
gives every row exactly the list :meth:`Ranker.order` makes of it alone."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES
from studykb.related.batch import order_block
from studykb.related.rank import Ranker, RelatedOptions

OPTIONS = [
    RelatedOptions(),
    RelatedOptions(limit=1),
    RelatedOptions(limit=3, types=("note",)),
    RelatedOptions(limit=40, types=("note", "entry", "topic", "unit")),
]


def _same_lists(ranker: Ranker, keys: list[str]) -> int:
    """Rows compared; fails at the first row whose lists differ."""
    nodes = [ranker.ix.number[k] for k in keys]
    compared = 0
    for options in OPTIONS:
        block = ranker.score(nodes, options)
        together = order_block(ranker, block, options)
        for r, key in enumerate(keys):
            assert together[r] == ranker.order(block, r, options), (key, options)
            compared += 1
    return compared


@pytest.mark.parametrize("name", ["related_vault", "bundled"])
def test_a_block_ordered_at_once_gives_each_row_its_own_list(
    name: str, tmp_path: Path, open_vault: Callable, request: pytest.FixtureRequest
) -> None:
    if name == "bundled":
        root = request.getfixturevalue("bundled")
    else:
        root = tmp_path / name
        shutil.copytree(FIXTURES / name, root)
    ranker = Ranker.for_vault(open_vault(root))
    keys = list(ranker.ix.keys)
    picked = [k for k in keys if ranker.ix.picked[ranker.ix.number[k]]]
    assert picked, "the vault has hand-picked related documents"
    assert _same_lists(ranker, keys) == len(keys) * len(OPTIONS)


def test_hand_picked_ones_come_first_in_a_block(make_vault: Callable, open_vault: Callable) -> None:
    root = make_vault(
        {
            "notes/a.md": "---\nrelated: [c, b]\n---\n# A\n\nKV cache pages [[d]].\n",
            "notes/b.md": "# B\n\nKV cache pages.\n",
            "notes/c.md": "# C\n\nPasta.\n",
            "notes/d.md": "# D\n\nKV cache pages [[a]].\n",
        }
    )
    ranker = Ranker.for_vault(open_vault(root))
    i = ranker.ix.number["notes/a.md"]
    options = RelatedOptions(limit=2)
    block = ranker.score([i], options)
    (got,) = order_block(ranker, block, options)
    assert [ranker.ix.keys[r.node] for r in got] == ["notes/c.md", "notes/b.md"]
    assert got[0].score > got[1].score > 1.0
    assert got == ranker.order(block, 0, options)
