"""What ``studykb site`` loads while the refresh runs beside it (the site's start-up
seam): steps, each taken only while the refresh is still running
(:meth:`studykb.cli.app.Context.kb`), so a site with nothing changed, whose refresh is
short, loads little it does not use. Nothing here reads the state: the ranking code
and what the cache keeps for it (:meth:`studykb.session.Session.warm_lists`), then the
document page's template, compiled (the first page made again needs it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.api import Session


def steps(kb: Session) -> Iterator[None]:
    """The steps, in the order a site made again after an edit needs them."""
    yield from kb.warm_lists()
    yield
    from studykb.web.templating import environment

    environment().get_template("document.html")
