"""Search: relevance on a bilingual vault, filters, query syntax, the index following edits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, run_json

SEARCH_VAULT = FIXTURES / "search_vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "search_vault"
    shutil.copytree(SEARCH_VAULT, dest)
    return dest


def keys(run, vault: Path, *args: str) -> list[str]:  # type: ignore[no-untyped-def]
    code, data = run_json(run, "search", *args, vault=vault)
    assert code in (0, 1), data
    assert (code == 0) == bool(data["hits"])
    return [h["key"] for h in data["hits"]]


# query -> the document that must rank first
FIRST = [
    ("VACUUM", "notes/postgres-vacuum.md"),  # Latin glued to Chinese
    ("PostgreSQL", "notes/postgres-vacuum.md"),
    ("postgresql的vacuum", "notes/postgres-vacuum.md"),  # glued in the query too
    ("死元组", "notes/postgres-vacuum.md"),
    ("幻读", "notes/mysql-isolation.md"),  # two-character words
    ("并行", "notes/data-parallel.md"),
    ("显存", "notes/gpu-memory.md"),
    ("GPU memory usage", "notes/gpu-memory.md"),  # English alias of a Chinese note
    ("键值缓存", "notes/topics/kv-cache.md"),  # Chinese alias of an English topic
    ("数据库", "courses/db-course.md"),
    ("compactions", "notes/lsm-compaction.md"),  # stemming
    ("compacting", "notes/lsm-compaction.md"),
    ("compac*", "notes/lsm-compaction.md"),  # prefix
    ('"return value"', "notes/return-value.md"),  # phrase
    ("投机解码", "notes/topics/speculative-decoding.md"),
    ("speculative decoding", "notes/topics/speculative-decoding.md"),
    ("title:compaction", "notes/lsm-compaction.md"),  # field:value
    ("MVCC AND 幻读", "notes/mysql-isolation.md"),
]

# query -> documents that must be in the top 3
TOP3 = [
    ("键值缓存", "notes/entries/vllm-paper.md"),  # covers the topic named in Chinese
    ("投机解码", "notes/speculative-zh.md"),
    ("speculative decoding", "notes/speculative-zh.md"),  # a Chinese note tagged with the topic
    ("幻读 OR compaction", "notes/mysql-isolation.md"),
    ("幻读 OR compaction", "notes/lsm-compaction.md"),
    ("vacuum", "courses/db-course.md#l1-mvcc"),  # a course unit is its own document
    ("SOSP", "notes/entries/vllm-paper.md"),  # unknown front-matter keys
]


@pytest.mark.parametrize(("query", "expected"), FIRST)
def test_ranks_first(run, vault: Path, query: str, expected: str) -> None:
    found = keys(run, vault, query)
    assert found and found[0] == expected, found


@pytest.mark.parametrize(("query", "expected"), TOP3)
def test_in_top_three(run, vault: Path, query: str, expected: str) -> None:
    assert expected in keys(run, vault, query)[:3]


def test_phrase_needs_the_words_together(run, vault: Path) -> None:
    assert keys(run, vault, '"return value"') == ["notes/return-value.md"]
    assert "notes/value-semantics.md" in keys(run, vault, "return value")


def test_not_excludes(run, vault: Path) -> None:
    found = keys(run, vault, "vacuum NOT postgresql")
    assert "notes/postgres-vacuum.md" not in found
    assert "courses/db-course.md#l1-mvcc" in found


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("vacuum", "--type", "unit"), ["courses/db-course.md#l1-mvcc"]),
        (("mvcc", "--type", "note"), ["notes/postgres-vacuum.md", "notes/mysql-isolation.md"]),
        (
            ("", "--course", "db-course"),
            [
                "courses/db-course.md",
                "courses/db-course.md#l1-mvcc",
                "courses/db-course.md#l2-lsm",
                "notes/lsm-compaction.md",
                "notes/postgres-vacuum.md",
            ],
        ),
        (
            ("", "--course", "数据库系统", "--type", "note"),
            ["notes/lsm-compaction.md", "notes/postgres-vacuum.md"],
        ),
        (("", "--tag", "KV cache"), ["notes/entries/vllm-paper.md", "notes/topics/kv-cache.md"]),
        (
            ("", "--tag", "mvcc", "--status", "done"),
            ["courses/db-course.md#l1-mvcc", "notes/postgres-vacuum.md"],
        ),
        (("", "--status", "todo", "--level", "4"), ["notes/entries/vllm-paper.md"]),
        (("", "--level", "advanced"), []),
        (("memory", "--status", "read"), []),
        (("type:entry",), ["notes/entries/vllm-paper.md"]),
        (("tag:mysql",), ["notes/mysql-isolation.md"]),
    ],
)
def test_filters(run, vault: Path, args: tuple[str, ...], expected: list[str]) -> None:
    found = keys(run, vault, *args)
    if args[0]:
        assert sorted(found) == sorted(expected)
    else:
        assert found == sorted(expected)  # a filter-only list comes in path order


def test_json_shape_and_limit(run, vault: Path) -> None:
    code, data = run_json(run, "search", "mvcc", "--limit", "2", vault=vault)
    assert code == 0
    assert data["query"] == "mvcc"
    assert len(data["hits"]) == 2
    for hit in data["hits"]:
        assert {"id", "path", "title", "type", "score", "snippet"} <= set(hit)
        assert isinstance(hit["score"], float) and hit["score"] > 0
    first = data["hits"][0]
    for start, end in first["highlights"]:
        assert first["snippet"][start:end].lower() == "mvcc"


def test_readable_output_highlights(run, vault: Path) -> None:
    result = run("search", "幻读", vault=vault)
    assert result.exit_code == 0
    assert "MySQL 事务隔离级别" in result.stdout
    assert "notes/mysql-isolation.md" in result.stdout
    assert "幻读" in result.stdout


def test_nothing_matched_exits_1(run, vault: Path) -> None:
    result = run("search", "zeppelin", vault=vault)
    assert result.exit_code == 1
    assert "nothing matched" in result.stderr and result.stdout == ""
    code, data = run_json(run, "search", "zeppelin", vault=vault)
    assert (code, data["hits"]) == (1, [])


@pytest.mark.parametrize(
    "query",
    [
        '"unclosed phrase',
        "(fsdp OR ddp",
        "fsdp)",
        "AND fsdp",
        "fsdp OR",
        "NOT",
        "tilte:compaction",
        "title:",
        "[a TO",
    ],
)
def test_syntax_errors_exit_2(run, vault: Path, query: str) -> None:
    result = run("search", query, vault=vault)
    assert result.exit_code == 2, result.stdout
    assert "Cannot read the query" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("the of and", 1),  # only stop words
        ("!!! ??? ...", 1),  # only punctuation
        ("，。！", 1),
        ("vacuum\x00\x07\x1b[31m", 0),  # control characters
        ("vacuum " * 400, 0),  # very long
        ("死元组" * 300, 0),
        ("https://arxiv.org/abs/2309.06180", 0),
        ("C++ OR e.g.", None),
        ("std::vector", None),
        ("*", 0),
    ],
)
def test_odd_queries_answer_sensibly(run, vault: Path, query: str, code: int | None) -> None:
    result = run("search", query, vault=vault)
    if code is not None:
        assert result.exit_code == code, (result.stdout, result.stderr)
    else:
        assert result.exit_code in (0, 1)


def test_notes_on_stderr(run, vault: Path) -> None:
    assert "only common words" in run("search", "the of", vault=vault).stderr
    assert "only punctuation" in run("search", "!!!", vault=vault).stderr
    assert "control characters" in run("search", "vacuum\x07", vault=vault).stderr
    assert "is long" in run("search", "vacuum " * 200, vault=vault).stderr
    assert run("search", "*", vault=vault).stderr == ""


def test_empty_query_without_filters_is_usage_error(run, vault: Path) -> None:
    result = run("search", "", vault=vault)
    assert result.exit_code == 2
    assert "Nothing to search for" in result.stderr


def test_bad_filter_values(run, vault: Path) -> None:
    assert run("search", "x", "--status", "someday", vault=vault).exit_code == 2
    assert run("search", "x", "--level", "9", vault=vault).exit_code == 2
    assert run("search", "x", "--type", "poem", vault=vault).exit_code == 2
    assert run("search", "x", "--course", "no-such-course", vault=vault).exit_code == 1


def test_index_follows_edits(run, vault: Path) -> None:
    assert keys(run, vault, "zeppelin") == []
    note = vault / "notes" / "lsm-compaction.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "\nA zeppelin is not a tree.\n", encoding="utf-8"
    )
    assert keys(run, vault, "zeppelin") == ["notes/lsm-compaction.md"]
    (vault / "notes" / "new.md").write_text("# 飞艇\n\n飞艇 zeppelin 的笔记\n", encoding="utf-8")
    assert sorted(keys(run, vault, "zeppelin")) == ["notes/lsm-compaction.md", "notes/new.md"]
    note.unlink()
    assert keys(run, vault, "zeppelin") == ["notes/new.md"]
    assert keys(run, vault, "compaction") == []


def test_only_changed_files_are_reindexed(open_vault, vault: Path) -> None:
    from studykb.search import index

    v = open_vault(vault)
    first = index.sync(v, quiet=True)
    assert first.rebuilt and first.added == 12 and first.documents == 14
    assert index.sync(v, quiet=True).paths == []
    path = vault / "notes" / "gpu-memory.md"
    path.write_text(path.read_text(encoding="utf-8").replace("显存", "显卡内存"), encoding="utf-8")
    v.refresh()
    stats = index.sync(v, quiet=True)
    assert (stats.updated, stats.added, stats.removed, stats.rebuilt) == (1, 0, 0, False)
    assert stats.paths == ["notes/gpu-memory.md"]


def test_topic_rename_reindexes_the_documents_that_cover_it(open_vault, vault: Path) -> None:
    from studykb.search import index
    from studykb.search.query import SearchOptions, search

    v = open_vault(vault)
    index.sync(v, quiet=True)
    topic = vault / "notes" / "topics" / "kv-cache.md"
    topic.write_text(
        topic.read_text(encoding="utf-8").replace("KV 缓存", "注意力缓存"), encoding="utf-8"
    )
    v.refresh()
    stats = index.sync(v, quiet=True)
    assert "notes/entries/vllm-paper.md" in stats.paths
    found = [h.key for h in search(v, SearchOptions("注意力缓存", types=("entry",)))]
    assert found == ["notes/entries/vllm-paper.md"]


def test_topic_tables_kept_on_disk_follow_topic_edits(open_vault, vault: Path) -> None:
    """A new process loads the topic table from the cache while the topic documents are
    unchanged (any other edit), and builds it again when one changed."""
    from studykb.vault import Vault
    from studykb.vault.topics import TopicTable

    def new_process_topics() -> TopicTable:
        fresh = Vault.open(vault)
        try:
            fresh.refresh()
            return fresh.topics()
        finally:
            fresh.close()

    v = open_vault(vault)
    v.topics()
    note = vault / "notes" / "gpu-memory.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    v.refresh()
    loaded = new_process_topics()
    built = TopicTable(v.topic_rows())
    assert (loaded.names, loaded.texts, loaded.ids) == (built.names, built.texts, built.ids)
    assert "kv 缓存" in loaded.names
    topic = vault / "notes" / "topics" / "kv-cache.md"
    topic.write_text(
        topic.read_text(encoding="utf-8").replace("KV 缓存", "注意力缓存"), encoding="utf-8"
    )
    again = new_process_topics()
    assert "注意力缓存" in again.names and "kv 缓存" not in again.names


def test_build_syncs_the_index(run, vault: Path) -> None:
    assert run("build", vault=vault).exit_code == 0
    assert (vault / ".studykb" / "index").is_dir()


@pytest.mark.parametrize("damage", ["toc", "segments", "garbage_dir", "file"])
def test_damaged_index_is_rebuilt(run, vault: Path, damage: str) -> None:
    assert keys(run, vault, "幻读") == ["notes/mysql-isolation.md"]
    folder = vault / ".studykb" / "index"
    if damage == "toc":
        for toc in folder.glob("_MAIN_*.toc"):
            toc.write_bytes(b"\x80\x04not a pickle")
    elif damage == "segments":
        for seg in folder.glob("*.seg"):
            seg.write_bytes(seg.read_bytes()[:40])
    elif damage == "garbage_dir":
        shutil.rmtree(folder)
        folder.mkdir()
        (folder / "_MAIN_1.toc").write_bytes(b"junk")
    else:
        shutil.rmtree(folder)
        folder.write_text("not a folder")
    result = run("search", "幻读", vault=vault)
    assert result.exit_code == 0, result.stderr
    assert "notes/mysql-isolation.md" in result.stdout
    if damage != "segments":  # a truncated segment may only show when read
        assert "rebuilding" in result.stderr
    assert len([line for line in result.stderr.splitlines() if "index" in line]) <= 1


def test_index_of_another_version_is_rebuilt(open_vault, vault: Path, monkeypatch) -> None:
    from studykb.search import index

    v = open_vault(vault)
    index.sync(v, quiet=True)
    from studykb.search import state as index_state
    from studykb.search import store

    for module in (store, index_state):  # what a newer studykb would have
        monkeypatch.setattr(module, "INDEX_VERSION", index.INDEX_VERSION + "-newer")
    v = open_vault(vault)  # in the next process
    stats = index.sync(v, quiet=True)
    assert stats.rebuilt and "another studykb version" in (stats.notice or "")


def test_a_second_process_that_found_no_index_opens_the_first_ones(open_vault, vault: Path) -> None:
    """Two builds that both found no index: the slower one's create, run after the faster
    one has indexed, opens that index instead of deleting its files (a race CI saw as
    "NameError: File '_MAIN_0.toc' exists")."""
    from studykb.search import index, store

    v = open_vault(vault)
    index.sync(v, quiet=True)
    folder = vault / ".studykb" / "index"
    before = store.doc_count(store.open_dir(folder))
    ix = store.create(folder)  # the slower process, past its "no index here" check
    assert before > 0 and store.doc_count(ix) == before
    with ix.reader() as reader:  # readable, not half deleted
        stored = {f["key"] for f in reader.all_stored_fields()}
    assert "notes/mysql-isolation.md" in stored


def test_locked_index_answers_from_last_complete_index(open_vault, vault: Path) -> None:
    from studykb.search import index
    from studykb.search.query import SearchOptions, search

    v = open_vault(vault)
    index.sync(v, quiet=True)
    from whoosh import index as windex

    holder = windex.open_dir(str(vault / ".studykb" / "index")).writer()
    try:
        note = vault / "notes" / "value-semantics.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nzeppelin\n", encoding="utf-8")
        v.refresh()
        stats = index.sync(v, wait=0.2, quiet=True)
        assert stats.stale and "another studykb process" in (stats.notice or "")
        assert [h.key for h in search(v, SearchOptions("幻读"))] == ["notes/mysql-isolation.md"]
    finally:
        holder.cancel()
    stats = index.sync(v, quiet=True)
    assert stats.paths == ["notes/value-semantics.md"]


def test_similar(open_vault, vault: Path) -> None:
    from studykb.search import index

    v = open_vault(vault)
    related = index.similar(v, "notes/topics/kv-cache.md", limit=5)
    assert related and all(key != "notes/topics/kv-cache.md" for key, _s, _t in related)
    by_key = {key: (score, shared) for key, score, shared in related}
    assert "notes/entries/vllm-paper.md" in [key for key, _s, _t in related[:2]]
    score, shared = by_key["notes/entries/vllm-paper.md"]
    assert score > 0 and {"kv", "cache"} <= set(shared)  # as written ("cache", not "cach")
    unit = index.similar(v, "courses/db-course.md#l1-mvcc")
    assert unit[0][0] == "notes/postgres-vacuum.md" and "vacuum" in unit[0][2]
    assert index.similar(v, "no/such.md") == []


WORDS = [
    "vacuum",
    "mvcc",
    "compaction",
    "幻读",
    "并行",
    "显存",
    "缓存",
    "kv",
    "cache",
    "value",
    "return",
    "decoding",
    "tokens",
    "模型",
    "postgresql",
    "lsm",
    "训练",
    "memory",
]


def test_a_small_limit_is_the_top_of_a_large_one(open_vault, vault: Path) -> None:
    """whoosh's matcher-replacement shortcut dropped top hits of nested queries."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from studykb.search import index
    from studykb.search.query import SearchOptions, search

    v = open_vault(vault)
    index.sync(v, quiet=True)
    word = st.sampled_from(WORDS)
    group = st.lists(word, min_size=1, max_size=3).map(lambda ws: "(" + " OR ".join(ws) + ")")
    part = st.one_of(word, group, word.map(lambda w: f"title:{w}"))
    query = st.lists(part, min_size=1, max_size=3).flatmap(
        lambda parts: st.sampled_from([" OR ", " AND "]).map(lambda op: op.join(parts))
    )

    @settings(max_examples=60, deadline=None, database=None)
    @given(query, st.integers(min_value=1, max_value=4))
    def check(text: str, limit: int) -> None:
        wide = [h.score for h in search(v, SearchOptions(text, limit=50))]
        assert [h.score for h in search(v, SearchOptions(text, limit=limit))] == wide[:limit]

    check()


def test_long_lived_process_never_sees_old_versions(open_vault, vault: Path) -> None:
    """One process (the language server, a watch answering commands) syncing and searching
    after each of several edits: each edit adds a small segment and every third commit
    merges them, so a searcher reusing old segment readers would find an edited note in
    its old version, or twice."""
    from studykb.search import index
    from studykb.search.query import SearchOptions, search

    v = open_vault(vault)
    index.sync(v, quiet=True)
    note = vault / "notes" / "value-semantics.md"
    original = note.read_text(encoding="utf-8")
    for n in range(7):
        note.write_text(original + f"\nwordmark{n}\n", encoding="utf-8")
        v.refresh()
        index.sync(v, quiet=True)
        now = [h.key for h in search(v, SearchOptions(f"wordmark{n}"))]
        before = [h.key for h in search(v, SearchOptions(f"wordmark{n - 1}"))] if n else []
        assert now == ["notes/value-semantics.md"], (n, now)
        assert before == [], (n, before)
        assert len(search(v, SearchOptions("", types=("note",), limit=100))) == len(
            [d for d in v.documents().values() if d.type == "note"]
        )


def test_searcher_after_an_edit_keeps_unchanged_segments_and_answers_alike(
    open_vault, vault: Path
) -> None:
    """After an incremental sync the next query reuses the readers of the segments the
    commit left alone; its answers equal those of a searcher opened afresh."""
    from studykb.search import index, store
    from studykb.search.query import SearchOptions, search
    from studykb.search.state import index_dir

    v = open_vault(vault)
    index.sync(v, quiet=True)
    folder = str(index_dir(v))
    notes = [vault / "notes" / "value-semantics.md", vault / "notes" / "gpu-memory.md"]
    originals = [p.read_text(encoding="utf-8") for p in notes]
    queries = [SearchOptions(q, limit=50) for q in ["wordmark*", "显存", "vacuum", "mvcc OR 幻读"]]
    queries.append(SearchOptions("", types=("note",), limit=100))

    def answers() -> list[list[tuple[str, float]]]:
        return [[(h.key, round(h.score, 6)) for h in search(v, q)] for q in queries]

    reused = 0
    for n in range(6):
        path = notes[n % 2]
        path.write_text(originals[n % 2] + f"\nwordmark{n}\n", encoding="utf-8")
        search(v, SearchOptions("vacuum"))  # a searcher open before the edit, as in watch
        before = {id(r) for r, _ in store.searchers()[folder].reader().leaf_readers()}
        v.refresh()
        index.sync(v, quiet=True)
        kept = answers()
        after = {id(r) for r, _ in store.searchers()[folder].reader().leaf_readers()}
        reused += len(before & after)
        index.close(v)
        assert kept == answers(), n  # the same queries on a searcher opened afresh
        assert sorted(k for k, _s in kept[0]) == sorted(
            p.relative_to(vault).as_posix() for p in notes[: min(n + 1, 2)]
        )
        now = [h.key for h in search(v, SearchOptions(f"wordmark{n}"))]
        assert now == [path.relative_to(vault).as_posix()]
    assert reused > 0


def test_kept_signatures_are_what_the_index_holds(open_vault, vault: Path, monkeypatch) -> None:
    """The files' signatures a generation is kept with (a whole map, or the files changed
    since one) are the ones its stored fields hold, edit after edit, a removal and a map
    written whole again included."""
    from studykb.search import index
    from studykb.search import state as index_state
    from studykb.search.records import held_in
    from studykb.search.store import open_dir

    monkeypatch.setattr(index_state, "HELD_CHANGES_MAX", 2)
    v = open_vault(vault)
    index.sync(v, quiet=True)
    folder = index_state.index_dir(v)
    notes = sorted((vault / "notes").glob("*.md"))
    steps = [(notes[0], "edit"), (notes[1], "edit"), (notes[0], "edit"), (notes[2], "remove")]
    steps += [(notes[3], "edit"), (vault / "notes" / "fresh-note.md", "add")]
    wholes = 0
    for n, (path, action) in enumerate(steps):
        if action == "remove":
            path.unlink()
        else:
            before = path.read_text(encoding="utf-8") if path.exists() else "# Fresh\n"
            path.write_text(before + f"\nkeptword{n}\n", encoding="utf-8")
        v.refresh()
        assert index.sync(v, quiet=True).paths, n
        generation = index_state.latest_generation(folder)
        spec = index_state.SearchIndex(folder)
        value = open_vault(vault).structures.current(spec)  # as the next process reads it
        assert value is not None and spec.names_index(value)
        assert value.generation == generation
        wholes += value.held == value.ident
        v.cache._memo.clear()
        assert index_state.read_held(v, value) == held_in(open_dir(folder).reader())
    assert 0 < wholes < len(steps)  # both ways of keeping them were used


@pytest.mark.slow  # seconds: the bundled vault built in worker interpreters
def test_a_build_in_worker_interpreters_answers_as_one_in_this_process(
    run, bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full build above PARALLEL_MIN files (segments written by worker interpreters)
    gives the same hits, in the same order, with the same scores as the build in this
    process (the shared bundled vault's: its files are far fewer than PARALLEL_MIN)."""
    from conftest import REPO
    from studykb.search import sync

    assert len(list(bundled.rglob("*.md"))) < sync.PARALLEL_MIN  # built in this process
    parallel = tmp_path / "parallel"
    for folder in ("notes", "courses"):
        shutil.copytree(REPO / folder, parallel / folder)
    shutil.copy(REPO / "studykb.toml", parallel / "studykb.toml")
    with monkeypatch.context() as patch:  # this build only (not the shared vault's)
        patch.setattr(sync, "PARALLEL_MIN", 10)
        patch.setattr(sync.os, "cpu_count", lambda: 2)
        assert run("build", vault=parallel).exit_code == 0
    assert len(list((parallel / ".studykb").rglob("*.seg"))) >= 2  # worker segments
    for query in ("attention", "KV cache", "张量并行", "FSDP2 sharding", "调度"):
        answers = [
            json.loads(run("search", query, "--json", vault=vault).stdout)["hits"]
            for vault in (bundled, parallel)
        ]
        assert answers[0] == answers[1] and answers[0], query


def _index_contents(v) -> tuple[dict[tuple[str, object], list[str]], dict[str, dict]]:  # type: ignore[no-untyped-def]
    """(field, term) -> the keys of the live documents holding it; key -> stored fields."""
    from studykb.search.state import index_dir
    from studykb.search.store import open_dir

    with open_dir(index_dir(v)).reader() as reader:
        stored = {f["key"]: f for f in reader.all_stored_fields()}
        terms: dict[tuple[str, object], list[str]] = {}
        for field, term in reader.all_terms():
            keys = sorted(
                reader.stored_fields(d)["key"] for d in reader.postings(field, term).all_ids()
            )
            if keys:
                terms[(field, term)] = keys
    return terms, stored


@pytest.mark.parametrize("refold_max", [0, 8])
def test_edits_leave_what_a_full_build_holds(
    open_vault, vault: Path, tmp_path: Path, monkeypatch, refold_max: int
) -> None:
    """Each edit adds a small segment, and small segments are folded together: their
    few files indexed again from the state, or (with more, here ``refold_max`` 0) their
    postings copied. After edits, an addition and a removal, the index holds, term by
    term, what a full build of the same files holds, in a few segments."""
    from studykb.search import index, segments
    from studykb.search.state import index_dir
    from studykb.search.store import open_dir

    monkeypatch.setattr(segments, "REFOLD_MAX", refold_max)
    v = open_vault(vault)
    index.sync(v, quiet=True)
    notes = sorted((vault / "notes").glob("*.md"))[:3]
    for n in range(8):
        with open(notes[n % 3], "a", encoding="utf-8") as fh:
            fh.write(f"\nfoldmark{n} 折叠{n}\n")
        if n == 3:
            (vault / "notes" / "added.md").write_text(
                "# Added\n\nfoldmark added\n", encoding="utf-8"
            )
        if n == 5:
            notes[2].unlink()
            notes = notes[:2]
        v.refresh()
        index.sync(v, quiet=True)
        segments = open_dir(index_dir(v))._segments()  # noqa: SLF001
        assert len(segments) <= 3, n  # folded, not piling up
    twin = tmp_path / "twin"
    shutil.copytree(vault, twin, ignore=shutil.ignore_patterns(".studykb"))
    w = open_vault(twin)
    index.sync(w, quiet=True)
    assert _index_contents(v) == _index_contents(w)


def test_an_edit_compares_only_what_the_journal_names(open_vault, vault: Path, monkeypatch) -> None:
    """After one edit, the sync reads the signatures of the files the state's journal
    names (and of those in a course), not of every file."""
    from studykb.search import index
    from studykb.vault import Vault

    v = open_vault(vault)
    index.sync(v, quiet=True)
    asked: list[object] = []
    original = Vault.file_hashes

    def spy(self, paths=None):  # type: ignore[no-untyped-def]
        asked.append(None if paths is None else set(paths))
        return original(self, paths)

    monkeypatch.setattr(Vault, "file_hashes", spy)
    note = vault / "notes" / "gpu-memory.md"
    note.write_text(note.read_text(encoding="utf-8") + "\njournalmark\n", encoding="utf-8")
    v.refresh()
    assert index.sync(v, quiet=True).paths == ["notes/gpu-memory.md"]
    assert asked and None not in asked
    assert asked[0] == {
        "notes/gpu-memory.md",
        "notes/lsm-compaction.md",  # in a course: compared every time
        "notes/postgres-vacuum.md",
    }


@pytest.mark.parametrize("change", ["course renamed", "journal too short", "state made anew"])
def test_what_the_journal_cannot_say_is_compared_whole(
    open_vault, vault: Path, tmp_path: Path, monkeypatch, change: str
) -> None:
    """A note's course can change without the note (its course renamed); a journal can
    be too short for the last sync, or belong to another state: the index still ends
    as a full build of the same files."""
    import shutil as sh

    from studykb.search import index
    from studykb.vault.state import meta

    v = open_vault(vault)
    index.sync(v, quiet=True)
    course = vault / "courses" / "db-course.md"
    if change == "course renamed":  # its notes, unchanged, name a course no longer there
        course.write_text(
            course.read_text(encoding="utf-8").replace("id: db-course", "id: storage-course"),
            encoding="utf-8",
        )
        course.rename(course.with_name("storage-course.md"))
    elif change == "journal too short":
        monkeypatch.setattr(meta, "JOURNAL_KEPT", 1)
        for name in ("gpu-memory", "data-parallel", "mysql-isolation"):  # not synced
            note = vault / "notes" / f"{name}.md"
            note.write_text(note.read_text(encoding="utf-8") + "\nunseen\n", encoding="utf-8")
            v.refresh()
    else:
        v.close()
        for name in ("state.sqlite", "state.sqlite-wal", "state.sqlite-shm"):
            (vault / ".studykb" / name).unlink(missing_ok=True)
        v = open_vault(vault)
    v.refresh()
    index.sync(v, quiet=True)
    twin = tmp_path / "twin"
    sh.copytree(vault, twin, ignore=sh.ignore_patterns(".studykb"))
    w = open_vault(twin)
    index.sync(w, quiet=True)
    assert _index_contents(v) == _index_contents(w)


def test_a_preloaded_topic_table_is_taken_only_while_the_topics_are_those(
    open_vault, vault: Path
) -> None:
    """A fresh search loads the topic table the index was made with while its refresh
    runs; it is used only if the refresh left the topic documents as they were."""
    from studykb.vault.topics import TOPICS

    v = open_vault(vault)
    before = v.topics()
    v.close()
    v = open_vault(vault, refresh=False)
    v.preload_topics(before.digest)
    preloaded = v.structures.held(TOPICS)
    assert preloaded is not None
    v.refresh()
    assert v.topics() is preloaded  # nothing changed: taken as loaded
    topic = vault / "notes" / "topics" / "kv-cache.md"
    topic.write_text(
        topic.read_text(encoding="utf-8").replace("aliases: [", "aliases: [缓存键值, "),
        encoding="utf-8",
    )
    v.close()
    v = open_vault(vault, refresh=False)
    v.preload_topics(before.digest)
    v.refresh()
    after = v.topics()
    assert after.digest != before.digest
    assert "缓存键值" in after.names


def test_a_search_waits_only_briefly_for_another_process(run, vault: Path, monkeypatch) -> None:
    """Another process holds the index lock (a build in a terminal): a search that wants
    to write tries once, with the short query wait, and answers from the index as it is
    (the real processes are in test_search_concurrency.py)."""
    from whoosh.writing import LockError

    from studykb.search import sync

    assert run("build", vault=vault).exit_code == 0
    (vault / "notes" / "zz-new.md").write_text("# Zeppelin\n\nzeppelin\n", encoding="utf-8")
    waits: list[float] = []

    def locked(_ix: object, wait: float) -> object:
        waits.append(wait)
        raise LockError("held by another process")

    monkeypatch.setattr(sync, "_writer", locked)
    result = run("search", "显存", "--json", vault=vault)
    assert result.exit_code == 0 and json.loads(result.stdout)["hits"]
    assert waits == [sync.QUERY_LOCK_WAIT] and sync.QUERY_LOCK_WAIT <= 1.0
    assert "being updated by another studykb process" in result.stderr


def test_topic_names_follow_an_edit_of_the_topic(run, make_vault) -> None:
    """The names queries are read against are a derived structure of the topic table:
    a name added to a topic is searched for at once, in the next process."""
    root = make_vault(
        {
            "notes/fusion.md": "---\ntype: topic\nid: kernel-fusion\naliases: [算子融合]\n---\n"
            "# Kernel fusion\n",
            "notes/n.md": "# N\n\nThe 内核合并 trick.\n",
        }
    )
    code, data = run_json(run, "search", "算子融合", vault=root)
    assert any(a.lower() == "kernel fusion" for a in data["also"]), data["also"]
    code, data = run_json(run, "search", "内核合并", vault=root)
    assert data["also"] == []
    (root / "notes/fusion.md").write_text(
        "---\ntype: topic\nid: kernel-fusion\naliases: [算子融合, 内核合并]\n---\n"
        "# Kernel fusion\n",
        encoding="utf-8",
    )
    code, data = run_json(run, "search", "内核合并", vault=root)
    assert any(a.lower() == "kernel fusion" for a in data["also"]), data["also"]
