"""Related documents, the sidebar, and topics: related, sidebar, topics, topic."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from functools import partial
from typing import IO, TYPE_CHECKING, Any

import click

from studykb.cli.app import (
    Context,
    cli,
    console,
    emit_json,
    json_option,
    pass_kb,
    safe,
)
from studykb.cli.naming import named
from studykb.cli.output_file import OutputFile
from studykb.errors import StudyError, UsageError
from studykb.model import DOC_TYPES, is_daily
from studykb.runtime.memory import paused_gc

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.outputs.site_pages import SitePages


def _esc(text: str) -> str:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.markup import escape

    return escape(text)


def _bold(text: str) -> str:
    return text if os.environ.get("NO_COLOR") else click.style(text, bold=True)


def _dim(text: str) -> str:
    return text if os.environ.get("NO_COLOR") else click.style(text, dim=True)


def _options(limit: int, types: tuple[str, ...], text: str = "vectors") -> Any:
    # deferred: the API loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml for it
    from studykb.api import RelatedOptions

    return RelatedOptions(limit=limit, types=tuple(types), text=text)


_limit = click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many related documents.",
)
_types = click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(DOC_TYPES),
    help="Only documents of this type (repeatable; default: notes, "
    "entries, courses and lists, plus hand-picked ones).",
)


@cli.command()
@click.argument("query")
@_limit
@_types
@click.option(
    "--text",
    "text",
    type=click.Choice(["vectors", "index", "none"]),
    default="vectors",
    show_default=True,
    help="Text similarity: fast term vectors, the search index, or none.",
)
@json_option
@click.pass_obj
def related(
    obj: Context,
    query: str,
    limit: int,
    types: tuple[str, ...],
    text: str,
    as_json: bool,
) -> None:
    """Documents related to QUERY, best first, with the reasons in words.

    Hand-picked `related` come first; then a blend of links either way, shared readings
    (rarer ones count more), co-citation, shared topics, tags and course, and text
    similarity, diversified so near-duplicates do not crowd the top. Exits 1 when
    nothing is related.

    \b
    Example:
      studykb related cs336-summary
      studykb related "KV cache" --type entry --limit 5
      studykb related notes/deepinfer-part1.md --json | jq '.related[].id'
    """
    # what ranking one document loads (the features and vectors, decoded: some 200,000
    # objects) stays alive until it answers: the collector would only walk it again
    # and again (about a tenth of a fresh related after an edit)
    with paused_gc(freeze=True):
        # the ranking code loads and the kept structures are read while the refresh runs
        kb = obj.kb(meanwhile=lambda kb: kb.warm_related())
        doc = named(kb, query)
        found = kb.related(doc, _options(limit, types, text))
    if as_json:
        emit_json(
            {
                "id": doc.id,
                "path": doc.path,
                "title": doc.title,
                "related": [r.brief() for r in found],
            }
        )
    else:  # plain click output: rich costs 50 ms of import, a third of the budget
        click.echo(_bold(safe(f"Related to {doc.title}")) + safe(f" ({doc.type}, {doc.id})"))
        if not found:
            click.echo("  nothing related yet: no shared links, topics, tags or words")
        for n, r in enumerate(found, 1):
            click.echo(
                f"{n:>3}. {_bold(safe(r.title))}  "
                f"{_dim(safe(f'{r.type} · {r.id} · {r.score:.3f}'))}"
            )
            click.echo(safe(f"     {'; '.join(r.reasons)}"))
    raise SystemExit(0 if found else 1)


@cli.command()
@click.argument("query", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json"]),
    default=None,
    help="Output format (default md).",
)
@click.option(
    "--write",
    is_flag=True,
    help="Write the Markdown sidebar into each note, between marker comments.",
)
@click.option("--dry-run", is_flag=True, help="With --write: print the diff, write nothing.")
@_limit
@click.option(
    "--ext",
    default=None,
    metavar="EXT",
    help="Link suffix in place of .md (default: .html for html, .md otherwise).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFile(),
    default="-",
    help="Write to a file instead of standard output (e.g. a Hugo data file); "
    "its folders are made.",
)
@json_option
@pass_kb
def sidebar(
    kb: Session,
    query: str | None,
    fmt: str | None,
    write: bool,
    dry_run: bool,
    limit: int,
    ext: str | None,
    output: IO[str],
    as_json: bool,
) -> None:
    """The related-posts sidebar of QUERY, or of every document: Related, Before this
    (prerequisites) and Leads to (what requires it).

    JSON for all documents is one object keyed by page path: save it as
    data/studykb/sidebar.json (Hugo: index site.Data.studykb.sidebar .File.Path) or
    _data/studykb/sidebar.json (Jekyll: site.data.studykb.sidebar[page.path]); in a
    Hugo or Jekyll site its hrefs are the URLs the generator builds. HTML is a fragment
    of escaped text, relative links and class names (studykb-sidebar, studykb-related,
    studykb-before, studykb-leads-to, studykb-item, studykb-why).

    --write puts the Markdown sidebar into every note (type note) between
    <!-- studykb:sidebar --> and <!-- /studykb:sidebar -->, replacing only what is
    between them and adding them at the end where absent; a second run changes nothing.
    Notes with one marker only, or that cannot be parsed, are skipped with a message
    (exit 1).

    \b
    Example:
      studykb sidebar cs336-summary
      studykb sidebar --format json -o data/studykb/sidebar.json
      studykb sidebar notes/kv-cache-serving-digest.md --format html
      studykb sidebar --write --dry-run | less
      studykb sidebar --write
    """
    if as_json and not (write or dry_run):
        fmt = fmt or "json"
    if (write or dry_run) and fmt not in (None, "md"):
        raise UsageError("--write writes the Markdown sidebar; leave out --format")
    keys = None
    if query:
        doc = named(kb, query)
        if (write or dry_run) and doc.type != "note":
            raise UsageError(
                f"--write writes sidebars into notes only; {doc.id} is "
                f"{'an' if doc.type == 'entry' else 'a'} {doc.type}"
            )
        if write or dry_run:
            kb.refuse_read_only(doc, "sidebar --write")
        if (write or dry_run) and is_daily(doc.path):
            raise UsageError(f"--write leaves daily notes alone; {doc.path} is one")
        keys = [doc.key]
    elif write or dry_run:
        docs = kb.documents()
        keys = [k for k, d in docs.items() if d.type == "note" and not is_daily(d.path)]
    if write or dry_run:
        _write(kb, kb.sidebars(keys, _options(limit, ())), dry_run, as_json)
        return
    pages = _site_pages(kb) if fmt == "json" and ext is None else None
    if query:
        found = kb.sidebars(keys, _options(limit, ()))
        _print(found, fmt or "md", ext, output=output, pages=pages)
    else:
        for piece in _every(kb, _options(limit, ()), fmt or "md", ext, pages):
            output.write(piece)


def _site_pages(kb: Session) -> SitePages | None:
    """Hugo and Jekyll sites: keys and links as the generator makes them (else None)."""
    # deferred: loads frontmatter, msgpack, yaml
    from studykb.outputs.site_pages import GENERATORS, SitePages

    site = kb.site
    return SitePages(site, kb.documents()) if site.generator in GENERATORS else None


def _every(kb: Session, options, fmt: str, ext: str | None, pages) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The sidebar of every document in ``fmt``, in pieces as they are made (each made
    into text where it is made, a block of documents at a time), to be written and let go."""
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs import sidebar as fmt_sidebar

    if fmt == "json":  # one line: a data file for a site generator, not for reading
        shape = partial(fmt_sidebar.keyed_entry, ext=ext or ".md", pages=pages)
        made = kb.sidebars_stream(shape, None, options)
        names = [
            (fmt_sidebar.entry_name(k, p, pages), p)
            for k, p in zip(made.keys, made.paths, strict=True)
        ]
        return fmt_sidebar.keyed_json_pieces(made, names, pages)
    if fmt == "html":
        html = partial(fmt_sidebar.to_html, ext=ext or ".html")
        return _joined(kb.sidebars_stream(html, None, options))
    return _joined(kb.sidebars_stream(partial(_md_part, ext=ext or ".md"), None, options))


def _joined(parts: Iterable[str], between: str = "\n") -> Iterator[str]:
    """The pieces of ``between.join(parts)``, one part at a time."""
    for n, part in enumerate(parts):
        yield between + part if n else part


def _md_part(sb, ext: str) -> str:  # type: ignore[no-untyped-def]
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs import sidebar as fmt_sidebar

    return f"<!-- {sb.path} -->\n{fmt_sidebar.to_markdown(sb, ext)}"


def _print(found, fmt: str, ext: str | None, output, pages=None) -> None:  # type: ignore[no-untyped-def]
    """The sidebar of one document."""
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs import sidebar as fmt_sidebar

    if fmt == "json":
        output.write(fmt_sidebar.to_json(fmt_sidebar.as_dict(found[0], ext or ".md", pages)))
    elif fmt == "html":
        output.write(fmt_sidebar.to_html(found[0], ext or ".html"))
    else:
        output.write(fmt_sidebar.to_markdown(found[0], ext or ".md"))


def _write(kb, found, dry_run: bool, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    outcome = kb.write_sidebars(found, dry_run=dry_run)
    if dry_run:
        for item in outcome.planned:
            if item.changed:
                click.echo(safe(item.diff()), nl=False)
    for path, why in outcome.warnings:
        click.echo(safe(f"studykb: warning: {path} {why}"), err=True)
    for path, why in outcome.skipped:
        click.echo(safe(f"studykb: skipped {path}: {why}"), err=True)
    changed = [p.path for p in outcome.planned if p.changed]
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "written": outcome.written,
                "would_change": changed if dry_run else [],
                "unchanged": [p.path for p in outcome.planned if not p.changed],
                "skipped": [{"path": p, "reason": w} for p, w in outcome.skipped],
                "warnings": [{"path": p, "reason": w} for p, w in outcome.warnings],
            }
        )
    elif dry_run:
        click.echo(
            f"studykb: {len(changed)} notes would change (dry run, nothing written)", err=True
        )
    else:
        unchanged = len(outcome.planned) - len(changed)
        click.echo(f"studykb: wrote {len(outcome.written)} notes, {unchanged} unchanged", err=True)
    raise SystemExit(1 if outcome.skipped or outcome.warnings else 0)


@cli.command()
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1),
    default=None,
    help="Only the N most covered topics.",
)
@json_option
@pass_kb
def topics(kb, limit: int | None, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Every topic with how many documents cover it and the topics covered with it.

    A document covers a topic when a tag or `covers` names it.

    \b
    Example:
      studykb topics
      studykb topics --limit 10
      studykb topics --json | jq '.topics[] | select(.count == 0) | .id'
    """
    found = kb.topics()[:limit]
    if as_json:
        emit_json({"topics": [_topic_json(t) for t in found]})
        return
    out = console()
    width = max((len(t.title) for t in found), default=0)
    for t in found:
        also = ", ".join(f"{r.title} ({r.together})" for r in t.related)
        docs = "doc " if t.count == 1 else "docs"
        out.print(f"{t.title:<{width}}  {t.count:>4} {docs}  {also}", markup=False)
    if not found:
        out.print("no topics: add files under a topics/ folder or with type: topic")


def _topic_json(t) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {
        "id": t.id,
        "path": t.path,
        "title": t.title,
        "count": t.count,
        "related": [
            {"id": r.id, "path": r.path, "title": r.title, "together": r.together}
            for r in t.related
        ],
    }


def _neighbour_json(n) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {
        "id": n.id,
        "path": n.path,
        "title": n.title,
        "type": n.type,
        "level": n.level,
        "note": n.note,
    }


@cli.command()
@click.argument("query")
@json_option
@pass_kb
def topic(kb, query: str, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """A topic's page: what it is, what to read before it, what it leads to, the
    documents covering it by level, and the topics that go with it.

    \b
    Example:
      studykb topic "KV cache"
      studykb topic pytorch --json
    """
    doc = named(kb, query)
    if doc.type != "topic":
        raise StudyError(
            f"{doc.id} is {'an' if doc.type == 'entry' else 'a'} {doc.type}, not a topic.",
            hint="`studykb topics` lists every topic.",
        )
    page = kb.topic_page(doc)
    if as_json:
        emit_json(
            {
                **_topic_json(page.topic),
                "aliases": list(doc.aliases),
                "level": doc.level,
                "explanation": page.explanation,
                "prerequisites": [_neighbour_json(n) for n in page.prerequisites],
                "leads_to": [_neighbour_json(n) for n in page.leads_to],
                "levels": [
                    {
                        "level": g.level,
                        "label": g.label,
                        "documents": [
                            {**d.brief(), "status": d.status, "url": d.url} for d in g.documents
                        ],
                    }
                    for g in page.levels
                ],
                "mentions": [_neighbour_json(n) for n in page.mentions],
                "more_mentions": page.more_mentions,
            }
        )
        return
    _print_page(page)


def _print_page(page) -> None:  # type: ignore[no-untyped-def]
    out = console()
    doc = page.doc
    count = page.topic.count
    out.print(
        f"[bold]{_esc(doc.title)}[/]  {count} document{'s' if count != 1 else ''}"
        f"  [dim](topic {_esc(doc.id)}" + (f", level {doc.level}" if doc.level else "") + ")[/]"
    )
    if doc.aliases:
        out.print(f"also: {', '.join(doc.aliases)}", markup=False)
    if page.explanation:
        out.print(page.explanation, markup=False)
    for label, items in (("Before this", page.prerequisites), ("Leads to", page.leads_to)):
        if items:
            out.print(f"\n[bold]{label}[/]")
            for n in items:
                out.print(
                    f"  - {n.title} ({n.type})" + (f" — {n.note}" if n.note else ""), markup=False
                )
    if page.levels:
        out.print("\n[bold]Covered by[/]")
        for group in page.levels:
            out.print(f"  {group.label}:", markup=False)
            for d in group.documents:
                status = f", {d.status}" if d.status else ""
                out.print(f"    - {d.title} ({d.type}{status})", markup=False)
    if page.mentions:
        out.print("\n[bold]Mentioned in[/]")
        for n in page.mentions:
            out.print(f"  - {n.title} ({n.type})", markup=False)
        if page.more_mentions:
            out.print(f"  … and {page.more_mentions} more", markup=False)
    if page.topic.related:
        out.print("\n[bold]Related topics[/]")
        out.print(
            "  " + ", ".join(f"{r.title} ({r.together})" for r in page.topic.related), markup=False
        )
