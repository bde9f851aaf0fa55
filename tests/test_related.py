"""Related documents: known answers on a fixture vault, reasons in words, the JSON contract."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES, run_json
from studykb.related.rank import RelatedOptions, Weights, related


@pytest.fixture
def rv(tmp_path: Path) -> Path:
    """A copy of tests/fixtures/related_vault."""
    dest = tmp_path / "related_vault"
    shutil.copytree(FIXTURES / "related_vault", dest)
    return dest


def ranked(open_vault: Callable, root: Path, key: str, **options: object) -> list:
    vault = open_vault(root)
    return related(vault, vault.document(key), RelatedOptions(**options))  # type: ignore[arg-type]


def ids(found: list) -> list[str]:
    return [r.id for r in found]


def test_hand_picked_comes_first_and_says_so(rv: Path, open_vault: Callable) -> None:
    found = ranked(open_vault, rv, "notes/kv-notes.md")
    assert found[0].id == "serving-notes"
    assert found[0].reasons[0] == "hand-picked"
    assert found[0].score > 1  # hand-picked documents score 1 plus their blend
    assert all(r.score <= 1 for r in found[1:])


def test_shared_readings_rarest_first_same_course_and_topics(
    rv: Path, open_vault: Callable
) -> None:
    found = ranked(open_vault, rv, "notes/serving-notes.md")
    first = found[0]
    assert first.id == "kv-notes"
    reasons = "; ".join(first.reasons)
    assert "same course: LLM Serving Course" in reasons
    assert first.features["topics"] > 0  # both cover KV Cache (a weaker reason, not shown)
    assert "links here" in reasons  # kv-notes hand-picks serving-notes
    kv = ranked(open_vault, rv, "notes/kv-notes.md")[0]
    assert "shares 2 readings: Rare reading on cache eviction, Common reading on GPUs" in kv.reasons


def test_rare_shared_reading_outweighs_common_one(rv: Path, open_vault: Callable) -> None:
    """Resource allocation: a reading two notes cite counts more than one all notes cite."""
    found = ranked(open_vault, rv, "notes/serving-notes.md")
    refs = {r.id: r.features.get("refs", 0) for r in found}
    assert refs["kv-notes"] > refs["ddp-notes"] > 0  # the rare reading and the common one, or not


def test_links_either_way(rv: Path, open_vault: Callable) -> None:
    to_ddp = ranked(open_vault, rv, "notes/ddp-notes.md")
    fsdp = next(r for r in to_ddp if r.id == "fsdp-notes")
    assert "needs this first" in fsdp.reasons  # fsdp-notes requires ddp-notes
    from_fsdp = ranked(open_vault, rv, "notes/fsdp-notes.md")
    ddp = next(r for r in from_fsdp if r.id == "ddp-notes")
    assert "a prerequisite of this" in ddp.reasons


def test_course_and_its_notes(rv: Path, open_vault: Callable) -> None:
    found = ranked(open_vault, rv, "courses/serving.md")
    assert {"kv-notes", "serving-notes"} <= set(ids(found)[:3])
    kv = next(r for r in found if r.id == "kv-notes")
    assert "part of this course" in kv.reasons
    assert all("#" not in r.key for r in found)  # units are not ranked by default


def test_type_filter_and_limit(rv: Path, open_vault: Callable) -> None:
    found = ranked(open_vault, rv, "notes/kv-notes.md", types=("entry",), limit=3)
    assert len(found) == 3
    assert {r.type for r in found} == {"entry"}
    assert "serving-notes" not in ids(found)  # hand-picked, but not of the asked type
    topics = ranked(open_vault, rv, "notes/kv-notes.md", types=("topic",))
    assert {"kv-cache", "pagedattention"} <= set(ids(topics))
    assert "a topic this covers" in topics[0].reasons


def test_text_similarity_alone_names_shared_words(rv: Path, open_vault: Callable) -> None:
    only_text = Weights(**{**{name: 0.0 for name in Weights().by_name()}, "text": 1.0})
    found = ranked(open_vault, rv, "notes/ddp-notes.md", weights=only_text)
    assert found[0].id == "ddp-tutorial"
    words = next(r for r in found[0].reasons if r.startswith("similar text: "))
    assert "ddp" in words or "gradients" in words


def test_no_text_and_deterministic(rv: Path, open_vault: Callable) -> None:
    a = ranked(open_vault, rv, "notes/kv-notes.md", text="none")
    b = ranked(open_vault, rv, "notes/kv-notes.md", text="none")
    assert a == b
    assert all("text" not in r.features for r in a)


def test_search_index_text_gives_the_same_shape(rv: Path, open_vault: Callable) -> None:
    pytest.importorskip("whoosh")
    found = ranked(open_vault, rv, "notes/ddp-notes.md", text="index")
    assert found and found[0].id in {"ddp-tutorial", "fsdp-notes"}


def test_diversity_keeps_near_duplicates_apart(make_vault: Callable, open_vault: Callable) -> None:
    body = "Ring all-reduce bandwidth latency buckets overlap gradient compression.\n"
    files = {
        "notes/hub.md": f"---\ntags: [comm]\n---\n# Hub\n\n{body}",
        "notes/dup-a.md": f"---\ntags: [comm]\n---\n# Dup A\n\n{body}{body}",
        "notes/dup-b.md": f"---\ntags: [comm]\n---\n# Dup B\n\n{body}{body}",
        "notes/other.md": "---\ntags: [comm]\n---\n# Other\n\nRing all-reduce over NVLink.\n",
        "notes/filler.md": "# Filler\n\nUnrelated words about cooking pasta.\n",
    }
    root = make_vault(files)
    plain = ranked(open_vault, root, "notes/hub.md", diversity=0.0, limit=2)
    assert set(ids(plain)) == {"dup-a", "dup-b"}
    diverse = ranked(open_vault, root, "notes/hub.md", diversity=0.6, limit=2)
    assert ids(diverse)[1] == "other"


def test_a_link_is_in_the_link_components_both_ways_and_leaves_with_the_link(
    rv: Path, open_vault: Callable
) -> None:
    """The engine's link components follow the references: a -> b is link_out of a and
    link_in of b, and once the link (and the prerequisite) is gone, neither holds it."""
    from studykb.related.engine import for_vault

    vault = open_vault(rv)
    engine = for_vault(vault)
    a, b = engine.ix.number["notes/fsdp-notes.md"], engine.ix.number["notes/ddp-notes.md"]
    parts = engine.components(np.array([a, b]), text=False)
    assert parts["link_out"][0, b] == 1.0 and parts["link_in"][1, a] == 1.0
    path = rv / "notes/fsdp-notes.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("requires: [ddp-notes]\n", "").replace("[[ddp-notes]]", "DDP"),
        encoding="utf-8",
    )
    engine = for_vault(open_vault(rv))
    parts = engine.components(np.array([a, b]), text=False)
    assert parts["link_out"][0, b] == 0.0 and parts["link_in"][1, a] == 0.0


def test_topics_are_named_by_id_title_or_alias_and_ids_win(rv: Path, open_vault: Callable) -> None:
    table = open_vault(rv).topics()
    for key, did in table.ids.items():
        assert table.key(did) == key  # an id always names its own topic
        for name in table.texts[key].split("\n"):
            assert table.key(name) is not None


def test_index_cache_survives_a_new_process(rv: Path, open_vault: Callable) -> None:
    import sqlite3

    from studykb.related.engine import ENGINE
    from studykb.related.features import FEATURES
    from studykb.related.vectorcache import VECTORS

    first = ranked(open_vault, rv, "notes/kv-notes.md")
    with sqlite3.connect(rv / ".studykb" / "cache.sqlite") as db:
        names = {name for (name,) in db.execute("SELECT name FROM entries")}
    assert {FEATURES.name, VECTORS.name} <= names
    assert ENGINE.name not in names  # one document is ranked from the rows of its inputs
    assert ranked(open_vault, rv, "notes/kv-notes.md") == first  # a new vault: from the cache


def test_an_edit_is_seen(rv: Path, open_vault: Callable) -> None:
    before = ids(ranked(open_vault, rv, "notes/victim.md"))
    assert "ddp-notes" in before
    note = rv / "notes" / "victim.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("tags: [evil]", "tags: [ddp]"), encoding="utf-8"
    )
    after = ranked(open_vault, rv, "notes/victim.md")
    ddp = next(r for r in after if r.id == "ddp-notes")
    assert any("Distributed Data Parallel" in reason for reason in ddp.reasons)


# -- the command ------------------------------------------------------------------------------
def test_related_json_contract(rv: Path, run: Callable) -> None:
    code, data = run_json(run, "related", "kv-notes", "--limit", "4", vault=rv)
    assert code == 0
    assert data["id"] == "kv-notes"
    assert len(data["related"]) == 4
    for item in data["related"]:
        assert {"id", "path", "title", "score", "reasons"} <= set(item)
        assert isinstance(item["reasons"], list) and all(
            isinstance(r, str) for r in item["reasons"]
        )


def test_related_text_output_and_errors(rv: Path, run: Callable) -> None:
    result = run("related", "serving-notes", vault=rv)
    assert result.exit_code == 0
    assert "My KV cache notes" in result.stdout and "same course" in result.stdout
    missing = run("related", "no-such-note", vault=rv)
    assert missing.exit_code == 1 and "No document matches" in missing.stderr
    bad = run("related", "kv-notes", "--type", "nonsense", vault=rv)
    assert bad.exit_code == 2


def test_nothing_related_exits_1(make_vault: Callable, run: Callable) -> None:
    root = make_vault(
        {
            "notes/alone.md": "# Alone\n\nNothing shared.\n",
            "notes/other.md": "# Other\n\nCompletely different.\n",
        }
    )
    code, data = run_json(run, "related", "alone", vault=root)
    assert code == 1 and data["related"] == []


@pytest.mark.parametrize("command", ["related", "sidebar", "topics", "topic"])
def test_every_command_has_an_example(run: Callable, command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.stdout and "studykb " + command in result.stdout


# -- the bundled vault ---------------------------------------------------------------------------


def test_cs336_sidebar_names_cs336_and_training_material(bundled: Path, run: Callable) -> None:
    code, data = run_json(run, "sidebar", "notes/cs336-summary.md", vault=bundled)
    assert code == 0
    related_ids = [r["id"] for r in data["related"]]
    assert related_ids[:6] == [
        "deepinfer-part1",
        "ai-infra-seminars",
        "deepinfer-part2",
        "sjtu-hpc-notes",
        "cs189-materials",
        "cuda-guide-zh",
    ]
    assert {"cs336", "cs336-course-page"} <= set(related_ids)
    training = {
        "pytorch-distributed-overview",
        "pytorch-fsdp2-tutorial",
        "pytorch-ddp-video-tutorials",
    }
    assert training & set(related_ids)
    # a summary that covers nothing and lists no requires is built on the topics it is
    # tagged with: "Before this" names them in the order written, as `before` does
    assert [n["id"] for n in data["before"]][:3] == ["bpe-tokenization", "embeddings", "attention"]


# -- issue 15: distinctive reasons, honest order, siblings, incremental caches ----------------
FILLER_ZH = "这是我的笔记内容，记录一下学习动态。"
FILLER_EN = "These notes are a page of reading, part of the course this week."


def _filler_vault(make_vault: Callable) -> Path:
    files = {
        f"notes/n{k}.md": f"# Note {k}\n\n{FILLER_ZH}\n{FILLER_EN}\nWords {k} of its own "
        f"subject number{k}.\n"
        for k in range(12)
    }
    files["notes/a.md"] = (
        f"# Ring all-reduce\n\n{FILLER_ZH}\n{FILLER_EN}\nRing allreduce "
        "bandwidth 环形 规约 带宽 bucketing.\n"
    )
    files["notes/b.md"] = (
        f"# Ring allreduce buckets\n\n{FILLER_ZH}\n{FILLER_EN}\nRing "
        "allreduce bucketing 环形 规约 带宽.\n"
    )
    return make_vault(files)


def test_text_reasons_name_subjects_not_filler(make_vault: Callable, open_vault: Callable) -> None:
    from studykb.text.terms import is_filler

    root = _filler_vault(make_vault)
    found = ranked(open_vault, root, "notes/a.md")
    assert found[0].id == "b"
    said = [r for r in found[0].reasons if r.startswith("similar text: ")]
    assert said, found[0].reasons
    words = said[0].removeprefix("similar text: ").split(", ")
    assert "allreduce" in words or "ring" in words
    for other in found:
        for reason in other.reasons:
            if reason.startswith("similar text: "):
                for word in reason.removeprefix("similar text: ").split(", "):
                    assert not is_filler(word), (other.id, reason)
                    assert not any(ch.isdigit() for ch in word), (other.id, reason)


def test_a_list_of_everything_is_no_evidence(make_vault: Callable, open_vault: Callable) -> None:
    from studykb.related.feature_index import COCITE_MAX

    entries = {
        f"notes/entries/e{k}.md": f"---\ntype: entry\n---\n# Entry {k}\n\nText {k}.\n"
        for k in range(COCITE_MAX + 5)
    }
    everything = ", ".join(f"e{k}" for k in range(COCITE_MAX + 5))
    root = make_vault(
        {
            **entries,
            "notes/lists/all.md": f"---\ntype: list\nitems: [{everything}]\n---\n# Everything\n",
            "notes/lists/pair.md": "---\ntype: list\nitems: [e1, e2]\n---\n# Pair\n",
        }
    )
    found = {r.id: r for r in ranked(open_vault, root, "notes/entries/e1.md", text="none")}
    assert "cited together in: Pair" in found["e2"].reasons
    assert "e3" not in found  # only the list of everything cites e1 and e3 together
    assert all("Everything" not in reason for r in found.values() for reason in r.reasons)


def test_scores_never_increase_down_the_list_and_ranks_are_given(rv: Path, run: Callable) -> None:
    for doc in ("kv-notes", "serving-notes", "ddp-notes", "serving"):
        code, data = run_json(run, "related", doc, vault=rv)
        assert code == 0
        scores = [r["score"] for r in data["related"]]
        assert scores == sorted(scores, reverse=True), (doc, scores)
        assert [r["rank"] for r in data["related"]] == list(range(1, len(scores) + 1))
        assert all(0 <= r["relevance"] <= 1 + 1e-9 for r in data["related"])


def test_a_course_finds_its_siblings(make_vault: Callable, open_vault: Callable) -> None:
    topics = {
        f"notes/topics/{t}.md": f"# {t.upper()}\n\nAbout {t}.\n" for t in ("simd", "cuda", "cache")
    }
    course = (
        "---\ntitle: {title}\nunits:\n  - {{id: u1, title: One, tags: [{a}]}}\n"
        "  - {{id: u2, title: Two, tags: [{b}]}}\n---\n# {title}\n\nLectures.\n"
    )
    root = make_vault(
        {
            **topics,
            "courses/par.md": course.format(title="Parallel computing", a="simd", b="cuda"),
            "courses/gpu.md": course.format(title="GPU programming", a="cuda", b="cache"),
            "notes/digest.md": "---\ntags: [simd]\n---\n# Backends digest\n\n"
            "Lectures and backends.\n",
        }
    )
    found = ranked(open_vault, root, "courses/par.md")
    assert found[0].id == "gpu"
    assert any(reason.startswith("another course, also on CUDA") for reason in found[0].reasons)


def _cache_sizes(root: Path) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(root / ".studykb" / "cache.sqlite") as db:
        return {name: size for name, size in db.execute("SELECT name, length(value) FROM entries")}


def _many_notes(make_vault: Callable, n: int = 80) -> Path:
    """A vault big enough that one edit stays within the text vectors' drift bound."""
    words = ["ring", "allreduce", "kv", "cache", "eviction", "paged", "tensor", "pipeline"]
    files = {
        f"notes/n{k:03d}.md": f"# Note {k}\n\n{words[k % 8]} {words[(k * 3) % 8]} "
        f"{words[(k * 5) % 8]} notes on [[n{(k + 1) % n:03d}]].\n"
        for k in range(n)
    }
    return make_vault(files)


def test_an_edit_updates_the_caches_without_writing_them_whole(
    make_vault: Callable, open_vault: Callable
) -> None:
    from studykb.related.features import FEATURES
    from studykb.related.vectorcache import VECTORS

    root = _many_notes(make_vault)
    ranked(open_vault, root, "notes/n000.md")
    before = _cache_sizes(root)
    note = root / "notes" / "n010.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "\nEviction of paged blocks, [[n000]].\n",
        encoding="utf-8",
    )
    vault = open_vault(root)
    after_edit = related(vault, vault.document("notes/n000.md"), RelatedOptions(limit=80))
    edited = next(r for r in after_edit if r.id == "n010")
    assert "links here" in edited.reasons
    sizes = _cache_sizes(root)
    # the big entries were not written again: the next process updates the written
    # values for the files changed since (the state's journal), as this one did
    assert sizes[FEATURES.name] == before[FEATURES.name]
    assert sizes[VECTORS.name] == before[VECTORS.name]
    again = open_vault(root)
    assert related(again, again.document("notes/n000.md"), RelatedOptions(limit=80)) == after_edit


def test_past_the_drift_bound_the_vectors_are_built_again(
    make_vault: Callable, open_vault: Callable
) -> None:
    from studykb.related.vectorcache import VECTORS

    root = _many_notes(make_vault)
    ranked(open_vault, root, "notes/n000.md")
    before = _cache_sizes(root)
    for k in range(1, 6):  # 5 of 80 documents: past 2 %
        note = root / "notes" / f"n{k:03d}.md"
        note.write_text(
            note.read_text(encoding="utf-8") + "\nMore about tensor.\n", encoding="utf-8"
        )
    ranked(open_vault, root, "notes/n000.md")
    assert _cache_sizes(root)[VECTORS.name] != before[VECTORS.name]


def test_incremental_features_equal_a_full_build(rv: Path, open_vault: Callable) -> None:
    from studykb.related import features

    ranked(open_vault, rv, "notes/kv-notes.md")
    for name, text in (
        ("notes/fsdp-notes.md", "\nSee [[ddp-notes]] and [[kv-notes]].\n"),
        ("courses/serving.md", "\nSee [[paged-paper]].\n"),
    ):
        path = rv / name
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    vault = open_vault(rv)
    updated = vault.derived(features.FEATURES)
    full = features.from_vault(vault, updated.fingerprint)
    for n in range(len(full.keys)):
        assert (updated.out[n], updated.inc[n], updated.topics[n], updated.picked[n]) == (
            full.out[n],
            full.inc[n],
            full.topics[n],
            full.picked[n],
        ), full.keys[n]
        assert updated.tags(n) == full.tags(n) and updated.course[n] == full.course[n]
    # and the engine made from each scores every pair alike
    from studykb.related.engine import Engine

    rows = np.arange(len(full.keys))
    mine, theirs = Engine(updated, None), Engine(full, None)
    for name, m in mine.components(rows, text=False).items():
        other = theirs.components(rows, text=False)[name]
        assert np.allclose(m.toarray(), other.toarray()), name


def test_renaming_a_document_builds_the_features_again(rv: Path, open_vault: Callable) -> None:
    """Other documents' references may resolve differently: no update, a full build."""
    from studykb.related import features

    ranked(open_vault, rv, "notes/kv-notes.md")
    path = rv / "notes" / "entries" / "rare-reading.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("title:", "aliases: [rare]\ntitle:", 1),
        encoding="utf-8",
    )
    from studykb.vault.derived import code_version

    vault = open_vault(rv)
    data = vault.cache.get(features.FEATURES.name, code_version(features.FEATURES), keep=False)
    ix = features.FEATURES.load(data["value"])
    assert features.update(ix, vault, vault.fingerprint()) is None


def test_the_blend_is_the_weighted_mean_of_the_evidence_shown(
    rv: Path, open_vault: Callable
) -> None:
    """Every candidate's relevance is its components' evidence, weighted, over the total
    weight: whatever else is in its block (the engine adds them in one fixed order)."""
    from studykb.related.engine import ALONGSIDE, ALONGSIDE_SHARE

    vault = open_vault(rv)
    for weights in (Weights(), Weights(text=0.0, tags=3.0)):
        total = weights.total()
        by_name = weights.by_name()
        for key in ("notes/kv-notes.md", "notes/ddp-notes.md", "courses/serving.md"):
            found = related(vault, vault.document(key), RelatedOptions(weights=weights, limit=20))
            assert found
            for r in found:
                # a component counted only alongside others adds at most its share
                side = sum(by_name.get(k, 0.0) * v for k, v in r.features.items() if k in ALONGSIDE)
                other = sum(
                    by_name.get(k, 0.0) * v for k, v in r.features.items() if k not in ALONGSIDE
                )
                capped = min(side, other * ALONGSIDE_SHARE / (1 - ALONGSIDE_SHARE))
                blend = (other + capped) / total
                assert abs(r.relevance - blend) < 0.002, (key, r.id)


@pytest.mark.parametrize(
    "text",
    [
        "The Attention is all you need: attention, ATTENTION and Attentions.",
        "张量并行把矩阵乘法切到多张卡上；数据并行复制模型。Tensor parallel 与 FSDP2 的区别",
        "café Café naïve 3.5.1 x_y __init__ the of and",
        "PostgreSQL的VACUUM和自动清理，连续批处理（continuous batching）与分页注意力",
        "",
    ],
)
def test_term_vectors_count_the_terms_the_search_analysis_reads(text: str) -> None:
    """The related documents' fast path counts exactly the terms ``tokens`` gives, with the
    first written form of each (lowercased when ASCII), in the order they first occur."""
    from collections import Counter

    from studykb.text.analysis import Analyser

    analyser = Analyser()
    term_counts, tokens = analyser.term_counts, analyser.tokens
    counts: Counter[str] = Counter()
    written: dict[str, str] = {}
    for t in tokens(text):
        counts[t.text] += 1
        written.setdefault(t.text, t.original.lower() if t.original.isascii() else t.original)
    got_counts, got_written = term_counts(text)
    assert list(got_counts.items()) == list(counts.items())
    assert list(got_written.items()) == list(written.items())
    assert counts or not text
