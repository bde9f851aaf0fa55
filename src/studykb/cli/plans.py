"""Reading plans and the tracker: before, next, status, mark, ask."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from studykb.cli.app import cli, console, emit_json, json_option, pass_kb, safe
from studykb.cli.naming import named
from studykb.cli.progress import history_options, repo_progress, show_history
from studykb.errors import NotFound, UsageError

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document
    from studykb.repos.view import Activity
    from studykb.study.plans import Knowledge, Plan, Reading
    from studykb.study.tracker import CourseProgress, Tracker


def _esc(text: str) -> str:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.markup import escape

    return escape(text)


def _facts(doc: Document, known: bool = False) -> str:
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import facts

    return " · ".join(facts(doc, known))


@cli.command()
@click.argument("query")
@click.option("--all", "include_known", is_flag=True, help="Include what is already known.")
@click.option("--depth", type=click.IntRange(min=1), help="Go back at most N prerequisites.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json"]),
    default="text",
    show_default=True,
    help="Output format (md pastes into a note).",
)
@click.option("--tree", is_flag=True, help="Show the prerequisite tree instead of the list.")
@json_option
@pass_kb
def before(
    kb: Session,
    query: str,
    include_known: bool,
    depth: int | None,
    fmt: str,
    tree: bool,
    as_json: bool,
) -> None:
    """The reading plan: what to read before QUERY, in order, skipping what you know.

    Each step says why it is there and, for topics, which readings teach it best; for a
    topic, the plan ends with the readings of the topic itself.

    \b
    Example:
      studykb before FSDP2
      studykb before flashattention --all --tree
      studykb before "speculative decoding" --format md >> notes/plan.md
    """
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import plan_json, plan_markdown

    target = named(kb, query)
    known = kb.knowledge()
    plan = kb.plan(target, include_known=include_known, depth=depth, kb=known)
    if as_json or fmt == "json":
        emit_json(plan_json(plan))
    elif fmt == "md":
        click.echo(safe(plan_markdown(plan)), nl=False)
    elif tree:
        console().print(_tree(known, target, include_known, depth))
    else:
        _print_plan(plan, known)


def _print_plan(plan: Plan, known: Knowledge) -> None:
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import empty_sentence, skipped_sentence, totals_sentence

    out = console()
    target = plan.target
    facts = _facts(target, target.key in known.known)
    out.print(f"[bold]Reading plan for {_esc(target.title)}[/] ({_esc(facts)})")
    if not plan.steps:
        out.print(_esc(empty_sentence(plan)))
    shown_loop: tuple[str, ...] = ()
    for n, step in enumerate(plan.steps, 1):
        if step.loop and step.loop != shown_loop:
            names = ", ".join(known.docs[k].title for k in step.loop)
            out.print(f"[red]  prerequisite loop, read these together: {_esc(names)}[/]")
            shown_loop = step.loop
        doc = step.doc
        style = "dim" if step.known else "bold"
        out.print(
            f"{n:>3}. [{style}]{_esc(doc.title)}[/]  [dim]{_esc(_facts(doc, step.known))}"
            f"  ({_esc(doc.id)})[/]"
        )
        for need in step.needed_by[:3]:
            why = f": {need.reason}" if need.reason else ""
            out.print(f"       for {_esc(need.by.title)}{_esc(why)}")
        _print_readings(out, step.readings)
    if plan.target_readings:
        out.print(f"  then [bold]{_esc(target.title)}[/] itself")
        _print_readings(out, plan.target_readings)
    if plan.steps or plan.target_readings:
        out.print(_esc(totals_sentence(plan)))
    if skipped_sentence(plan):
        out.print(f"[dim]{_esc(skipped_sentence(plan))}[/]")


#: How many readings a step shows in the terminal (JSON and Markdown list them all).
SHOWN_READINGS = 3


def _print_readings(out: Any, readings: tuple[Reading, ...]) -> None:
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import counted

    for reading in readings[:SHOWN_READINGS]:
        tick = "✓" if reading.known else "·"
        verb = "read" if reading.teaches else "see"
        out.print(
            f"       {tick} {verb} {_esc(reading.doc.title)} [dim]"
            f"({_esc(_facts(reading.doc, reading.known))})[/]"
        )
    more = len(readings) - SHOWN_READINGS
    if more > 0:
        out.print(f"       [dim]… {counted(more, 'more reading')}[/]")


def _tree(kb: Knowledge, target: Document, include_known: bool, depth: int | None) -> Any:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.tree import Tree

    root = Tree(f"[bold]{_esc(target.title)}[/]")
    seen: set[str] = set()
    own = {target.key, *kb.taught.get(target.key, ())}

    def grow(node: Any, key: str, level: int) -> None:
        if depth is not None and level >= depth or key not in kb.graph:
            return
        for need in sorted(kb.graph.successors(key), key=kb.sort_key):
            known = need in kb.known
            if known and not include_known or need in own:
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
def next_(kb: Session, query: str | None, limit: int, as_json: bool) -> None:
    """What is ready now: unknown documents whose prerequisites are all known.

    With QUERY, among the steps toward it; without, across the whole vault.

    \b
    Example:
      studykb next
      studykb next fsdp2 --json
    """
    target = named(kb, query) if query else None
    steps = kb.ready(target, limit=limit)
    if as_json:
        emit_json(
            {
                "target": target.brief() if target else None,
                "next": [
                    {
                        **s.doc.brief(),
                        "level": s.doc.level,
                        "status": s.doc.status,
                        "unlocks": [n.by.id for n in s.needed_by],
                        "readings": [
                            {"id": r.doc.id, "title": r.doc.title, "url": r.doc.url}
                            for r in s.readings
                        ],
                    }
                    for s in steps
                ],
            }
        )
        raise SystemExit(0 if steps else 1)
    out = console()
    if not steps:
        out.print("nothing is ready: everything is known, or waits on something")
        raise SystemExit(1)
    for n, step in enumerate(steps, 1):
        doc = step.doc
        out.print(
            f"{n:>3}. [bold]{_esc(doc.title)}[/]  [dim]{_esc(_facts(doc))} ({_esc(doc.id)})[/]"
        )
        if step.needed_by:
            out.print("       unlocks " + _esc(", ".join(n.by.title for n in step.needed_by)))
        if step.readings:
            out.print(f"       read {_esc(step.readings[0].doc.title)}")


@cli.command()
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@json_option
@pass_kb
def after(kb: Session, query: str, limit: int, as_json: bool) -> None:
    """What to read once you know QUERY: what builds on it, ready ones first.

    QUERY counts as known whatever its status: this answers "I know DDP, what next?".
    Each line says what else it still waits on, if anything.

    \b
    Example:
      studykb after kv-cache
      studykb after ddp --json
    """
    target = named(kb, query)
    onward = kb.after(target, limit=limit)
    if as_json:
        emit_json(
            {
                "target": target.brief(),
                "after": [
                    {
                        **o.step.doc.brief(),
                        "level": o.step.doc.level,
                        "status": o.step.doc.status,
                        "ready": o.ready,
                        "waits_on": [d.id for d in o.waits_on],
                        "unlocks": [n.by.id for n in o.step.needed_by],
                        "readings": [
                            {"id": r.doc.id, "title": r.doc.title, "url": r.doc.url}
                            for r in o.step.readings
                        ],
                    }
                    for o in onward
                ],
            }
        )
        raise SystemExit(0 if onward else 1)
    out = console()
    out.print(f"[bold]After {_esc(target.title)}[/] ({_esc(_facts(target))})")
    if not onward:
        out.print(f"nothing here builds on {_esc(target.title)} that you do not know yet")
        raise SystemExit(1)
    for n, o in enumerate(onward, 1):
        doc = o.step.doc
        out.print(
            f"{n:>3}. [bold]{_esc(doc.title)}[/]  [dim]{_esc(_facts(doc))} ({_esc(doc.id)})[/]"
        )
        if o.waits_on:
            names = ", ".join(d.title for d in o.waits_on[:3])
            more = f" and {len(o.waits_on) - 3} more" if len(o.waits_on) > 3 else ""
            out.print(f"       also needs {_esc(names)}{more}")
        else:
            out.print("       ready: everything else it needs is known")
        if o.step.readings:
            out.print(f"       read {_esc(o.step.readings[0].doc.title)}")


@cli.command()
@history_options
@json_option
@pass_kb
def status(
    kb: Session, history: bool, since: str | None, commits: int, by: str, limit: int, as_json: bool
) -> None:
    """The tracker: course progress, what you are reading, what you finished, lists.

    "Finished lately" goes by the date `studykb mark` records when something becomes done.
    With --history: progress over time, from when the vault's git history marked each
    document and unit done, reading or todo.

    \b
    Example:
      studykb status
      studykb status --json
      studykb status --history --since 2026-09-01
    """
    if history:
        show_history(kb, since, commits, by, limit, as_json)
        return
    t = kb.status()
    mapped = [u for c in t.courses for u in c.units if u.meta.get("path")]
    activity = kb.repos().activity(mapped) if mapped else {}
    stated = repo_progress(kb, t)
    if as_json:
        emit_json(_status_json(t, activity, stated))
        return
    out = console()
    for title, lines, empty in (
        ("Courses", _course_lines(t, activity, stated), "(none)"),
        (
            "Reading now",
            [f"  {_esc(d.title)} [dim]({_esc(_facts(d))}; {_esc(d.id)})[/]" for d in t.reading],
            "(nothing marked reading)",
        ),
        (
            "Finished lately",
            [
                f"  {d.done + ' ' if d.done else ''}{_esc(d.title)} [dim]({_esc(d.id)})[/]"
                for d in t.finished
            ],
            "(nothing marked done)",
        ),
        (
            "Reading lists",
            [
                f"  {_esc(lp.list.title)}: {_counted(lp.items, 'pick')}, "
                f"{lp.beginner} beginner, in recommended order; {lp.read} read"
                for lp in t.lists
            ],
            "(none)",
        ),
    ):
        out.print(f"[bold]{title}[/]")
        for line in lines or [f"  {empty}"]:
            out.print(line)


def _counted(n: int, noun: str) -> str:
    # deferred: loads ahocorasick_rs, frontmatter, msgpack, numpy, scipy, yaml
    from studykb.outputs.plan_format import counted

    return counted(n, noun)


def _current(c: CourseProgress, activity: dict[str, Activity]) -> list[Document]:
    """The units being read: marked ``reading``, or not done with recent commits."""
    active = {k for k, a in activity.items() if a.active}
    return [u for u in c.units if u in c.current or (u.key in active and u.status != "done")]


def _course_lines(t: Tracker, activity: dict[str, Activity], stated: dict[str, Any]) -> list[str]:
    lines = []
    for c in t.courses:
        filled = round(20 * c.done / c.total) if c.total else 0
        lines.append(
            f"  {'█' * filled}{'░' * (20 - filled)} {c.done:>2}/{c.total:<2} {_esc(c.course.title)}"
        )
        if c.course.key in stated:  # its repository's `progress` file
            lines.append(f"{'':28}{_esc(stated[c.course.key].line())}")
        lines.extend(f"{'':28}reading: {_esc(unit.title)}" for unit in _current(c, activity))
        for unit in c.units:
            act = activity.get(unit.key)
            if act is not None:
                when = f"last commit {act.date}" if act.date else "no commits"
                busy = " [green](active)[/]" if act.active else ""
                lines.append(
                    f"{'':28}{_esc(unit.title)}: {when} in {_esc(', '.join(act.paths))}{busy}"
                )
    return lines


def _unit_json(u: Document, act: Activity | None) -> dict[str, Any]:
    """A unit in ``status --json``; ``activity`` where it maps to a cloned repository."""
    out = {**u.brief(), "status": u.status, "done": u.done}
    if act is not None:
        out["activity"] = {
            "paths": list(act.paths),
            "date": act.date,
            "commit": act.commit,
            "active": act.active,
        }
    return out


def _status_json(
    t: Tracker, activity: dict[str, Activity], stated: dict[str, Any]
) -> dict[str, Any]:
    return {
        "courses": [
            {
                **c.course.brief(),
                "done": c.done,
                "total": c.total,
                "current": [u.id for u in _current(c, activity)],
                "units": [_unit_json(u, activity.get(u.key)) for u in c.units],
                **({"progress": stated[c.course.key].as_json()} if c.course.key in stated else {}),
            }
            for c in t.courses
        ],
        "reading": [{**d.brief(), "status": d.status} for d in t.reading],
        "finished": [{**d.brief(), "done": d.done, "date": d.date} for d in t.finished],
        "lists": [
            {**lp.list.brief(), "items": lp.items, "read": lp.read, "beginner": lp.beginner}
            for lp in t.lists
        ],
    }


@cli.command()
@click.argument("query")
@click.argument("state", type=click.Choice(["done", "reading", "todo"]))
@json_option
@pass_kb
def mark(kb: Session, query: str, state: str, as_json: bool) -> None:
    """Set a document's status (done, reading or todo) in its front matter.

    Only the status line changes (or is added), and becoming done records the date in
    `done:` (which `status` shows under "Finished lately"); every other byte is kept. A
    course unit is written COURSE#UNIT.

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


@cli.command()
@click.argument("question", nargs=-1, required=True)
@json_option
@click.pass_context
def ask(ctx: click.Context, question: tuple[str, ...], as_json: bool) -> None:
    """Ask in English or Chinese; the question is read as before, after, next, related,
    what something is, or status.

    It is read by its parts: what it asks and in which direction (before / prerequisites
    / 之前 / 需要哪些基础; after / I know X, what next / 学完 / 之后; next / 下一步;
    related / 相关; what is / 是什么; progress / 进度), and a target named like any
    reference. When the target is read loosely or is only part of what was typed, it
    says which document it was read as (on standard error).

    \b
    Example:
      studykb ask "what should I read before FSDP2"
      studykb ask "在学 FSDP2 之前要读什么"
      studykb ask "I know DDP, what next?"
      studykb ask "学完 KV cache 之后学什么"
      studykb ask "what is PagedAttention"
      studykb ask "下一步读什么"
      studykb ask "我的学习进度"
    """
    kb = ctx.obj.kb()
    asked = kb.ask(" ".join(question))
    command = asked.command
    kwargs: dict[str, Any] = {"as_json": as_json}
    if asked.target is not None:
        doc = _asked_target(kb, asked.target, asked.typed)
        kwargs["query"] = doc.key if doc is not None else asked.target
        if command == "about":
            command = "topic" if doc is not None and doc.type == "topic" else "show"
    elif command == "next":
        kwargs["query"] = None
    cmd = cli.get_command(ctx, command)
    if cmd is None:
        raise UsageError(f"'{command}' is not available in this installation")
    ctx.invoke(cmd, **kwargs)


def _asked_target(kb: Session, target: str, typed: str | None) -> Document | None:
    """The document a question's target names, saying (on standard error) what the
    question was read as when the target is read loosely or is only part of the words
    typed ("paged attention kernels"); None when nothing fits (the command then says
    so, with suggestions)."""
    try:
        looked = kb.lookup(target)
    except NotFound:
        return None
    if typed:
        how = f"the words {target!r}" + (f", {looked.how}" if looked.how else "")
        looked = replace(looked, typed=typed, how=how)
    if not looked.exact:
        click.echo(safe(f"studykb: {looked.note()}"), err=True)
    return looked.doc
