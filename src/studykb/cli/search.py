"""``studykb search``: full-text search in Chinese and English."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from studykb.cli.app import Context, cli, console, emit_json, json_option, safe, safe_line
from studykb.model import DOC_TYPES
from studykb.runtime.memory import paused_gc

if TYPE_CHECKING:
    from studykb.search.query import Hit


@cli.command()
@click.argument("query", required=False, default="")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(DOC_TYPES),
    help="Keep only documents of this type (repeatable).",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    help="Keep only documents with this tag or covering this topic (repeatable).",
)
@click.option("--course", help="Keep only notes and units of this course (id, alias or path).")
@click.option("--status", help="Keep only documents with this status: todo, reading or done.")
@click.option("--level", help="Keep only documents of this level (1-5, intro, advanced...).")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Show at most this many hits.",
)
@json_option
@click.pass_obj
def search(
    obj: Context,
    query: str,
    types: tuple[str, ...],
    tags: tuple[str, ...],
    course: str | None,
    status: str | None,
    level: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Full-text search in Chinese, English or both, ranked, with a snippet per hit.

    Plain words rank documents holding more of them first, and those where they
    stand together (a phrase, or close) above those where they are scattered;
    a topic named in one language also finds the documents using its other
    names ("also searched: ..."). Titles and aliases weigh more than the body.
    Query syntax is whoosh's: AND, OR, NOT, "a phrase", field:value (title,
    aliases, tags, body, type, course, status, level, kind, id, path), prefix*
    and parentheses. Exits 1 when nothing matched.

    \b
    Example:
      studykb search 投机解码
      studykb search 算子融合                              finds "kernel fusion" too
      studykb search "speculative decoding" --type entry --limit 5
      studykb search 'NCCL AND (all-reduce OR 集合通信)'
      studykb search '"data parallel"' --course cs336 --json
      studykb search "" --tag fsdp2 --type entry      list, no words needed
    """
    # deferred: the API loads frontmatter, msgpack, yaml for it
    from studykb.api import Session

    # what a search allocates stays alive until it answers: the collector would only walk
    # the modules it loaded again and again (about 25 ms of a fresh search after an edit);
    # frozen after, the first collection does not walk all of it once more (6 ms)
    with paused_gc(freeze=True):
        # whoosh and the search code load while the refresh runs (Session.refresh)
        kb = obj.kb(meanwhile=Session.warm_search)
        # deferred: the API loads frontmatter, msgpack, yaml for it
        from studykb.api import SearchOptions

        opts = SearchOptions(
            query=query,
            types=tuple(types),
            tags=tuple(tags),
            course=course,
            status=status,
            level=level,
            limit=limit,
        )
        try:
            found = kb.search(opts)
        finally:
            if obj.warm is None:  # a watch answering commands keeps its searcher open
                kb.close_search()
    hits, notes = found.hits, found.notes
    for note in notes:
        click.echo(f"studykb: {note}", err=True)
    if as_json:
        emit_json(
            {
                "query": query,
                "hits": [h.as_dict() for h in hits],
                "notes": notes,
                "also": list(found.also),
            }
        )
    else:
        _print(hits, query, list(found.also))
    raise SystemExit(0 if hits else 1)


#: Other names listed on the "also searched" line before "and N more".
ALSO_SHOWN = 4


def _print(hits: list[Hit], query: str, also: list[str]) -> None:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.text import Text

    out = console()
    if also:
        more = len(also) - ALSO_SHOWN
        line = ", ".join(also[:ALSO_SHOWN]) + (f" and {more} more" if more > 0 else "")
        out.print(Text(safe(f"also searched: {line}"), style="dim"))
    if not hits:  # said on standard error: piped, no hits is no output (as grep does)
        found = f"nothing matched {query!r}" if query else "nothing matched"
        console(err=True).print(safe(found), markup=False)
        return
    for n, hit in enumerate(hits, 1):
        head = Text(f"{n:>2}. ")
        head.append(safe_line(hit.title), style="bold")
        head.append(f"  ({hit.type}", style="dim")
        head.append(f", score {hit.score:.2f})" if hit.score else ")", style="dim")
        out.print(head)
        out.print(Text("    " + safe_line(hit.key), style="cyan"))
        if hit.snippet:
            snippet = Text("    " + safe_line(hit.snippet))
            for start, end in hit.highlights:
                snippet.stylize(
                    "bold reverse" if out.no_color else "bold yellow", start + 4, end + 4
                )
            out.print(snippet)
