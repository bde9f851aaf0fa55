"""The foundation commands end to end: build, check, show, backlinks, graph.

Their ``--json`` shapes follow FORMAT.md; exit codes are 0 ok, 1 problems or nothing
matched, 2 bad usage or no usable vault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import run_json

FILES = {
    "notes/topics/gradient-descent.md": "---\ntitle: Gradient descent\nlevel: 1\n---\nBasics.\n",
    "notes/topics/ddp.md": (
        "---\nid: ddp\ntitle: DDP\naliases: [Distributed Data Parallel]\nlevel: 2\n"
        "requires: [gradient-descent]\ntags: [distributed]\n---\n"
        "# DDP\n\nEvery rank holds the whole model.\n"
    ),
    "notes/topics/fsdp2.md": (
        "---\ntitle: FSDP2\naliases: [fully sharded]\ntags: [distributed]\nrequires:\n"
        '  - {ref: ddp, reason: "sharding builds on data parallelism"}\n---\n'
        "# FSDP2\n\nShards parameters; compare [[DDP]].\n"
    ),
    "notes/entries/fsdp-paper.md": (
        "---\ntitle: PyTorch FSDP paper\nurl: https://arxiv.org/abs/2304.11277\nkind: paper\n"
        "covers: [fsdp2]\n---\nExperiences scaling fully sharded data parallel.\n"
    ),
    "notes/study.md": (
        "---\ntitle: My study log\nrefs: [fsdp-paper]\nrelated: [ddp]\n---\n"
        "# My study log\n\nRead [[fsdp2]] after [[Distributed Data Parallel|DDP]].\n"
        "The paper: https://arxiv.org/abs/2304.11277/ and [again](https://ARXIV.org/abs/2304.11277#s2).\n"
    ),
    "courses/cs336.md": (
        "---\nid: cs336\ntitle: Language Modeling from Scratch\ntags: [distributed]\nunits:\n"
        "  - id: a1\n    title: Basics\n  - id: a2\n    title: Systems\n    requires: [a1, ddp]\n"
        "---\n# CS336\n\nStart with [[cs336#a1]].\n"
    ),
    "notes/lists/reading.md": (
        "---\ntitle: Reading order\nitems: [gradient-descent, ddp, fsdp2]\n---\n"
    ),
}
BROKEN = {"notes/broken.md": "---\ntitle: Broken\n---\nSee [[no such note]] and [[fsdp2]].\n"}


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(FILES)


@pytest.fixture
def broken(make_vault) -> Path:
    return make_vault({**FILES, **BROKEN})


# -- build ----------------------------------------------------------------------------
def test_build_json_and_what_changed(vault: Path, run) -> None:
    code, data = run_json(run, "build", vault=vault)
    assert code == 0
    assert {"documents", "links", "problems"} <= set(data)
    assert data["documents"] == len(FILES) + 2  # two course units
    assert data["problems"] == 0
    assert data["links"] > 10
    assert sorted(data["added"]) == sorted(FILES)
    code, again = run_json(run, "build", vault=vault)
    assert (again["added"], again["modified"], again["removed"]) == ([], [], [])
    (vault / "notes/study.md").write_text("# My study log\n\n[[ddp]]\n", encoding="utf-8")
    (vault / "notes/lists/reading.md").unlink()
    (vault / "notes/new.md").write_text("[[fsdp2]]\n", encoding="utf-8")
    result = run("build", vault=vault)
    assert result.exit_code == 0
    assert "modified  notes/study.md" in result.stdout
    assert "removed  notes/lists/reading.md" in result.stdout
    assert "added  notes/new.md" in result.stdout
    assert "up to date" in run("build", vault=vault).stdout


# -- check ----------------------------------------------------------------------------
def test_check_clean_vault(vault: Path, run) -> None:
    result = run("check", vault=vault)
    assert result.exit_code == 0
    assert "no problems" in result.stdout
    code, data = run_json(run, "check", vault=vault)
    assert (code, data["problems"]) == (0, [])


def test_check_reports_errors_with_path_line_and_code(broken: Path, run) -> None:
    result = run("check", vault=broken)
    assert result.exit_code == 1
    assert "notes/broken.md:4: error dangling-ref" in result.stdout
    assert "\x1b[" not in result.stdout  # NO_COLOR, and not a terminal
    code, data = run_json(run, "check", vault=broken)
    assert code == 1
    [problem] = data["problems"]
    assert set(problem) >= {"path", "line", "severity", "code", "message"}
    assert (problem["path"], problem["line"], problem["severity"], problem["code"]) == (
        "notes/broken.md",
        4,
        "error",
        "dangling-ref",
    )
    assert "no such note" in problem["message"]


def test_check_warnings_alone_exit_0(make_vault, run) -> None:
    root = make_vault({"a/x.md": "# X\n", "b/x.md": "# X\n", "a/y.md": "[[x]]\n"})
    code, data = run_json(run, "check", vault=root)
    assert [p["code"] for p in data["problems"]] == ["ambiguous-ref"]
    assert data["problems"][0]["severity"] == "warning"
    assert code == 0


def test_check_severity_from_config(make_vault, run) -> None:
    root = make_vault({**FILES, **BROKEN}, config='[severity]\n"dangling-ref" = "warning"\n')
    code, data = run_json(run, "check", vault=root)
    assert code == 0
    assert [p["severity"] for p in data["problems"]] == ["warning"]
    root = make_vault({**FILES, **BROKEN}, config='[severity]\n"dangling-ref" = "ignore"\n')
    code, data = run_json(run, "check", vault=root)
    assert (code, data["problems"]) == (0, [])


# -- show -----------------------------------------------------------------------------
def test_show_text_and_json(vault: Path, run) -> None:
    result = run("show", "fsdp2", vault=vault)
    assert result.exit_code == 0
    assert "FSDP2" in result.stdout and "notes/topics/fsdp2.md" in result.stdout
    assert "backlinks (" in result.stdout
    code, data = run_json(run, "show", "Fully Sharded", vault=vault)  # alias, any case
    assert code == 0
    assert {"id", "path", "title", "type"} <= set(data)
    assert (data["id"], data["type"]) == ("fsdp2", "topic")
    [req] = [r for r in data["references"] if r["kind"] == "requires"]
    assert (req["line"], req["state"], req["target"]["id"]) == (6, "ok", "ddp")
    assert req["reason"] == "sharding builds on data parallelism"
    sources = sorted((b["path"], b["line"]) for b in data["backlinks"])
    # covers (like tags) is not a link: the paper is not a backlink
    assert sources == [("notes/lists/reading.md", 3), ("notes/study.md", 8)]


def test_show_course_lists_units_and_unit_query(vault: Path, run) -> None:
    code, data = run_json(run, "show", "cs336", vault=vault)
    assert [u["id"] for u in data["units"]] == ["cs336#a1", "cs336#a2"]
    code, unit = run_json(run, "show", "cs336#a2", vault=vault)
    assert code == 0
    assert (unit["type"], unit["title"]) == ("unit", "Systems")
    targets = sorted(r["target"]["id"] for r in unit["references"])
    assert targets == ["cs336#a1", "ddp"]


def test_show_by_path_and_by_url(vault: Path, run) -> None:
    for query in ("notes/topics/ddp.md", "notes/topics/ddp", "Distributed Data Parallel"):
        code, data = run_json(run, "show", query, vault=vault)
        assert (code, data["id"]) == (0, "ddp"), query
    code, data = run_json(
        run, "show", "HTTPS://arxiv.org/abs/2304.11277/?utm_source=x", vault=vault
    )
    assert (code, data["path"]) == (0, "notes/entries/fsdp-paper.md")


@pytest.mark.parametrize("command", ["show", "backlinks"])
def test_query_naming_nothing_exits_1_with_suggestions(vault: Path, run, command) -> None:
    result = run(command, "fsdp3", vault=vault)
    assert result.exit_code == 1
    assert "did you mean" in result.stderr.lower()
    assert "fsdp2" in result.stderr
    assert result.stdout == ""
    result = run(command, "zzzzqqqq", "--json", vault=vault)
    assert result.exit_code == 1
    assert "zzzzqqqq" in result.stderr


# -- backlinks ------------------------------------------------------------------------
def test_backlinks_json(vault: Path, run) -> None:
    code, data = run_json(run, "backlinks", "ddp", vault=vault)
    assert code == 0
    assert data["id"] == "ddp"
    for item in data["backlinks"]:
        assert {"id", "path", "line"} <= set(item)
    got = sorted((b["id"], b["path"], b["line"], b["kind"]) for b in data["backlinks"])
    assert got == [
        ("cs336#a2", "courses/cs336.md", 10, "requires"),
        ("fsdp2", "notes/topics/fsdp2.md", 6, "requires"),
        ("fsdp2", "notes/topics/fsdp2.md", 10, "link"),
        ("reading", "notes/lists/reading.md", 3, "item"),
        ("study", "notes/study.md", 4, "related"),
        ("study", "notes/study.md", 8, "link"),
    ]


def test_backlinks_text_and_url_references(vault: Path, run) -> None:
    result = run("backlinks", "PyTorch FSDP paper", vault=vault)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    # refs: [fsdp-paper], a bare URL and a Markdown link to the same normalised URL
    assert lines == [
        "notes/study.md:3: ref: My study log",
        "notes/study.md:9: link: My study log",
        "notes/study.md:9: link: My study log",
    ]
    result = run("backlinks", "gradient-descent", vault=vault)
    assert result.exit_code == 0
    result = run("backlinks", "cs336", vault=vault)
    assert "no backlinks" in result.stdout or result.stdout.strip()


# -- graph ----------------------------------------------------------------------------
def _graph(run, vault: Path, *args: str) -> dict:
    result = run("graph", "--format", "json", *args, vault=vault)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _by_name(data: dict) -> dict:
    """The graph with nodes and edges named by short id (``name``) instead of the key."""
    names = {n["id"]: n["name"] for n in data["nodes"]}
    return {
        "nodes": [{**n, "id": n["name"]} for n in data["nodes"]],
        "edges": [
            {**e, "source": names[e["source"]], "target": names[e["target"]]} for e in data["edges"]
        ],
    }


def test_graph_json_shape_and_edge_kinds(vault: Path, run) -> None:
    keyed = _graph(run, vault)
    assert set(keyed) >= {"nodes", "edges"}
    for node in keyed["nodes"]:
        assert {"id", "name", "path", "title", "type"} <= set(node)
        assert node["id"] == node["path"] or node["id"].startswith(node["path"] + "#")
    ids = {n["id"] for n in keyed["nodes"]}
    for edge in keyed["edges"]:
        assert {"source", "target", "kind", "path", "line"} <= set(edge)
        assert {edge["source"], edge["target"]} <= ids  # every edge names nodes by key
    assert len(ids) == len(FILES) + 2
    data = _by_name(keyed)
    kinds = {e["kind"] for e in data["edges"]}
    assert kinds == {"link", "ref", "requires", "related", "course", "item", "covers"}
    assert {
        "source": "fsdp2",
        "target": "ddp",
        "kind": "requires",
        "path": "notes/topics/fsdp2.md",
        "line": 6,
    }.items() <= next(
        e for e in data["edges"] if e["kind"] == "requires" and e["source"] == "fsdp2"
    ).items()
    assert ("fsdp-paper", "fsdp2", "covers") in {
        (e["source"], e["target"], e["kind"]) for e in data["edges"]
    }
    assert ("cs336#a1", "cs336", "course") in {
        (e["source"], e["target"], e["kind"]) for e in data["edges"]
    }


def test_graph_filters(vault: Path, run) -> None:
    topics = _by_name(_graph(run, vault, "--type", "topic"))
    assert {n["type"] for n in topics["nodes"]} == {"topic"}
    assert {n["id"] for n in topics["nodes"]} == {"ddp", "fsdp2", "gradient-descent"}
    for edge in topics["edges"]:
        assert {edge["source"], edge["target"]} <= {"ddp", "fsdp2", "gradient-descent"}
    tagged = _by_name(_graph(run, vault, "--tag", "distributed"))
    assert {n["id"] for n in tagged["nodes"]} == {"ddp", "fsdp2", "cs336"}
    both = _by_name(_graph(run, vault, "--type", "topic", "--tag", "Distributed"))
    assert {n["id"] for n in both["nodes"]} == {"ddp", "fsdp2"}
    requires = _graph(run, vault, "--kind", "requires")
    assert {e["kind"] for e in requires["edges"]} == {"requires"}
    two = _graph(run, vault, "--type", "topic", "--type", "entry")
    assert {n["type"] for n in two["nodes"]} == {"topic", "entry"}


def test_graph_json_flag_is_the_same(vault: Path, run) -> None:
    code, data = run_json(run, "graph", vault=vault)
    assert data == _graph(run, vault)


def test_graph_graphml_parses(vault: Path, run) -> None:
    result = run("graph", "--format", "graphml", vault=vault)
    assert result.exit_code == 0
    root = ET.fromstring(result.stdout.encode("utf-8"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    nodes = root.findall(".//g:node", ns)
    edges = root.findall(".//g:edge", ns)
    assert len(nodes) == len(FILES) + 2
    assert len(edges) == len(_graph(run, vault)["edges"])
    import networkx as nx

    graph = nx.read_graphml(Path(_write(vault.parent / "g.graphml", result.stdout)))
    assert graph.nodes["notes/topics/fsdp2.md"]["label"] == "FSDP2"


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_graph_dot_and_mermaid(vault: Path, run, tmp_path: Path) -> None:
    dot = run("graph", "--format", "dot", "--type", "topic", vault=vault).stdout
    assert dot.startswith("digraph")
    assert dot.rstrip().endswith("}")
    assert '"notes/topics/fsdp2.md" -> "notes/topics/ddp.md"' in dot
    assert dot.count("{") == dot.count("}")
    mermaid = run("graph", "--format", "mermaid", vault=vault).stdout
    lines = mermaid.splitlines()
    assert lines[0] == "flowchart LR"
    assert any("|requires|" in ln for ln in lines)
    for ln in lines[1:]:
        assert ln.startswith("  n")
        assert '"' not in ln.split('["', 1)[-1].rsplit('"]', 1)[0]  # labels are escaped
    out = tmp_path / "graph.dot"
    result = run("graph", "--format", "dot", "-o", str(out), vault=vault)
    assert result.exit_code == 0 and result.stdout == ""
    assert out.read_text(encoding="utf-8").startswith("digraph")


def test_graph_labels_with_quotes_are_escaped(make_vault, run) -> None:
    root = make_vault(
        {"a.md": "---\ntitle: 'He said \"hi\" [x] (y) | z; #1'\n---\n[[b]]\n", "b.md": "# B\n"}
    )
    mermaid = run("graph", "--format", "mermaid", vault=root).stdout
    label = mermaid.splitlines()[1]
    assert label.startswith('  n0["') and label.endswith('"]')
    assert '"' not in label[len('  n0["') : -2]
    dot = run("graph", "--format", "dot", vault=root).stdout
    assert r'label="He said \"hi\" [x] (y) | z; #1"' in dot


# -- vault discovery and usage errors --------------------------------------------------
def test_vault_discovery(vault: Path, run, tmp_path: Path) -> None:
    sub = vault / "notes" / "topics"
    code, data = run_json(run, "build", cwd=sub)  # studykb.toml found above
    assert data["documents"] == len(FILES) + 2
    assert (vault / ".studykb" / "state.sqlite").exists()
    assert not (sub / ".studykb").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, data = run_json(run, "build", cwd=elsewhere, env={"STUDYKB_VAULT": str(vault)})
    assert data["documents"] == len(FILES) + 2
    # --vault wins over the environment
    other = tmp_path / "other"
    (other / "x").mkdir(parents=True)
    (other / "x" / "one.md").write_text("# One\n", encoding="utf-8")
    code, data = run_json(run, "build", vault=other, env={"STUDYKB_VAULT": str(vault)})
    assert data["documents"] == 1
    # no studykb.toml anywhere: the current folder is the vault
    code, data = run_json(run, "build", cwd=other / "x")
    assert data["documents"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--vault", "/nonexistent/studykb-vault", "check"],
        ["graph", "--format", "svg"],
        ["graph", "--type", "essay"],
        ["check", "--no-such-flag"],
        ["show"],
        ["no-such-command"],
    ],
)
def test_bad_usage_exits_2(vault: Path, run, args) -> None:
    result = run(*args, cwd=vault)
    assert result.exit_code == 2, (args, result.stdout, result.stderr)
    assert result.stderr.strip()


def test_bad_config_exits_2(make_vault, run) -> None:
    root = make_vault({"a.md": "# A\n"}, config="exclude = [unclosed\n")
    result = run("check", vault=root)
    assert result.exit_code == 2
    assert "studykb.toml" in result.stderr
    root = make_vault({"a.md": "# A\n"}, config='[severity]\n"dangling-ref" = "fatal"\n')
    assert run("check", vault=root).exit_code == 2


def test_exclude_in_config(make_vault, run) -> None:
    root = make_vault(
        {
            "a.md": "[[b]]\n",
            "drafts/b.md": "# B\n",
            "x/drafts/c.md": "[[zz]]\n",
            "tmp/d.md": "[[zz]]\n",
            "keep/e.md": "# E\n",
        },
        config='exclude = ["drafts", "tmp/"]\n',
    )
    code, data = run_json(run, "build", vault=root)
    assert data["documents"] == 2  # a.md and keep/e.md
    code, data = run_json(run, "check", vault=root)
    assert [(p["path"], p["code"]) for p in data["problems"]] == [("a.md", "dangling-ref")]


def _commands() -> list[str]:
    from conftest import _cli

    return sorted(_cli().commands)


@pytest.mark.parametrize("command", _commands())
def test_every_command_help_has_an_example(run, command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.stdout, command


def test_group_help_and_version(run) -> None:
    result = run("--help")
    assert result.exit_code == 0 and "Example" in result.stdout
    for name in ("build", "check", "show", "backlinks", "graph"):
        assert name in result.stdout
    assert run("--version").exit_code == 0


def test_python_dash_m_in_a_real_process(broken: Path) -> None:
    """The real entry point: exit codes survive, JSON is alone on stdout, no traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "STUDYKB"))}
    proc = subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(broken), "check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["problems"][0]["code"] == "dangling-ref"
    assert "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "studykb", "--vault", str(broken), "show", "no-such-thing-at-all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_text_output_keeps_brackets_in_paths_and_titles(make_vault, run) -> None:
    """Rich markup must not eat ``[wip]`` from a file name or title."""
    root = make_vault({"notes/[wip] idea.md": "# [bold] title\n\n[[gone]]\n"})
    result = run("check", vault=root)
    assert result.exit_code == 1
    assert result.stdout.startswith("notes/[wip] idea.md:3: error dangling-ref")
    result = run("show", "notes/[wip] idea.md", vault=root)
    assert "[bold] title" in result.stdout
    assert "notes/[wip] idea.md" in result.stdout


def test_graph_exports_survive_line_breaks_and_control_characters(make_vault, run) -> None:
    root = make_vault(
        {
            "a.md": '---\ntitle: |\n  Multi\n  line "title"\n---\n[[b]]\n',
            "b.md": '{"title": "bell\\u0007 and \\u0000 nul"}\n[[a]]\n',
        }
    )
    mermaid = run("graph", "--format", "mermaid", vault=root).stdout.splitlines()
    assert len(mermaid) == 5  # header, two nodes, two edges: no label broke a line
    assert mermaid[1] == '  n0["Multi line #34;title#34;"]'
    dot = run("graph", "--format", "dot", vault=root).stdout
    assert '[label="Multi line \\"title\\""' in dot
    assert "\x07" not in dot and "\x00" not in dot
    graphml = run("graph", "--format", "graphml", vault=root).stdout
    root_el = ET.fromstring(graphml.encode("utf-8"))  # well-formed XML
    assert len(root_el.findall(".//{http://graphml.graphdrawing.org/xmlns}node")) == 2


def test_library_graph_matches_the_export_and_leaves_gc_on(vault: Path, run, open_vault) -> None:
    """``graph.build`` (which pauses the cyclic collector while it builds) gives the
    edges the export lists, and switches the collector back on, also after an error."""
    import gc

    from studykb import graph

    v = open_vault(vault)
    g = graph.build(v.documents(), v.graph_edges(), v.topics())
    assert gc.isenabled()
    exported = json.loads(run("graph", "--json", vault=vault).stdout)
    assert g.number_of_edges() == len(exported["edges"])
    assert {d["kind"] for _s, _t, d in g.edges(data=True)} == {e["kind"] for e in exported["edges"]}

    class Broken:
        def taught(self, doc):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

        about = taught

    with pytest.raises(RuntimeError):
        graph.build(v.documents(), v.graph_edges(), Broken())
    assert gc.isenabled()


def test_edges_kept_after_a_first_build_are_those_of_the_state(vault: Path, open_vault) -> None:
    """Right after a first build the graph's edges and documents come from memory; they
    are the rows a later process reads from the state, in the same order, with the same
    counts."""
    import shutil

    from studykb import graph

    shutil.rmtree(vault / ".studykb", ignore_errors=True)
    first = open_vault(vault, refresh=False)
    stats = first.refresh()
    from studykb.vault.kept_edges import KeptEdges

    assert isinstance(first.graph_edges(), KeptEdges)  # from memory, as columns
    kept = list(first.graph_edges())
    assert kept
    later = open_vault(vault)
    stored = [tuple(r) for r in later.graph_edges()]
    assert kept == stored
    assert stats.links == len(stored)
    again = later.refresh()
    assert (again.problems, again.errors) == (stats.problems, stats.errors)
    # the documents too come from memory, in the order the state keeps them
    kept_docs, stored_docs = first.documents(), later.documents()
    assert list(kept_docs) == list(stored_docs) and kept_docs == stored_docs
    g1 = graph.build(first.documents(), first.graph_edges(), first.topics())
    g2 = graph.build(later.documents(), later.graph_edges(), later.topics())
    assert sorted(g1.edges(keys=True, data="kind")) == sorted(g2.edges(keys=True, data="kind"))


@pytest.mark.parametrize("code, expected", [(0, 0), (None, 0), (3, 3), ("bad news", 1)])
def test_the_entry_point_leaves_with_all_output_and_exit_handlers(
    tmp_path: Path, code: int | str | None, expected: int
) -> None:
    """``client.leave`` skips the interpreter's teardown, never the output (more than a
    pipe holds), the exit handlers or the exit code."""
    flag = tmp_path / "handler-ran"
    script = (
        "import atexit, sys\n"
        "from studykb.runtime.exit import leave\n"
        f"atexit.register(lambda: open({str(flag)!r}, 'w').write('yes'))\n"
        "sys.stdout.write('x' * 300_000)\n"
        "sys.stderr.write('note\\n')\n"
        f"leave({code!r})\n"
        "raise SystemExit('not reached')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == expected
    assert done.stdout == "x" * 300_000
    assert done.stderr.startswith("note\n")
    assert ("bad news" in done.stderr) == (code == "bad news")
    assert flag.read_text() == "yes"


def test_graph_edges_loaded_directly_equal_networkx_add_edges_from(vault: Path, open_vault) -> None:
    """The graph filled through its adjacency dicts (graph._add_edges) is the graph
    ``add_edges_from`` makes: same edges, keys, attributes, successors, predecessors."""
    import networkx as nx

    from studykb import graph

    v = open_vault(vault)
    fast = graph.build(v.documents(), v.graph_edges(), v.topics())
    slow = nx.MultiDiGraph()
    slow.add_nodes_from(fast.nodes(data=True))
    edges = list(fast.edges(data=True))
    edges += [
        (u, v, {"kind": "extra", "path": "", "line": 0, "reason": ""}) for u, v, _d in edges[:5]
    ]  # parallel edges: keys 1, 2 ...
    slow.add_edges_from(edges)
    again = nx.MultiDiGraph()
    again.add_nodes_from(fast.nodes(data=True))
    graph._add_edges(again, ((u, v, dict(d)) for u, v, d in edges))
    assert len(edges) > 20
    assert nx.utils.graphs_equal(again, slow)
    assert sorted(again.edges(keys=True, data="kind")) == sorted(slow.edges(keys=True, data="kind"))
    for node in slow:
        assert again.pred[node] == slow.pred[node] and again.succ[node] == slow.succ[node]
        assert again.in_degree(node) == slow.in_degree(node)
    u, v, _d = edges[0]
    # one key dict for both directions, as networkx keeps it
    assert slow._pred[v][u] is slow._succ[u][v]
    assert again._pred[v][u] is again._succ[u][v]
    again.remove_edge(u, v)
    slow.remove_edge(u, v)
    assert nx.utils.graphs_equal(again, slow)


def test_edge_kinds_are_the_graphs_edges_in_its_order(bundled: Path) -> None:
    """``graph.edge_kinds`` lists the unfiltered graph's edges (kind only) in the order
    networkx gives them, and the graph view's data made from it (``graph.json``) is the
    one made from the networkx graph: nodes, edges and their order."""
    from studykb import graph
    from studykb.session import Session
    from studykb.web import graph_data
    from studykb.web.links import Linker

    kb = Session.open(bundled)
    kb.refresh()
    v = kb.vault
    full = graph.build(v.documents(), v.graph_edges(), v.topics())
    listed = list(graph.edge_kinds(v.documents(), v.graph_edges(), v.topics()))
    assert listed == [(s, t, d["kind"]) for s, t, d in full.edges(data=True)]
    kinds = {k for _s, _t, k in listed}
    assert {"link", "covers", "about", "course"} <= kinds, kinds
    pairs = [(s, t) for s, t, _k in listed]
    assert len(set(pairs)) < len(pairs)  # parallel edges: in the order added
    link = Linker("../", static=True)
    fast = graph_data.whole(kb, link)
    assert fast == graph_data._from_graph(kb.graph(), link)
    assert json.dumps(fast) == json.dumps(graph_data._from_graph(kb.graph(), link))


def test_output_cut_short_by_a_closed_pipe_is_quiet(make_vault) -> None:
    """``studykb graph --format json | head -c 10``: the reader goes away early; the
    command stops without a traceback or an error message."""
    files = {
        f"notes/n{i:03}.md": f"# Note {i}\n\n[[n{(i + 1) % 300:03}]] [[n{(i + 7) % 300:03}]]\n"
        for i in range(300)
    }
    root = make_vault(files)
    env = {**os.environ, "STUDYKB_LOCAL": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "studykb", "--vault", str(root), "graph", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10).startswith(b"{")
    proc.stdout.close()  # far less than the output, which does not fit a pipe's buffer
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0
    assert "Traceback" not in err and "Error" not in err


def test_the_command_table_names_every_command_and_its_module() -> None:
    """A command missing from COMMANDS would be unknown to a fresh `studykb`."""
    from studykb.cli.app import COMMANDS, cli, prepare

    prepare()
    assert sorted(cli.commands) == sorted(COMMANDS)
    for name, command in cli.commands.items():
        assert command.callback is not None
        module = getattr(command.callback, "__wrapped__", command.callback).__module__
        assert module == f"studykb.cli.{COMMANDS[name].module}", name


def test_a_command_loads_only_its_own_module() -> None:
    code = (
        "import sys, click\n"
        "from studykb.cli.app import cli\n"
        "with click.Context(cli) as ctx:\n"
        "    assert cli.get_command(ctx, 'search') is not None\n"
        "    assert cli.get_command(ctx, 'serach') is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('studykb.cli.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['studykb.cli.app', 'studykb.cli.search']"
