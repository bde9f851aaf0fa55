"""Commands over the notes themselves: list (for pickers such as fzf) and mv (rename)."""

from __future__ import annotations

import os
import re
import string
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import click

from studykb.cli.app import cli, complete_ids, emit_json, json_option, pass_kb, safe
from studykb.model import DOC_TYPES

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document

#: Named formats of ``list``; anything else is a template with ``{field}``s.
FORMATS = MappingProxyType(
    {
        "path": "{file}",
        "id": "{id}",
        "title": "{title}",
        "tsv": "{file}\t{id}\t{type}\t{title}",
    }
)
FIELDS = ("id", "path", "file", "title", "type", "status", "level", "date", "tags", "aliases")


@cli.command("list")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(DOC_TYPES),
    help="Only documents of this type (repeatable; units only when asked).",
)
@click.option("--tag", "tags", multiple=True, help="Only documents with this tag or topic.")
@click.option(
    "--format",
    "fmt",
    default="path",
    show_default=True,
    help="path, id, title, tsv, or a template such as '{id}\\t{title}' (fields: "
    + ", ".join(FIELDS)
    + ").",
)
@json_option
@pass_kb
def list_(
    kb: Session, types: tuple[str, ...], tags: tuple[str, ...], fmt: str, as_json: bool
) -> None:
    """Every document, one a line, for scripts and pickers.

    The default format prints each file's path as you can use it from here, so it feeds
    an editor directly.

    \b
    Example:
      studykb list | fzf | xargs -r $EDITOR
      studykb list --format tsv | fzf --with-nth 4 -d '\\t' | cut -f1 | xargs -r $EDITOR
      studykb list --type topic --format '{id}\\t{title}'
    """
    template = _unescaped(FORMATS.get(fmt, fmt))
    _check_template(template)
    docs = _listed(kb, types, tags)
    files = kb.files_of([d.path for d in docs])
    if as_json:
        emit_json(
            {
                "documents": [
                    {
                        **d.brief(),
                        "file": str(files[d.path]),
                        "tags": list(d.tags),
                        "status": d.status,
                        "level": d.level,
                        "date": d.date,
                    }
                    for d in docs
                ]
            }
        )
        return
    lines = [safe(template.format_map(_fields(d, files[d.path]))) for d in docs]
    if lines:
        click.echo("\n".join(lines))


def _listed(kb: Session, types: tuple[str, ...], tags: tuple[str, ...]) -> list[Document]:
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import fold

    wanted = {fold(t) for t in tags}
    out = []
    for doc in kb.documents().values():
        if (doc.type not in types) if types else doc.type == "unit":
            continue
        if wanted and not wanted & {fold(t) for t in (*doc.tags, *doc.covers)}:
            continue
        out.append(doc)
    return sorted(out, key=lambda d: (d.path, d.line))


def _unescaped(template: str) -> str:
    """``\\t`` and ``\\n`` typed in a shell's single quotes mean a tab and a new line."""
    return re.sub(r"\\([tn\\])", lambda m: {"t": "\t", "n": "\n", "\\": "\\"}[m.group(1)], template)


def _check_template(template: str) -> None:
    try:
        names = [
            name
            for _lit, name, _spec, _conv in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as exc:
        raise click.BadParameter(f"{template!r}: {exc}", param_hint="--format") from None
    unknown = [n for n in names if n not in FIELDS]
    if unknown:
        raise click.BadParameter(
            f"unknown field {{{unknown[0]}}}; use one of " + ", ".join(FIELDS),
            param_hint="--format",
        )


def _fields(doc: Document, file: Path) -> dict[str, Any]:
    """The fields of one line (a value never breaks the line or the columns)."""
    values = {
        "id": doc.id,
        "path": doc.path,
        "file": _shown(file),
        "title": doc.title,
        "type": doc.type,
        "status": doc.status or "",
        "level": doc.level or "",
        "date": doc.date or "",
        "tags": ",".join(doc.tags),
        "aliases": ",".join(doc.aliases),
    }
    return {k: " ".join(str(v).split("\n")).replace("\t", " ") for k, v in values.items()}


def _shown(file: Path) -> str:
    """The path as the user can use it from here: relative when below the current folder."""
    try:
        return os.path.relpath(file) if file.is_relative_to(Path.cwd()) else str(file)
    except (ValueError, OSError):
        return str(file)


@cli.command()
@click.argument("query", shell_complete=complete_ids)
@click.argument("new")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@json_option
@pass_kb
def mv(kb: Session, query: str, new: str, dry_run: bool, as_json: bool) -> None:
    """Rename a document and rewrite every reference to it.

    NEW is a name (the new id and file name, in the same folder) or a path from the
    vault folder. Wikilinks, Markdown links (relative paths recomputed, anchors kept),
    front-matter lists and written sidebars are rewritten, and a topic's old id in
    tags, covers and #tags; references by alias or title still fit and are left
    alone. All or nothing: a journal in .studykb/ lets the next command finish (or
    undo) a move that was killed, and a file an editor saved meanwhile undoes it.

    \b
    Example:
      studykb mv fsdp2 fully-sharded-data-parallel --dry-run
      studykb mv notes/cs336-summary.md notes/courses/cs336-summary.md
    """
    move = kb.plan_move(kb.find(query), new)
    by_file: dict[str, int] = {}
    for edit in move.edits:
        by_file[edit.path] = by_file.get(edit.path, 0) + 1
    if not dry_run:
        kb.move(move)
    if as_json:
        emit_json(
            {
                "from": move.old_path,
                "to": move.new_path,
                "id": move.new_id,
                "dry_run": dry_run,
                "files": sorted(by_file),
                "edits": [
                    {"path": e.path, "line": e.line + 1, "old": e.old, "new": e.new}
                    for e in move.edits
                ],
                "kept": move.kept,
            }
        )
        return
    verb = "would move" if dry_run else "moved"
    lines = [f"{verb} {move.old_path} -> {move.new_path} (id {move.new_id})"]
    lines += [f"  {e.path}:{e.line + 1}: {e.old} -> {e.new}" for e in move.edits]
    refs = len(move.edits)
    lines.append(
        f"{'would rewrite' if dry_run else 'rewrote'} {refs} reference"
        f"{'s' if refs != 1 else ''} in {len(by_file)} file"
        f"{'s' if len(by_file) != 1 else ''}"
    )
    lines += [f"  {path}: a repository's note, left as it is" for path in move.kept]
    click.echo(safe("\n".join(lines)))
