"""The repo tracker's commands: ``repos``, and ``backlinks NAME:path``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from studykb.cli.app import cli, console, counted, emit_json, json_option, pass_kb, safe
from studykb.cli.core import backlink_json

if TYPE_CHECKING:
    from studykb.api import Session


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
def repos(ctx: click.Context, as_json: bool) -> None:
    """The tracked repositories: clone, HEAD, state and the notes linking into each.

    A repository is tracked by a `[repos.NAME]` table of studykb.toml, an entry with
    `kind: repo` or a course with `repo:`; notes link into its code with
    [[NAME:path/to/file.py#L10-40]] or [[NAME:path#Class.method@commit]].
    `studykb repos add` writes such a table.

    \b
    Example:
      studykb repos
      studykb repos --json
      studykb repos add deepinfer --path ~/src/deepinfer
      studykb repos show deepinfer
    """
    if ctx.invoked_subcommand is None:
        _listing(ctx.obj.kb(), as_json)


@repos.command("add")
@click.argument("name")
@click.option("--path", "path", required=True, help="Where the repository is cloned.")
@click.option("--url", "url", help="Its public address (default: the clone's origin remote).")
@json_option
@pass_kb
def repos_add(kb: Session, name: str, path: str, url: str | None, as_json: bool) -> None:
    """Track the clone at PATH as NAME: add [repos.NAME] to studykb.toml.

    Every other byte of studykb.toml is kept (comments too); nothing is written when
    PATH is no git repository, NAME is taken or cannot be written in a code link
    ([[NAME:path]]). A NAME that is the id of a course or entry with a `repo:` gives
    its repository this clone. A relative PATH is written relative to the vault.

    \b
    Example:
      studykb repos add cs336 --path ../cs336
      studykb repos add deepinfer --path ~/src/deepinfer --url https://github.com/x/y
    """
    added = kb.repos().add(name, path, url)
    if as_json:
        emit_json(
            {
                "name": added.name,
                "path": added.path,
                "clone": str(added.clone),
                "url": added.url or None,
                "head": added.head or None,
                "config": str(added.config),
                "created": added.created,
                "document": added.document,
            }
        )
        return
    out = console()
    made = "created" if added.created else "updated"
    out.print(f"{added.config}: {made}, [repos.{added.name}] path = {added.path}", markup=False)
    if added.url:
        out.print(f"  url: {added.url}", markup=False)
    if added.document:
        out.print(f"  the clone of {added.document}'s repository", markup=False)


@repos.command("show")
@click.argument("name")
@json_option
@pass_kb
def repos_show(kb: Session, name: str, as_json: bool) -> None:
    """One repository in full: its state, progress, notes and links.

    NAME is the repository's name (a course's or entry's id, an alias, or a
    [repos.NAME]). Shows the progress its `progress` file states (task items at HEAD),
    the notes of its own that `notes` reads in, and the notes linking into its code,
    grouped by file.

    \b
    Example:
      studykb repos show cs336
      studykb repos show cs336 --json
    """
    shown = kb.repos().show(name)
    sources = [link.ref.source for _path, links in shown.files for link in links]
    docs = kb.documents_for(sources)
    files: list[dict[str, Any]] = [
        {"path": path, "backlinks": [backlink_json(link, docs) for link in links]}
        for path, links in shown.files
    ]
    own = [{"id": n.id, "path": n.path, "title": n.title} for n in shown.own]
    progress = shown.progress.as_json() if shown.progress else None
    if as_json:
        emit_json({**shown.state, "progress": progress, "own_notes": own, "files": files})
        return
    out = console()
    row = shown.state
    out.print(f"{row['name']}: {_state_text(row)}", markup=False)
    for label in ("path", "url", "declared"):
        if row[label]:
            out.print(f"  {label}: {row[label]}", markup=False)
    if shown.progress:
        out.print(f"  {shown.progress.line()}", markup=False)
    if own:
        out.print(f"Its own notes ({len(own)})", markup=False)
        for note in own:
            out.print(f"  {note['path']}  {note['title']}", markup=False)
    links = sum(len(f["backlinks"]) for f in files)
    if not files:
        out.print(f"No notes link into {row['name']}", markup=False)
    else:
        out.print(f"Links into its code ({links} in {counted(len(files), 'file')})", markup=False)
    for found in files:
        out.print(f"  {row['name']}:{found['path']}", markup=False)
        for link in found["backlinks"]:
            out.print(f"    {link['path']}:{link['line']}: {link['text']}", markup=False)


def _state_text(row: dict[str, Any]) -> str:
    if row["state"] == "cloned":
        clean = {True: "clean", False: "changed", None: ""}[row["clean"]]
        return f"HEAD {row['head'][:12]} {row['date']} {clean}".rstrip()
    if row["state"] == "bad":
        return f"unreadable: {row['message']}"
    return "not cloned here"


def _listing(kb: Session, as_json: bool) -> None:
    rows = kb.repos().listing()
    if as_json:
        emit_json({"repos": rows})
        return
    out = console()
    if not rows:
        out.print("no tracked repositories", markup=False)
    for row in rows:
        state = _state_text(row)
        notes = counted(row["notes"], "note")
        links = "links" if row["notes"] == 1 else "link"
        own = f"; {counted(row['own_notes'], 'own note')} read" if row["own_notes"] else ""
        out.print(f"{row['name']}: {state}; {notes} {links} into it{own}", markup=False)
        for label in ("path", "url"):
            if row[label]:
                out.print(f"  {label}: {row[label]}", markup=False)


def code_backlinks(kb: Session, query: str, as_json: bool) -> bool:
    """``backlinks NAME:path`` for a tracked repository NAME: the notes linking into that
    file (or folder); False when ``query`` is no such path (a document is asked for)."""
    if ":" not in query:
        return False
    view = kb.repos()
    if not view.is_code(query):
        return False
    name, path, links = view.backlinks(query)
    docs = kb.documents_for(link.ref.source for link in links)
    rows: list[dict[str, Any]] = [backlink_json(link, docs) for link in links]
    if as_json:
        emit_json({"id": f"{name}:{path}", "repo": name, "path": path, "backlinks": rows})
        return True
    out = console()
    if not rows:
        out.print(f"no notes link into {name}:{path}", markup=False)
    for row in rows:
        out.print(f"{row['path']}:{row['line']}: {row['text']}", markup=False)
    return True


def show_code(kb: Session, query: str, as_json: bool) -> bool:
    """``show NAME:path#L10-40``: the lines a code link points at, highlighted on a
    terminal; False when ``query`` is no code link (a document is asked for)."""
    if ":" not in query:
        return False
    view = kb.repos()
    if not view.is_code(query):
        return False
    shown = view.code(query)
    if as_json:
        emit_json(shown)
        return True
    out = console()
    at = f"{shown['repo']}:{shown['path']} at {shown['commit'][:12]} ({shown['date']})"
    if shown["lines"] is None:
        out.print(f"{at}: {len(shown['files'])} files", markup=False)
        for path in shown["files"]:
            out.print(f"  {path}", markup=False)
        return True
    start, end = shown["lines"]
    out.print(f"{at}, lines {start}-{end}", markup=False)
    if not out.is_terminal:  # piped: every line whole, numbered, nothing padded or cut
        width = len(str(end))
        for n, line in enumerate(safe(shown["text"]).split("\n")[: end - start + 1], start):
            click.echo(f"{n:>{width}}  {line}".rstrip())
        return True
    from rich.syntax import Syntax  # deferred: highlighting loads pygments

    lexer = {"python": "python", "c": "c", "cpp": "cpp", "cuda": "cuda"}.get(
        shown["language"] or "", "text"
    )
    out.print(
        Syntax(safe(shown["text"]), lexer, line_numbers=True, start_line=start, word_wrap=True)
    )
    return True
