"""What a fresh ``studykb search`` does at start-up, done cheaper, answers alike: Han
characters told without compiling a pattern over the CJK range, the grouping and name
rules of a query as the patterns they replace read them, and a segment's field lengths
read at once as whoosh reads them one by one."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import index as windex
from whoosh.codec.whoosh3 import LENGTHS_COLUMN

from studykb.search import understand
from studykb.search.scoring import _stored
from studykb.search.state import INDEX_NAME, index_dir
from studykb.text import segment
from studykb.vault import Vault

#: What the code used before: one pattern per question, over the whole Han range.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f"
HAN_RUN = re.compile(f"[{HAN}]")
HAN_SPACE = re.compile(rf"\s+(?=[{HAN}])|(?<=[{HAN}])\s+")
BREAK = re.compile(rf"[^\w\s{HAN}.+#-]")

#: Characters a query is made of, the range edges included.
EDGES = [chr(c) for lo, hi in segment.HAN_RANGES for c in (lo - 1, lo, lo + 1, hi - 1, hi, hi + 1)]
CHARS = st.one_of(
    st.sampled_from([*EDGES, " ", "\u3000", "\t", "-", "_", ".", "+", "#", "、", "，", "!", "'"]),
    st.characters(codec="utf-8"),
    st.sampled_from("数据并行算子融合kvCache显存ab1"),
)


def old_norm(name: str) -> str:
    folded = " ".join(name.casefold().replace("-", " ").replace("_", " ").split())
    return HAN_SPACE.sub("", folded)


def old_breaks(between: str, before: str, after: str) -> bool:
    if BREAK.search(between):
        return True
    if between.strip() or not between:
        return False
    return bool(HAN_RUN.match(before)) and bool(HAN_RUN.match(after))


def test_the_han_class_is_the_ranges() -> None:
    assert segment.HAN == HAN
    for code in range(0x110000):
        char = chr(code)
        assert segment.is_han(char) == bool(HAN_RUN.match(char)), hex(code)


@settings(max_examples=500, deadline=None)
@given(st.text(CHARS, max_size=12))
def test_has_han_and_names_as_the_patterns_read_them(text: str) -> None:
    assert segment.has_han(text) == bool(HAN_RUN.search(text))
    assert understand._norm(text) == old_norm(text)


@settings(max_examples=500, deadline=None)
@given(st.text(CHARS, max_size=6), CHARS, CHARS)
def test_groups_break_as_the_pattern_said(between: str, before: str, after: str) -> None:
    assert understand._breaks(between, before, after) == old_breaks(between, before, after)


def test_a_plain_query_compiles_no_pattern_over_the_han_range() -> None:
    """Importing what reads a query and reading one (Chinese and English words, a topic's
    name, a snippet's terms) compiles one pattern over the Han range: the tokenizer's."""
    code = (
        "import re\n"
        f"HAN = {HAN!r}\n"
        "compiled = []\n"
        "real = re._compile\n"
        "def spy(pattern, flags):\n"
        "    if isinstance(pattern, str) and HAN in pattern:\n"
        "        compiled.append(pattern)\n"
        "    return real(pattern, flags)\n"
        "re._compile = spy\n"
        "from studykb.search import understand\n"
        "from studykb.text import analysis\n"
        "understand.read('数据 并行, kernel fusion 的 算子融合', None)\n"
        "understand.names_of(type('T', (), {'texts': {'k': 'a b\\n数据 并行'}, 'names': {}})())\n"
        "analysis.Analyser().find_terms('数据并行 kernel', {'数据', 'kernel'})\n"
        "print(len(compiled))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "1"


def test_field_lengths_read_at_once_are_whooshs(make_vault: Callable, run: Callable) -> None:
    root = make_vault(
        {
            f"notes/n{n:02}.md": (
                f"---\ntitle: Note {n}\n" + ("aliases: [x]\n" if n % 3 == 0 else "") + "---\n"
                f"{'word ' * n}正文{n}\n"
            )
            for n in range(30)
        }
    )
    assert run("build", vault=root).exit_code == 0
    (root / "notes/n04.md").write_text("# Four\n\nagain", encoding="utf-8")  # a second segment
    assert run("build", vault=root).exit_code == 0
    ix = windex.open_dir(str(index_dir(Vault.open(root))), indexname=INDEX_NAME)
    checked = 0
    with ix.reader() as reader:
        for leaf, _base in reader.leaf_readers():
            perdoc = leaf.codec().per_document_reader(leaf.storage(), leaf.segment())
            for field in ("body", "title", "aliases", "tags"):
                column = f"_{field}_len"
                if perdoc.has_column(column):
                    whooshs = list(perdoc.column_reader(column, LENGTHS_COLUMN))
                    assert list(_stored(perdoc.column_reader(column, LENGTHS_COLUMN))) == whooshs
                    checked += 1
            perdoc.close()
    assert checked >= 5
