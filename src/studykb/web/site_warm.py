"""What ``studykb site`` loads while the refresh runs beside it (the site's start-up
seam): steps, each taken only while the refresh is still running
(:meth:`studykb.cli.app.Context.kb`), so a site with nothing changed, whose refresh is
short, loads little it does not use. Nothing here reads the state: the site's manifest
(:func:`studykb.web.site_output.read_ahead`), the ranking code
and what the cache keeps for it (:meth:`studykb.session.Session.warm_lists`), then the
document page's template, compiled (the first page made again needs it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from studykb.web.site_output import read_ahead

if TYPE_CHECKING:
    from pathlib import Path

    from studykb.api import Session


def steps(kb: Session, out: Path) -> Iterator[None]:
    """The steps, in the order a site made again needs them: the manifest of the site
    in ``out`` first (every second run reads it), then what an edit needs."""
    read_ahead(out)
    yield
    yield from kb.warm_lists()
    yield
    from studykb.web.templating import environment  # deferred: a step of its own (jinja2)

    environment().get_template("document.html")
