"""Reading plans and the tracker: before, next, status, mark, ask."""

from __future__ import annotations

import re

import click

from studykb.cli.app import cli, console, emit_json, json_option, pass_kb, safe
from studykb.errors import UsageError


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _facts(doc, known: bool = False) -> str:  # type: ignore[no-untyped-def]
    parts = [doc.type]
    if doc.level:
        parts.append(f"level {doc.level}")
    parts.append("known" if known and doc.status != "done" else (doc.status or "todo"))
    if doc.minutes:
        parts.append(f"{doc.minutes} min")
    return " · ".join(parts)


@cli.command()
@click.argument("query")
@click.option("--all", "include_known", is_flag=True, help="Include what is already known.")
@click.option("--depth", type=click.IntRange(min=1), help="Go back at most N prerequisites.")
@click.option("--format", "fmt", type=click.Choice(["text", "md", "json"]), default="text",
              show_default=True, help="Output format (md pastes into a note).")
@click.option("--tree", is_flag=True, help="Show the prerequisite tree instead of the list.")
@json_option
@pass_kb
def before(kb, query: str, include_known: bool, depth: int | None, fmt: str,  # type: ignore[no-untyped-def]
           tree: bool, as_json: bool) -> None:
    """The reading plan: what to read before QUERY, in order, skipping what you know.

    Each step says why it is there and, for topics, which readings cover it.

    \b
    Example:
      studykb before FSDP2
      studykb before flashattention --all --tree
      studykb before "speculative decoding" --format md >> notes/plan.md
    """
    from studykb.outputs.plan_format import plan_json, plan_markdown

    target = kb.find(query)
    known = kb.knowledge()
    plan = kb.plan(target, include_known=include_known, depth=depth, kb=known)
    if as_json or fmt == "json":
        emit_json(plan_json(plan))
        return
    if fmt == "md":
        click.echo(safe(plan_markdown(plan)), nl=False)
        return
    out = console()
    if tree:
        out.print(_tree(known, target, include_known, depth))
        return
    out.print(f"[bold]Reading plan for {_esc(target.title)}[/] ({_facts(target)})")
    if not plan.steps:
        out.print("Nothing to read first: everything it needs is already known."
                  + ("" if include_known else " (--all lists it anyway)"))
        return
    shown_loop: tuple[str, ...] = ()
    for n, step in enumerate(plan.steps, 1):
        if step.loop and step.loop != shown_loop:
            names = ", ".join(known.docs[k].title for k in step.loop)
            out.print(f"[red]  prerequisite loop, read these together: {_esc(names)}[/]")
            shown_loop = step.loop
        doc = step.doc
        style = "dim" if step.known else "bold"
        out.print(f"{n:>3}. [{style}]{_esc(doc.title)}[/]  [dim]{_esc(_facts(doc, step.known))}"
                  f"  ({_esc(doc.id)})[/]")
        for need in step.needed_by[:3]:
            why = f": {need.reason}" if need.reason else ""
            out.print(f"       for {_esc(need.by.title)}{_esc(why)}")
        for reading in step.readings[:4]:
            tick = "✓" if reading.known else "·"
            out.print(f"       {tick} read {_esc(reading.doc.title)} [dim]"
                      f"({_esc(_facts(reading.doc, reading.known))})[/]")
        if len(step.readings) > 4:
            out.print(f"       [dim]… {len(step.readings) - 4} more readings[/]")
    minutes = f", about {_duration(plan.minutes)}" if plan.minutes else ""
    out.print(f"{len(plan.steps)} steps, {len(plan.readings)} readings{minutes}.")


def _duration(minutes: int) -> str:
    return f"{minutes} min" if minutes < 90 else f"{minutes / 60:.1f} h"


def _tree(kb, target, include_known: bool, depth: int | None):  # type: ignore[no-untyped-def]
    from rich.tree import Tree

    root = Tree(f"[bold]{_esc(target.title)}[/]")
    seen: set[str] = set()

    def grow(node, key: str, level: int) -> None:  # type: ignore[no-untyped-def]
        if depth is not None and level >= depth or key not in kb.graph:
            return
        needs = sorted(kb.graph.successors(key), key=kb.sort_key)
        for need in needs:
            known = need in kb.known
            if known and not include_known:
                continue
            doc = kb.docs[need]
            label = f"{_esc(doc.title)} [dim]({_esc(_facts(doc, known))})[/]"
            if need in seen:
                node.add(label + " [dim]↑ see above[/]")
                continue
            seen.add(need)
            grow(node.add(label), need, level + 1)

    grow(root, target.key, 0)
    return root


@cli.command(name="next")
@click.argument("query", required=False)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@json_option
@pass_kb
def next_(kb, query: str | None, limit: int, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """What is ready now: unknown documents whose prerequisites are all known.

    With QUERY, among the steps toward it; without, across the whole vault.

    \b
    Example:
      studykb next
      studykb next fsdp2 --json
    """
    target = kb.find(query) if query else None
    steps = kb.ready(target, limit=limit)
    if as_json:
        emit_json({"target": target.brief() if target else None,
                   "next": [{**s.doc.brief(), "level": s.doc.level, "status": s.doc.status,
                             "unlocks": [n.by.id for n in s.needed_by],
                             "readings": [{"id": r.doc.id, "title": r.doc.title,
                                           "url": r.doc.url} for r in s.readings]}
                            for s in steps]})
        raise SystemExit(0 if steps else 1)
    out = console()
    if not steps:
        out.print("nothing is ready: everything is known, or waits on something")
        raise SystemExit(1)
    for n, step in enumerate(steps, 1):
        doc = step.doc
        out.print(f"{n:>3}. [bold]{_esc(doc.title)}[/]  "
                  f"[dim]{_esc(_facts(doc))} ({_esc(doc.id)})[/]")
        if step.needed_by:
            out.print("       unlocks " + _esc(", ".join(n.by.title for n in step.needed_by)))
        if step.readings:
            out.print(f"       read {_esc(step.readings[0].doc.title)}")


@cli.command()
@json_option
@pass_kb
def status(kb, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """The tracker: course progress, what you are reading, what you finished, lists.

    \b
    Example:
      studykb status
      studykb status --json
    """
    t = kb.status()
    if as_json:
        emit_json({
            "courses": [{**c.course.brief(), "done": c.done, "total": c.total,
                         "current": [u.id for u in c.current],
                         "units": [{**u.brief(), "status": u.status} for u in c.units]}
                        for c in t.courses],
            "reading": [{**d.brief(), "status": d.status} for d in t.reading],
            "finished": [{**d.brief(), "date": d.date} for d in t.finished],
            "lists": [{**lp.list.brief(), "items": lp.items, "read": lp.read,
                       "beginner": lp.beginner} for lp in t.lists]})
        return
    courses = []
    for c in t.courses:
        filled = round(20 * c.done / c.total) if c.total else 0
        courses.append(f"  {'█' * filled}{'░' * (20 - filled)} {c.done:>2}/{c.total:<2} "
                       f"{_esc(c.course.title)}")
        courses.extend(f"{'':28}in progress: {_esc(unit.title)}" for unit in c.current)
    out = console()
    for title, lines, empty in (
            ("Courses", courses, "(none)"),
            ("Reading now", [f"  {_esc(d.title)} [dim]({_esc(_facts(d))})[/]"
                             for d in t.reading], "(nothing marked reading)"),
            ("Finished lately", [f"  {d.date or '':10} {_esc(d.title)}" for d in t.finished],
             "(nothing marked done)"),
            ("Reading lists", [f"  {_esc(lp.list.title)}: {lp.items} picks, {lp.beginner} "
                               f"beginner, in recommended order; {lp.read} read"
                               for lp in t.lists], None)):
        out.print(f"[bold]{title}[/]")
        for line in lines or ([f"  {empty}"] if empty else []):
            out.print(line)


@cli.command()
@click.argument("query")
@click.argument("state", type=click.Choice(["done", "reading", "todo"]))
@json_option
@pass_kb
def mark(kb, query: str, state: str, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Set a document's status (done, reading or todo) in its front matter.

    Only the status line changes (or is added); every other byte is kept. A course unit is
    written COURSE#UNIT.

    \b
    Example:
      studykb mark ddp done
      studykb mark cs336#a2-distributed reading
    """
    doc = kb.find(query)
    changed = kb.mark(doc, state)
    if as_json:
        emit_json({**doc.brief(), "status": state, "changed": changed})
        return
    verb = "marked" if changed else "already"
    console().print(f"{verb} {state}: {_esc(doc.title)} ({_esc(doc.path)})")


#: Questions ``ask`` understands: (pattern, command, example).
QUESTIONS = [
    (r"^(?:what|which)\b.*\b(?:read|learn|study|know)\b.*\bbefore\s+(?P<q>.+)$", "before",
     "what should I read before FSDP2"),
    (r"^(?:what are )?(?:the )?prerequisites (?:of|for)\s+(?P<q>.+)$", "before",
     "prerequisites of flashattention"),
    (r"^(?:学习?|读|看)?(?P<q>.+?)\s*(?:之前|以前|前)\s*(?:应该|需要|要|得)?\s*(?:先)?\s*(?:读|学|看)"
     r"(?:些)?(?:什么|啥|哪些)", "before", "FSDP2 之前应该读什么"),
    (r"^(?P<q>.+?)\s*的?前置(?:知识|要求)?(?:是什么|有哪些)?$", "before", "FSDP2 的前置知识"),
    (r"^what(?:'s| is| should i (?:read|learn|study))? next(?: (?:for|toward|towards) (?P<q>.+))?$",
     "next", "what should I read next"),
    (r"^(?:(?P<q>.+?)\s*)?下一步(?:应该|该)?(?:读|学|看)(?:什么|啥)", "next", "下一步读什么"),
    (r"^(?:what is |what's )?(?:related to|similar to|like)\s+(?P<q>.+)$", "related",
     "related to KV cache"),
    (r"^(?:和|与|跟)?(?P<q>.+?)\s*(?:相关|有关|类似)(?:的)?(?:内容|文章|笔记)?(?:有哪些|有什么)?$",
     "related", "和 KV cache 相关的内容"),
    (r"^(?:how am i doing|my progress|progress|status|学习进度|进度)$", "status", "how am I doing"),
]


def parse_question(question: str) -> tuple[str, str | None]:
    q = re.sub(r"[\s?？!！。.]+$", "", question.strip())
    q = re.sub(r"\s+", " ", q)
    for pattern, command, _example in QUESTIONS:
        m = re.match(pattern, q, re.I)
        if m:
            target = m.groupdict().get("q")
            target = target.strip(" \"'“”「」《》") if target else None
            return command, target or None
    raise UsageError("I don't know that question. I understand:\n" + "\n".join(
        f"  studykb ask \"{example}\"" for _p, _c, example in QUESTIONS))


@cli.command()
@click.argument("question", nargs=-1, required=True)
@json_option
@click.pass_context
def ask(ctx: click.Context, question: tuple[str, ...], as_json: bool) -> None:
    """Ask in English or Chinese; the question is mapped onto before, next, related or status.

    \b
    Example:
      studykb ask "what should I read before FSDP2"
      studykb ask "FSDP2 之前应该读什么"
      studykb ask "下一步读什么"
    """
    command, target = parse_question(" ".join(question))
    cmd = cli.get_command(ctx, command)
    if cmd is None:
        raise UsageError(f"'{command}' is not available in this installation")
    kwargs: dict = {"as_json": as_json}
    if command in ("before", "related"):
        if not target:
            raise UsageError("which document? e.g. studykb ask \"what should I read before X\"")
        kwargs["query"] = target
    elif command == "next":
        kwargs["query"] = target
    ctx.invoke(cmd, **kwargs)
