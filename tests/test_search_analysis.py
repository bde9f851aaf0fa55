"""The analyzer: rjieba gives jieba's words, positions are consecutive, both languages meet."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLE = """PostgreSQL的VACUUM会清理死元组。数据并行把批次切到多张卡上，张量并行把矩阵乘切开。
训练大模型时显存主要花在参数、梯度、优化器状态和激活值上。在可重复读级别下幻读仍可能出现。
投机解码用一个小的草稿模型先提出候选 token，再由目标模型一次验证。
分页注意力把键值缓存切成固定大小的块，
像操作系统的虚拟内存一样管理；中华人民共和国的流水线并行与混合精度训练。"""


def test_rjieba_gives_the_same_words_as_jieba(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jieba = pytest.importorskip("jieba")
    import rjieba

    jieba.setLogLevel(60)
    # jieba writes its dictionary's cache into the temporary folder (and reads it from
    # there at its next start): this test's own folder, which goes with it
    monkeypatch.setattr(jieba.dt, "tmp_dir", str(tmp_path))
    for line in SAMPLE.splitlines():
        assert rjieba.cut(line) == list(jieba.cut(line)), line


def test_only_chinese_runs_are_segmented() -> None:
    from studykb.text.analysis import Analyser

    analyze = Analyser().analyze

    assert analyze("PostgreSQL的VACUUM会清理死元组") == [
        "postgresql",
        "的",
        "vacuum",
        "会",
        "清理",
        "死",
        "元组",
    ]
    assert analyze("The compactions ran") == ["compact", "ran"]


def test_positions_are_consecutive_across_languages() -> None:
    from studykb.search.index import MixedTokenizer
    from studykb.text.analysis import Analyser

    tokenizer = MixedTokenizer(Analyser())

    tokens = [
        (t.text, t.pos)
        for t in tokenizer("用 PyTorch 的 FSDP2 训练 the model", positions=True, mode="query")
    ]
    assert [p for _t, p in tokens] == list(range(len(tokens)))
    assert [t for t, _p in tokens] == ["用", "pytorch", "的", "fsdp2", "训练", "model"]


def test_long_words_also_index_the_words_inside() -> None:
    from studykb.text.analysis import Analyser

    analyze = Analyser().analyze

    indexed = analyze("流水线并行和时幻读", mode="index")
    assert {"流水线", "流水", "并行"} <= set(indexed)
    assert "幻读" in indexed  # from the out-of-dictionary word jieba made of 时幻读
    query = analyze("流水线并行", mode="query")
    assert query == ["流水线", "并行"]  # the query side is not expanded


def test_pieces_share_the_position_of_their_word() -> None:
    from studykb.search.index import MixedTokenizer
    from studykb.text.analysis import Analyser

    tokenizer = MixedTokenizer(Analyser())

    tokens = [
        (t.text, t.pos) for t in tokenizer("中华人民共和国成立", positions=True, mode="index")
    ]
    positions = dict(tokens)
    assert positions["中华人民共和国"] == positions["人民"] == positions["共和国"] == 0
    assert positions["成立"] == 1


def test_spans_point_into_the_text() -> None:
    from studykb.text.analysis import Analyser

    spans = Analyser().spans

    text = "PostgreSQL的VACUUM会清理死元组"
    for term, start, end in spans(text):
        assert text[start:end].lower().startswith(term[:3])


def test_stop_words_and_punctuation_give_no_terms() -> None:
    from studykb.text.analysis import Analyser

    analyze = Analyser().analyze

    assert analyze("the of and, ... !!! ，。") == []


def test_remembered_cuts_give_the_terms_of_fresh_ones(tmp_path) -> None:
    """term_positions with every run remembered (loaded from disk) equals a fresh cut, and
    equals the terms the tokenizer gives in index mode."""
    from studykb.text import analysis, segment
    from studykb.vault.cache import Cache

    fresh = segment.Segments()
    first = analysis.Analyser(cuts=fresh).term_positions(SAMPLE)
    assert fresh.fresh  # every run was cut by rjieba
    fresh.save(Cache(tmp_path), "test-entry")
    loaded = segment.Segments()
    loaded.load(Cache(tmp_path), "test-entry")
    assert not loaded.runs  # read only when a run is first needed
    again = analysis.Analyser(cuts=loaded).term_positions(SAMPLE)
    assert set(loaded.runs) == set(fresh.runs)
    assert not loaded.fresh  # nothing was cut again
    assert again == first
    by_tokenizer: dict[str, list[int]] = {}
    for t in analysis.Analyser().tokens(SAMPLE):
        got = by_tokenizer.setdefault(t.text, [])
        if not got or got[-1] != t.pos:
            got.append(t.pos)
    assert again == by_tokenizer


def test_editing_a_note_again_needs_no_dictionary(tmp_path) -> None:
    """A fresh process re-indexing a note whose Chinese runs were cut by an earlier update
    does not load rjieba's dictionary, and the note is still found by its Chinese words."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    vault = tmp_path / "v"
    shutil.copytree(Path(__file__).parent / "fixtures" / "search_vault", vault)
    note = vault / "notes" / "mysql-isolation.md"
    step = (
        "import sys\n"
        "from studykb.vault import Vault\n"
        "from studykb.search import index\n"
        "from studykb.search.query import SearchOptions, search\n"
        "v = Vault.open(sys.argv[1]); v.refresh(); index.sync(v, quiet=True)\n"
        "loaded = 'rjieba' in sys.modules\n"
        "hits = [h.key for h in search(v, SearchOptions(sys.argv[2]))]\n"
        "print(loaded, hits[:1])\n"
    )

    def run(word: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", step, str(vault), word],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    run("zeppelin")  # the first build
    note.write_text(note.read_text(encoding="utf-8") + "\nzeppelin one\n", encoding="utf-8")
    assert run("zeppelin") == "True ['notes/mysql-isolation.md']"  # cut, and remembered
    note.write_text(note.read_text(encoding="utf-8") + "\nzeppelin two\n", encoding="utf-8")
    assert run("zeppelin") == "False ['notes/mysql-isolation.md']"
    note.write_text(note.read_text(encoding="utf-8") + "\n幻读再现\n", encoding="utf-8")
    assert run("zeppelin") == "True ['notes/mysql-isolation.md']"  # a new run: cut
