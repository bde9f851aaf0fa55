"""Naming a document on the command line: as written, else loosely, said aloud."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from studykb.cli.app import safe

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.model import Document


def named(kb: Session, query: str) -> Document:
    """The document ``query`` names for a command that reads (before, related, show...):
    as written, else loosely, saying on standard error which document it was read as
    and what else fitted (standard output keeps the command's own format)."""
    looked = kb.lookup(query)
    if not looked.exact:
        click.echo(safe(f"studykb: {looked.note()}"), err=True)
    return looked.doc
