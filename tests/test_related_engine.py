"""The related-documents engine: one list everywhere, and each signal with its reason.

``related``, every sidebar format, the web page (``serve``) and the static site
(``site``) must show the same related documents for every document; a block of
documents scored at once must give each the list it gets alone; an unlinked mention of a
title is found and said; filler never appears among the words given as a reason.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from studykb.outputs import sidebar as fmt
from studykb.related.rank import Ranker, RelatedOptions, related
from studykb.session import Session

SECTION = re.compile(
    r'<section (?:aria-labelledby="sb-related"|class="studykb-related")>(.*?)</section>', re.S
)
LINK = re.compile(r"<a [^>]*>(.*?)</a>", re.S)


@pytest.fixture
def rv(tmp_path: Path) -> Path:
    dest = tmp_path / "related_vault"
    shutil.copytree(FIXTURES / "related_vault", dest)
    return dest


def page_titles(page: str) -> list[str]:
    """The titles of a document page's Related section, in order."""
    found = SECTION.search(page)
    if found is None:
        return []
    return [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in LINK.findall(found[1])]


def md_targets(markdown: str) -> list[str]:
    """The link targets of a Markdown sidebar's Related list, without their extension."""
    if "## Related" not in markdown:
        return []
    part = markdown.split("## Related", 1)[1].split("\n## ", 1)[0]
    return [t.rsplit(".", 1)[0] for t in re.findall(r"^- \[.*\]\(([^)]*)\)", part, re.M)]


def html_targets(fragment: str) -> list[str]:
    found = SECTION.search(fragment)
    hrefs = re.findall(r'href="([^"]*)"', found[1]) if found else []
    return [html.unescape(h).rsplit(".", 1)[0] for h in hrefs]


def test_related_sidebars_serve_and_site_give_the_same_lists(
    rv: Path, run: Callable[..., Any], tmp_path: Path
) -> None:
    pytest.importorskip("jinja2")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from studykb.web.app import create_app

    kb = Session.open(rv)
    kb.refresh()
    docs = {k: d for k, d in kb.documents().items() if d.type != "unit"}
    alone = {k: [r.title for r in kb.related(d)] for k, d in docs.items()}
    assert sum(map(len, alone.values())) > 3 * len(docs)  # lists worth comparing
    found = {sb.key: sb for sb in kb.sidebars()}
    assert set(found) == set(docs)
    for key, sb in found.items():
        assert [r.title for r in sb.related] == alone[key], key
        assert [r.title for r in kb.sidebar(docs[key]).related] == alone[key], key
        assert [r["title"] for r in fmt.as_dict(sb)["related"]] == alone[key], key
        assert page_titles(fmt.to_html(sb)) == alone[key], key
        assert md_targets(fmt.to_markdown(sb)) == html_targets(fmt.to_html(sb)), key
    code = run("sidebar", "--format", "json", vault=rv)
    keyed = json.loads(code.stdout)
    for key, doc in docs.items():
        assert [r["title"] for r in keyed[doc.path]["related"]] == alone[key], key
    app = create_app(kb, refresh=False, token="test-token-0123456789")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        for key, doc in docs.items():
            page = client.get(f"/d/{doc.path[:-3]}.html")
            assert page.status_code == 200, key
            assert page_titles(page.text) == alone[key], key
    kb.close()
    out = tmp_path / "public"
    assert run("site", "-o", str(out), vault=rv).exit_code == 0
    for key, doc in docs.items():
        page = (out / "d" / f"{doc.path[:-3]}.html").read_text(encoding="utf-8")
        assert page_titles(page) == alone[key], key


def test_a_block_scores_each_document_as_it_scores_it_alone(rv: Path, open_vault: Callable) -> None:
    vault = open_vault(rv)
    ranker = Ranker.for_vault(vault)
    keys = [k for k, t in zip(ranker.ix.keys, ranker.ix.types, strict=True) if t != "unit"]
    options = RelatedOptions(limit=20)
    together = ranker.related_many(keys, options)
    for key in keys:
        assert ranker.related(key, options) == together[key], key


def test_an_unlinked_title_mention_is_found_and_said(
    make_vault: Callable, open_vault: Callable
) -> None:
    root = make_vault(
        {
            "notes/a.md": "# Paged attention\n\nBlocks of the KV cache in pages.\n",
            "notes/b.md": "# Serving\n\nWe batch requests; paged attention keeps memory low.\n",
            "notes/c.md": "# Cooking\n\nPasta with tomatoes.\n",
            "notes/d.md": "# 张量并行\n\n切分矩阵。\n",
            "notes/e.md": "# 训练\n\n大模型常用张量并行来训练。\n",
        }
    )
    vault = open_vault(root)
    b = related(vault, vault.document("notes/b.md"))
    first = b[0]
    assert first.id == "a"
    assert "mentions Paged attention" in first.reasons
    a = related(vault, vault.document("notes/a.md"))
    assert a[0].id == "b"  # named by b (a weaker signal, fitted to no weight: no reason)
    e = related(vault, vault.document("notes/e.md"))
    assert e[0].id == "d" and "mentions 张量并行" in e[0].reasons
    # a linked mention is said as the link
    (root / "notes/b.md").write_text(
        "# Serving\n\nWe batch requests; [[a|paged attention]] keeps memory low.\n",
        encoding="utf-8",
    )
    again = open_vault(root)
    linked = related(again, again.document("notes/b.md"))[0]
    assert linked.id == "a"
    assert "linked from here" in linked.reasons and not any(
        r.startswith("mentions") for r in linked.reasons
    )


def test_a_label_two_documents_link_with_names_the_target(
    make_vault: Callable, open_vault: Callable
) -> None:
    """``[[创建第一篇笔记|创建笔记]]`` written by two documents makes 创建笔记 a name of
    the target: a third document saying it without a link mentions the target; a label
    only one document uses names nothing."""
    pages = {
        "创建第一篇笔记.md": "# 创建第一篇笔记\n\n打开仓库，新建文件。\n",
        "a.md": "# 快捷键\n\n见[[创建第一篇笔记|创建笔记]]。\n",
        "b.md": "# 模板\n\n先[[创建第一篇笔记|创建笔记]]再插入模板。\n",
        "c.md": "# 日记\n\n每天创建笔记记录生活。\n",
        "d.md": "# 烹饪\n\n番茄意面。\n",
    }
    # enough other notes that one edited file is read incrementally (the drift bound)
    pages.update(_filler(60))
    root = make_vault(pages)
    vault = open_vault(root)
    c = related(vault, vault.document("c.md"))
    assert c and c[0].id == "创建第一篇笔记"
    assert "mentions 创建第一篇笔记" in c[0].reasons
    # an edit of a file holding no labelled link keeps the labels (read from the kept table)
    (root / "d.md").write_text("# 烹饪\n\n番茄意面和沙拉。\n", encoding="utf-8")
    kept = open_vault(root)
    again = related(kept, kept.document("c.md"))
    assert again[0].id == "创建第一篇笔记" and "mentions 创建第一篇笔记" in again[0].reasons
    # after an edit the label is used once: the kept mentions are found again without it
    (root / "b.md").write_text("# 模板\n\n先[[创建第一篇笔记]]再插入模板。\n", encoding="utf-8")
    once = open_vault(root)
    found = related(once, once.document("c.md"))
    assert not any(r.startswith("mentions") for f in found for r in f.reasons)


def test_labels_after_an_edit_are_the_labels_of_the_whole_vault(
    make_vault: Callable, open_vault: Callable
) -> None:
    """After each edit the labels kept with the name table (the kept links of the other
    files and the edited file's read again) are the ones counted from the whole vault:
    a label gaining a third source, a file's labelled link taken out, one put in a
    file that held none, a label used once."""
    from studykb.related.labels import Labels, label_names
    from studykb.related.vectorcache import VECTORS

    pages = {
        "target.md": "# 创建第一篇笔记\n\n打开仓库。\n",
        "a.md": "# A\n\n见[[target|创建笔记]]。\n",
        "b.md": "# B\n\n先[[target|创建笔记]]再[[a|快捷键]]。\n",
        "c.md": "# C\n\n每天写。\n",
        "d.md": "# D\n\n[[target|新建]]\n",
    }
    pages.update(_filler(60))
    root = make_vault(pages)
    edits = [
        ("c.md", "# C\n\n每天[[target|创建笔记]]。\n"),  # a third source
        ("b.md", "# B\n\n先[[target|创建笔记]]再说。\n"),  # one labelled link out
        ("more/n1.md", "# Note 1\n\n[[a|快捷键]] and [[d|新建]].\n"),  # into a file with none
        ("d.md", "# D\n\n[[target|新建]] 和 [[c|一次]]\n"),  # a label used once
    ]
    vault = open_vault(root)
    vault.derived(VECTORS)
    for path, text in edits:
        (root / path).write_text(text, encoding="utf-8")
        vault.refresh()
        kept = Labels.from_data(vault.derived(VECTORS).names.labels)
        assert kept is not None
        whole = label_names(vault)
        assert kept == whole, path
        assert kept.names.get("target.md") == ["创建笔记"]


def test_a_markdown_link_label_names_the_target_too(
    make_vault: Callable, open_vault: Callable
) -> None:
    """``[线段树](ds/seg-tree.md)`` in two documents names seg-tree 线段树 as a wikilink
    label would; after an edit of one of them (read again alone) it names nothing."""
    pages = {
        "ds/seg-tree.md": "# Segment tree\n\nIntervals, lazy tags.\n",
        "a.md": "# 区间查询\n\n用[线段树](ds/seg-tree.md)维护。\n",
        "b.md": '# 扫描线\n\n配合[线段树](./ds/seg-tree.md#lazy "t")求面积。\n',
        "c.md": "# 数据结构\n\n先学线段树，再学平衡树。\n",
        "d.md": "# 烹饪\n\n番茄意面。\n",
    }
    pages.update(_filler(60))
    root = make_vault(pages)
    vault = open_vault(root)

    def mentioned(found: list) -> list[str]:
        return [f.id for f in found if any(r.startswith("mentions") for r in f.reasons)]

    assert mentioned(related(vault, vault.document("c.md"))) == ["seg-tree"]
    (root / "d.md").write_text("# 烹饪\n\n番茄意面和沙拉。\n", encoding="utf-8")
    kept = open_vault(root)
    assert mentioned(related(kept, kept.document("c.md"))) == ["seg-tree"]
    relabelled = "# 扫描线\n\n配合[区间树](ds/seg-tree.md)求面积。\n"
    (root / "b.md").write_text(relabelled, encoding="utf-8")
    once = open_vault(root)
    assert mentioned(related(once, once.document("c.md"))) == []


def test_filler_words_never_make_a_reason(make_vault: Callable, open_vault: Callable) -> None:
    """Words most documents use (规模, 状态, 策略, 生成, 语言 here) are no subject, even
    when a title holds them; the words the two documents alone share are."""
    filler = "规模 状态 策略 生成 语言 "
    files = {  # the filler in 7 of 32 documents: common, yet under a fifth of them
        f"notes/n{k:02d}.md": f"# 规模与状态 {k}\n\n{filler * 3 if k < 5 else ''}话题{k}。\n"
        for k in range(30)
    }
    files["notes/q1.md"] = f"# 量化与剪枝\n\n{filler}量化 剪枝 量化 剪枝 蒸馏。\n"
    files["notes/q2.md"] = f"# 量化方法\n\n{filler}量化 剪枝 量化 蒸馏 剪枝。\n"
    root = make_vault(files)
    vault = open_vault(root)
    found = related(vault, vault.document("notes/q1.md"))
    assert found[0].id == "q2"
    words = " ".join(r for r in found[0].reasons if r.startswith("similar text"))
    assert "量化" in words
    for r in found:
        for reason in r.reasons:
            assert not any(w in reason for w in ("规模", "状态", "策略", "生成", "语言")), reason


def test_text_reasons_name_no_fragment_of_a_title_or_passing_inflection(
    bundled: Path, run: Callable
) -> None:
    """On the bundled vault FSDP2's list once said "similar text: fully, 分片, scattered":
    "fully" only a word of the title phrase "Fully Sharded Data Parallel" (both titles
    show it), "scattered" only the passing inflection of reduce-scattered (no title
    writes it). Neither is a subject; the distinctive words still are."""
    result = run("related", "fsdp2", "--json", vault=bundled)
    found = json.loads(result.stdout)["related"]
    said = [
        w
        for r in found
        for reason in r["reasons"]
        if reason.startswith("similar text: ")
        for w in reason.removeprefix("similar text: ").split(", ")
    ]
    assert said  # words are still given...
    assert not {"fully", "scattered", "sharded", "parallel"} & set(said), said
    assert "分片" in said  # ...the distinctive ones


def _filler(n: int) -> dict[str, str]:
    """``n`` unrelated short notes: enough others that an edited file is read
    incrementally (the drift bound)."""
    return {f"more/n{i}.md": f"# Note {i}\n\nWords {i} here.\n" for i in range(n)}
