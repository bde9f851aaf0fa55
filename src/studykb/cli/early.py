"""A command's refresh, started before the command line is parsed (no click here).

Most commands begin by bringing the state up to date. In a fresh process on two
cores, :func:`start` opens the vault and starts that refresh beside this process
(:meth:`studykb.session.Session.refresh_ahead`) before click and the command's own
modules load; the command takes it over when it asks for the knowledge base
(:meth:`studykb.cli.app.Context.kb`). Whatever goes wrong here is left for the
command to meet again and report in its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studykb.api import Session
    from studykb.vault import Ahead

#: The options after which a command does not run (help, version).
_NOT_RUNNING = frozenset({"-h", "--help", "--version"})


@dataclass
class Early:
    """The vault a command line names, opened, and its refresh under way (or None)."""

    vault_dir: str | None
    """The ``--vault`` value it was opened with."""
    kb: Session
    ahead: Ahead | None

    def discard(self) -> None:
        """Not taken (bad usage): let the refresh finish, and close the vault."""
        try:
            if self.ahead is not None:
                self.ahead.result()
        finally:
            self.kb.close()


def start(argv: list[str]) -> Early | None:
    """Open the vault of a command line whose command begins with a refresh, and start
    that refresh; None for any other command line, or when the vault cannot be opened
    here (the command opens it again and says why)."""
    from studykb.editor.client import FORWARDED, split_argv

    vault_dir, command = split_argv(argv)
    if command not in FORWARDED or _NOT_RUNNING.intersection(argv):
        return None
    from studykb.api import Session

    try:
        kb = Session.open(vault_dir)
    except Exception:  # noqa: BLE001 - met again, and reported, by the command
        return None
    try:
        return Early(vault_dir, kb, kb.refresh_ahead())
    except BaseException:
        kb.close()
        raise
