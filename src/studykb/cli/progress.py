"""``studykb status --history``: progress over time from the vault's own git history."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from studykb.cli.app import console, emit_json

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.repos.progress import RepoProgress
    from studykb.study.tracker import Tracker

#: Events the text shows, the latest ones.
EVENTS = 10


def history_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options of ``status`` that ask for the history."""
    for option in reversed(
        (
            click.option(
                "--history",
                is_flag=True,
                help="Progress over time from the vault's git history, as a chart.",
            ),
            click.option("--since", metavar="DATE", help="With --history: from DATE (YYYY-MM-DD)."),
            click.option(
                "--commits",
                type=click.IntRange(min=1),
                default=2000,
                show_default=True,
                help="With --history: walk at most N commits back from HEAD.",
            ),
            click.option(
                "--by",
                type=click.Choice(["auto", "day", "week", "month"]),
                default="auto",
                show_default=True,
                help="With --history: one bar a day, a week or a month.",
            ),
            click.option(
                "--limit",
                type=click.IntRange(min=0),
                default=EVENTS,
                show_default=True,
                help="With --history: the latest N changes shown (--json has them all).",
            ),
        )
    ):
        func = option(func)
    return func


def show_history(
    kb: Session, since: str | None, commits: int, by: str, limit: int, as_json: bool
) -> None:
    # deferred: rich loads in ~0.1 s; only terminal output needs it
    from rich.markup import escape

    # deferred: only the history needs the chart
    from studykb.outputs.progress import change, chart_lines, history_json, legend

    found = kb.repos().history(since, commits)
    if as_json:
        emit_json(history_json(found))
        return
    out = console()
    out.print("[bold]Progress[/]")
    out.print(f"  [dim]{escape(legend(found, by))}[/]")
    for line in chart_lines(found, by):
        out.print(f"  {escape(line)}")
    shown = found.events[-limit:] if limit else ()
    if shown:
        out.print(f"[bold]Latest changes[/] [dim](of {len(found.events)})[/]")
    for event in reversed(shown):
        out.print(
            f"  {event.date} {event.commit[:7]}  {escape(change(event)):<18} "
            f"{escape(event.title)} [dim]({escape(event.id)})[/]"
        )


def repo_progress(kb: Session, t: Tracker) -> dict[str, RepoProgress]:
    """The progress each course's repository states in its ``progress`` file, by the
    course's key; the repositories are not looked at when no ``progress`` is named."""
    courses = [c.course for c in t.courses]
    named = kb.config.repo_progress or any(
        isinstance(c.meta.get("repo"), dict) and "progress" in c.meta["repo"] for c in courses
    )
    return kb.repos().progress([c.key for c in courses]) if named and courses else {}
