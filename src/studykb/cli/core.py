"""Foundation commands: build, check, show, backlinks, graph."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from studykb.api import GraphOptions
from studykb.cli.app import (
    Context,
    cli,
    console,
    counted,
    emit_json,
    json_option,
    pass_kb,
    safe,
)
from studykb.cli.naming import named
from studykb.cli.output_file import OutputFile
from studykb.model import DOC_TYPES, EDGE_KINDS, Document
from studykb.outputs import graph_export as ge

if TYPE_CHECKING:
    from pathlib import Path

    from studykb.api import Session, Shown
    from studykb.vault import BuildStats
    from studykb.vault.setup import InitPlan


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Say what would be read; write nothing.")
@json_option
def init(folder: str | None, dry_run: bool, as_json: bool) -> None:
    """Make FOLDER (default: the current folder) a vault: write its studykb.toml.

    Says first what studykb will read there: how many Markdown files, in which
    folders, and which folders of generated files it leaves out. Without a
    studykb.toml, studykb reads a folder only when named with --vault, or when it
    looks like a folder of notes.

    \b
    Example:
      studykb init
      studykb init ~/notes --dry-run
    """
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import Session

    root = Path(folder or ".").expanduser().resolve()
    made = Session.plan_init(root)
    written = None
    if not dry_run:
        written = Session.init(made)
    if as_json:
        emit_json(
            {
                "folder": str(root),
                "config": str(root / "studykb.toml"),
                "written": written is not None,
                "files": made.files,
                "folders": dict(made.by_folder),
                "exclude": list(made.exclude),
                "generator": made.generator,
                "scope": list(made.scope),
                "reason": made.reason,
            }
        )
        return
    _print_init(root, made, dry_run)


def _print_init(root: Path, made: InitPlan, dry_run: bool) -> None:
    """What ``init`` wrote (or would write) and what studykb will read."""
    out = console()
    if dry_run and made.exists:  # init itself would refuse: say so, not "Would write"
        out.print(f"{root / 'studykb.toml'} exists already: init would leave it", markup=False)
    else:
        verb = "Would write" if dry_run else "Wrote"
        out.print(f"{verb} {root / 'studykb.toml'}", markup=False)
    out.print(
        f"studykb will read {made.files} Markdown file{'s' if made.files != 1 else ''}"
        + (":" if made.by_folder else "."),
        markup=False,
    )
    what = f"as a {made.generator} site" if made.generator != "github" else "as a repository"
    why = f" ({made.reason})" if made.reason else ""
    out.print(f"Read {what}{why}" + (":" if made.scope else "."), markup=False)
    if made.scope:
        for rule in made.scope:
            out.print(f"  {rule}", markup=False)
    for name, count in made.by_folder[:12]:
        out.print(f"  {name if name != '.' else '(top level)'}  {count}", markup=False)
    if len(made.by_folder) > 12:
        out.print(f"  … and {len(made.by_folder) - 12} more folders", markup=False)
    if made.exclude:
        out.print(
            f"Left out: {', '.join(e + '/' for e in made.exclude)} (edit exclude in "
            "studykb.toml to change it)",
            markup=False,
        )
    if not dry_run:  # nothing to build yet in an empty folder: the first note is next
        step = "studykb build" if made.files else 'studykb new note "My first note"'
        out.print(f"Next: {step}", markup=False)


@cli.command()
@json_option
@click.pass_obj
def build(obj: Context, as_json: bool) -> None:
    """Bring the state up to date and say what changed.

    Every other command does this silently first, so running it by hand is never needed.

    \b
    Example:
      studykb build
      studykb build --json
    """
    # no index opened meanwhile: a build with nothing to re-index never loads whoosh
    stats = obj.refreshed()
    kb = obj.kb()
    kb.let_go()  # what a first build kept: what comes next reads the state
    indexed = _sync_search_index(kb)
    kb.prepare_related(stats)  # the first `related` after a full build loads, not builds
    if as_json:
        emit_json(
            {
                "documents": stats.documents,
                "links": stats.links,
                "problems": stats.problems,
                "errors": stats.errors,
                "added": stats.added,
                "modified": stats.modified,
                "removed": stats.removed,
                "seconds": round(stats.seconds, 3),
                "index": indexed,
            }
        )
        return
    _print_build(stats, indexed)


def _print_build(stats: BuildStats, indexed: dict[str, Any]) -> None:
    """The files ``build`` read, a tally, and what the search index re-indexed."""
    out = console()
    for notice in (stats.notice, stats.unconfigured):
        if notice:
            out.print(f"note: {notice}")
    for label, paths in (
        ("added", stats.added),
        ("modified", stats.modified),
        ("removed", stats.removed),
    ):
        for path in paths[:20]:
            out.print(f"{label:>9}  {path}", markup=False)
        if len(paths) > 20:
            out.print(f"{label:>9}  ... and {len(paths) - 20} more")
    if not stats.changed:
        out.print("up to date")
    out.print(
        f"{counted(stats.documents, 'document')}, {counted(stats.links, 'link')}, "
        f"{counted(stats.problems, 'problem')} ({counted(stats.errors, 'error')}) "
        f"in {stats.seconds:.2f}s"
    )
    if indexed and indexed["reindexed"]:
        out.print(
            f"search index: {indexed['reindexed']} files re-indexed in {indexed['seconds']:.2f}s"
        )


def _sync_search_index(kb: Session) -> dict[str, Any]:
    """Bring the full-text index in step with the refreshed state."""
    started = time.perf_counter()
    documents = kb.index_current()  # nothing changed: no need to load the search engine
    if documents is not None:
        return {
            "documents": documents,
            "reindexed": 0,
            "rebuilt": False,
            "stale": False,
            "seconds": round(time.perf_counter() - started, 3),
        }
    stats = kb.sync_search(building=True)
    return {
        "documents": stats.documents,
        "reindexed": len(stats.paths),
        "rebuilt": stats.rebuilt,
        "stale": stats.stale,
        "seconds": round(stats.seconds, 3),
    }


@cli.command()
@json_option
@click.option("--errors-only", is_flag=True, help="Leave warnings out.")
@pass_kb
def check(kb, as_json: bool, errors_only: bool) -> None:  # type: ignore[no-untyped-def]
    """Report every problem in the vault as path:line, code and message.

    Exits 1 when any problem is an error, so it works as a pre-commit hook or CI step.

    \b
    Example:
      studykb check
      studykb check --json | jq '.problems[] | select(.code == "dangling-ref")'
    """
    problems = kb.problems()
    if errors_only:
        problems = [p for p in problems if p.severity == "error"]
    errors = sum(p.severity == "error" for p in problems)
    if as_json:
        emit_json(
            {
                "problems": [p.as_dict() for p in problems],
                "errors": errors,
                "warnings": len(problems) - errors,
            }
        )
    else:
        _print_problems(problems, errors)
    raise SystemExit(1 if errors else 0)


def _print_problems(problems: list[Any], errors: int) -> None:
    """One line a problem, written at once (10k problems in a blink: no per-line
    rendering); red and yellow severities on a terminal, unless NO_COLOR."""
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    shown = {
        "error": click.style("error", fg="red") if color else "error",
        "warning": click.style("warning", fg="yellow") if color else "warning",
    }
    lines = []
    for p in problems:
        where = f"{p.path}:{p.line}" if p.line else (p.path or "(vault)")
        code = click.style(p.code, bold=True) if color else p.code
        lines.append(f"{safe(where)}: {shown.get(p.severity, p.severity)} {code} {safe(p.message)}")
    warnings = len(problems) - errors
    lines.append(
        f"{errors} error{'' if errors == 1 else 's'}, "
        f"{warnings} warning{'' if warnings == 1 else 's'}"
        if problems
        else "no problems"
    )
    click.echo("\n".join(lines), color=color)


def _escape(text: str) -> str:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.markup import escape

    return escape(text)


@cli.command()
@click.argument("query")
@json_option
@pass_kb
def show(kb, query: str, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """A document's metadata, its outgoing references and its backlinks.

    QUERY is resolved like a reference: a path, id, alias, title or URL.

    \b
    Example:
      studykb show fsdp2
      studykb show "KV cache" --json
      studykb show micrograd-repo:micrograd/engine.py#Value.backward
    """
    # deferred: loads dulwich and tree-sitter, for a code link only
    from studykb.cli.repos import show_code

    note = kb.repo_note(query)  # NAME:notes/x.md: a note read from the repository
    if note is None and show_code(kb, query, as_json):  # NAME:path#L10-40: the code
        return
    shown = kb.show(note or named(kb, query))
    docs = kb.documents_for(
        [link.ref.source for link in shown.backlinks]
        + [link.target for link in shown.outgoing if link.target]
    )
    if as_json:
        emit_json(_shown_json(shown, docs))
        return
    out = console()
    _print_doc(out, shown.doc)
    if shown.units:
        out.print("units:")
        for unit in shown.units:
            out.print(f"  {unit.id:<28} {unit.status or '-':<8} {unit.title}", markup=False)
    _print_links(out, shown, docs)


def _shown_json(shown: Shown, docs: dict[str, Document]) -> dict[str, Any]:
    doc = shown.doc
    return {
        **doc.brief(),
        "key": doc.key,
        "aliases": list(doc.aliases),
        "tags": list(doc.tags),
        "covers": list(doc.covers),
        "date": doc.date,
        "level": doc.level,
        "status": doc.status,
        "url": doc.url,
        "kind": doc.kind,
        "summary": doc.summary,
        "meta": doc.meta,
        "units": [{**u.brief(), "status": u.status} for u in shown.units],
        "references": [_link_json(link, docs) for link in shown.outgoing],
        "backlinks": [backlink_json(link, docs) for link in shown.backlinks],
    }


def _print_doc(out: Any, doc: Document) -> None:
    """A document's title, type, id, path and the metadata it has."""
    out.print(f"[bold]{_escape(doc.title)}[/]  ({doc.type}, id {_escape(doc.id)})")
    out.print(f"  path: {doc.path}" + (f":{doc.line}" if doc.line > 1 else ""), markup=False)
    for label, value in (
        ("aliases", ", ".join(doc.aliases)),
        ("tags", ", ".join(doc.tags)),
        ("covers", ", ".join(doc.covers)),
        ("date", doc.date),
        ("level", doc.level),
        ("status", doc.status),
        ("url", doc.url),
        ("kind", doc.kind),
    ):
        if value:
            out.print(f"  {label}: {value}", markup=False)
    if doc.summary:
        out.print(f"  summary: {doc.summary}", markup=False)


def _print_links(out: Any, shown: Shown, docs: dict[str, Document]) -> None:
    """A document's references, each with its target, then its backlinks."""
    out.print(f"references ({len(shown.outgoing)}):")
    for link in shown.outgoing:
        target = docs.get(link.target) if link.target else None
        where = f"{link.ref.path}:{link.ref.line}"
        what = f"-> {target.id}" if target else f"({link.state})"
        out.print(f"  {where:<34} {link.ref.kind:<9} {link.ref.text}  {what}", markup=False)
    out.print(f"backlinks ({len(shown.backlinks)}):")
    for link in shown.backlinks:
        src = docs.get(link.ref.source)
        where = f"{link.ref.path}:{link.ref.line}"
        out.print(
            f"  {where:<34} {link.ref.kind:<9} {src.title if src else link.ref.source}",
            markup=False,
        )


def _link_json(link, docs) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    target = docs.get(link.target) if link.target else None
    return {
        "kind": link.ref.kind,
        "text": link.ref.text,
        "path": link.ref.path,
        "line": link.ref.line,
        "state": link.state,
        "reason": link.ref.reason or None,
        "target": target.brief() if target else None,
    }


def backlink_json(link, docs) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    src = docs.get(link.ref.source)
    return {
        "id": src.id if src else link.ref.source,
        "path": link.ref.path,
        "line": link.ref.line,
        "kind": link.ref.kind,
        "title": src.title if src else "",
        "text": link.ref.text,
    }


@cli.command()
@click.argument("query")
@json_option
@pass_kb
def backlinks(kb, query: str, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Every reference to a document, from bodies and front matter.

    \b
    Example:
      studykb backlinks ddp
      studykb backlinks notes/topics/kv-cache.md --json
      studykb backlinks micrograd-repo:micrograd/engine.py
    """
    # deferred: loads dulwich, for a code path only
    from studykb.cli.repos import code_backlinks

    note = kb.repo_note(query)  # NAME:notes/x.md: a note read from the repository
    if note is None and code_backlinks(kb, query, as_json):  # NAME:path: into a file
        return
    doc = note or named(kb, query)
    links = kb.backlinks(doc)
    docs = kb.documents_for(link.ref.source for link in links)
    if as_json:
        emit_json(
            {
                "id": doc.id,
                "path": doc.path,
                "title": doc.title,
                "backlinks": [backlink_json(link, docs) for link in links],
            }
        )
        return
    out = console()
    if not links:
        out.print(f"no backlinks to {doc.id}", markup=False)
    for link in links:
        src = docs.get(link.ref.source)
        out.print(
            f"{link.ref.path}:{link.ref.line}: {link.ref.kind}: "
            f"{src.title if src else link.ref.source}",
            markup=False,
        )


@cli.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "graphml", "dot", "mermaid"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(DOC_TYPES),
    help="Keep only documents of this type (repeatable).",
)
@click.option("--tag", "tags", multiple=True, help="Keep only documents with this tag or topic.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(EDGE_KINDS),
    help="Keep only edges of this kind (repeatable).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFile(),
    default="-",
    help="Write to a file (its folders are made) instead of standard output.",
)
@json_option
@pass_kb
def graph(kb, fmt: str, types, tags, kinds, output, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Export the link and prerequisite graph.

    GraphML opens in Gephi or yEd, DOT in Graphviz, Mermaid pastes into GitHub Markdown.
    JSON names every node by its unique key (the path; "name" is the short id). A whole
    vault is too big for dot and Mermaid: studykb says so, keep part of it with filters.

    \b
    Example:
      studykb graph --format dot --type topic | dot -Tsvg > topics.svg
      studykb graph --format mermaid --kind requires --type topic
      studykb graph --format graphml -o vault.graphml
    """
    sub = kb.graph(GraphOptions(tuple(types), tuple(tags), tuple(kinds)))
    if fmt == "json" or as_json:
        text = json.dumps(ge.to_json(sub), ensure_ascii=False, indent=2) + "\n"
    elif fmt == "graphml":
        text = ge.to_graphml(sub)
    else:
        text = ge.to_dot(sub) if fmt == "dot" else ge.to_mermaid(sub)
        warning = ge.size_warning(fmt, sub, text)
        if warning:
            click.echo(safe(f"studykb: warning: {warning}"), err=True)
    output.write(text)
