"""Commands for writing in an editor: new, watch, lsp."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from studykb.cli.app import Context, cli, complete_ids, emit_json, json_option, safe, tally
from studykb.cli.served import command_server
from studykb.errors import NotFound

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.editor.serve import Owner
    from studykb.editor.watch import Change, Watcher
    from studykb.study.new import Created

TYPES = ("note", "entry", "topic", "course", "list")


@cli.command()
@click.argument("doc_type", metavar="TYPE", type=click.Choice(TYPES))
@click.argument("title", nargs=-1)
@click.option(
    "--id",
    "doc_id",
    help="The id and file name (default: a slug of the title; pinyin for a Chinese title).",
)
@click.option(
    "--tag", "tags", multiple=True, help="A tag; for an entry, a topic it covers (repeatable)."
)
@click.option(
    "--requires",
    multiple=True,
    shell_complete=complete_ids,
    help="A prerequisite: an id, alias or title (repeatable); one that names no "
    "document is written anyway, with a warning.",
)
@click.option("--url", help="The resource's address (entries and courses).")
@click.option(
    "--today",
    is_flag=True,
    help="Today's daily note, journal/YYYY-MM-DD.md (the existing one when it is there).",
)
@click.option(
    "--date",
    "day",
    type=click.DateTime(["%Y-%m-%d"]),
    metavar="YYYY-MM-DD",
    help="The daily note of another day.",
)
@click.option("--edit", is_flag=True, help="Open the new file in $VISUAL / $EDITOR.")
@json_option
@click.pass_obj
def new(
    obj: Context,
    doc_type: str,
    title: tuple[str, ...],
    doc_id: str | None,
    tags: tuple[str, ...],
    requires: tuple[str, ...],
    url: str | None,
    today: bool,
    day: dt.datetime | None,
    edit: bool,
    as_json: bool,
) -> None:
    """Create a document from a template and print its path.

    TYPE is note, entry, topic, course or list; the file goes to notes/, notes/entries/,
    notes/topics/, notes/lists/ or courses/. An existing file is never overwritten.
    Templates: put TYPE.md in .studykb-templates/ (or the folder named by `templates`
    in studykb.toml) to override the built-in one; journal.md for daily notes.

    \b
    Example:
      studykb new topic "Tensor Parallelism" --requires ddp --tag parallelism
      studykb new entry "FSDP2 tutorial" --url https://pytorch.org/tutorials/fsdp2
      studykb new note 张量并行笔记              # notes/zhang-liang-bing-xing-bi-ji.md
      studykb new note --today --edit           # journal/2025-06-01.md
      studykb new course "Deep Learning Systems" --id cmu-dlsys --edit
    """
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import NewDoc

    daily = today or day is not None
    if not title and not daily:
        raise click.UsageError("Missing argument 'TITLE...'.")
    date = day.date() if day is not None else dt.date.today()
    kb = obj.kb()
    made = kb.new(NewDoc(doc_type, " ".join(title), doc_id, tags, requires, url, date, daily))
    _print_created(made, doc_type, [*made.warnings, *_unresolved(kb, requires)], as_json)
    if edit:
        click.edit(filename=str(made.file))


def _print_created(made: Created, doc_type: str, warnings: list[str], as_json: bool) -> None:
    """The warnings on standard error, then the new file's path (or all of it as JSON)."""
    for warning in warnings:
        _say(f"studykb: warning: {warning}", err=True)
    if as_json:
        emit_json(
            {
                "path": made.path,
                "file": str(made.file),
                "id": made.id,
                "type": doc_type,
                "template": made.template,
                "existed": made.existed,
                "warnings": warnings,
            }
        )
    else:
        click.echo(safe(_shown(made.file)))


def _unresolved(kb: Session, requires: tuple[str, ...]) -> list[str]:
    """A warning for each --requires that names no document (a typo, or one to write)."""
    out = []
    for name in requires:
        try:
            kb.find(name)
        except NotFound as exc:
            hint = f" (did you mean {', '.join(exc.suggestions[:3])}?)" if exc.suggestions else ""
            out.append(f"--requires {name!r} names no document yet{hint}")
    return out


def _shown(file: Path) -> str:
    """The path as the user can use it from here: relative when below the current folder."""
    try:
        return os.path.relpath(file) if file.is_relative_to(Path.cwd()) else str(file)
    except ValueError:
        return str(file)


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="Print only problems, not changed files.")
@click.option(
    "--serve/--no-serve",
    default=True,
    show_default=True,
    help="Answer other studykb commands on .studykb/serve.sock (owner only).",
)
@click.pass_obj
def watch(obj: Context, quiet: bool, serve: bool) -> None:
    """Keep the state and search index fresh while you edit; print new and fixed problems.

    Reacts to saves from any editor, renames, deletions and `git checkout`; Ctrl-C stops.
    While it runs, other `studykb` commands whose output is not a terminal (scripts,
    editors, pipes) are answered by this already-loaded process, in a few milliseconds
    instead of a fresh start.

    \b
    Example:
      studykb watch
      studykb --vault ~/notes watch --quiet
    """
    # deferred: loads frontmatter, msgpack, yaml
    from studykb.editor.watch import Watcher, index_sync

    watcher = Watcher(obj.kb(refresh=False), index_sync(), serve=command_server if serve else None)
    first = watcher.start()
    if first.error:
        _say(f"studykb: {first.error}", err=True)
    with contextlib.suppress(ValueError):  # only the main thread may set handlers
        signal.signal(signal.SIGTERM, _terminate)
    try:
        watcher.run(
            functools.partial(_report, quiet),
            on_gone=functools.partial(_gone, watcher),
            on_ready=functools.partial(_ready, watcher, first),
            on_follow=_following,
        )
    except KeyboardInterrupt:
        _say("stopped watching")
    finally:
        watcher.kb.close()


def _ready(watcher: Watcher, first: Change) -> None:
    """The watch is live: what it read first, and what it does."""
    st = first.stats
    _say(
        f"watching {watcher.root}: {tally(st.documents, st.problems, st.errors)}"
        f"{'; search index ready' if first.indexed else ''}"
        f"{'; answering studykb commands' if watcher.serving else ''}. Ctrl-C to stop."
    )


def _following(owner: Owner | None) -> None:
    """Another process keeps the vault fresh (``owner``), or no longer does (None)."""
    if owner is None:
        _say(
            "studykb: the process this watch followed stopped; this watch keeps the "
            "vault fresh now.",
            err=True,
        )
    else:
        _say(
            f"studykb: {owner.describe()} already keeps this vault fresh; this watch "
            "reports its changes and takes over when it stops.",
            err=True,
        )


def _report(quiet: bool, change: Change) -> None:
    """One refresh: the files it read (unless ``quiet``), new and fixed problems, a tally."""
    stamp = time.strftime("%H:%M:%S")
    st = change.stats
    if not quiet:
        for label, paths in (
            ("added", st.added),
            ("modified", st.modified),
            ("removed", st.removed),
        ):
            for path in paths[:10]:
                _say(f"[{stamp}] {label} {path}")
            if len(paths) > 10:
                _say(f"[{stamp}] {label} ... and {len(paths) - 10} more")
    for label, problems in (("new", change.new), ("fixed", change.fixed)):
        for p in problems:
            where = f"{p.path}:{p.line}" if p.line else (p.path or "(vault)")
            _say(f"  {label}: {where}: {p.severity} {p.code} {p.message}")
    if change.error:
        _say(f"studykb: {change.error}", err=True)
    elif not quiet:
        indexed = "; index updated" if change.indexed else ""
        _say(f"[{stamp}] {tally(st.documents, st.problems, st.errors)}{indexed}")


def _gone(watcher: Watcher) -> None:
    _say(f"studykb: the vault folder {watcher.root} disappeared; stopping.", err=True)
    raise SystemExit(1)


def _terminate(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # `kill` stops it as cleanly as Ctrl-C (socket removed)


def _say(text: str, err: bool = False) -> None:
    click.echo(safe(text), err=err)


@cli.command()
@click.option("--stdio", is_flag=True, help="Talk over standard input/output (the default).")
def lsp(stdio: bool) -> None:
    """A language server for any editor that speaks LSP (VS Code, Neovim, Helix, Emacs).

    Completion in [[ ]] and in front-matter references, go to definition, hover, find
    references (backlinks), document links, and the problems of `check` as you type.
    The vault is --vault, else $STUDYKB_VAULT, else the nearest folder with
    studykb.toml at or above the editor's workspace folder, else the nearest one at
    or above the first file opened. A folder without studykb.toml is never indexed:
    a file in no vault has its links checked against the Markdown files beside it.

    \b
    Example:
      studykb lsp
      studykb --vault ~/notes lsp      (the command an editor runs)
    """
    # deferred: loads frontmatter, lsprotocol, markdown_it, mdit_py_plugins, msgpack, pygls, yaml
    from studykb.editor.lsp_main import serve

    ctx = click.get_current_context()
    vault_dir = ctx.obj.vault_dir if isinstance(ctx.obj, Context) else None
    if sys.stdin.isatty():
        _say(
            "studykb lsp: the language server is waiting for an editor to talk to it on "
            "standard input and output (your editor starts it; see `studykb lsp --help`). "
            "Ctrl-C to leave.",
            err=True,
        )
    serve(vault_dir, sys.stdin.buffer, sys.stdout.buffer, command_server)
