"""The ``studykb`` command (the only package that imports click and rich).

:func:`main` is the entry point. It imports nothing heavy: while ``studykb watch`` runs,
a command is answered by the watch's process (:mod:`studykb.launch`), and the
command line is only parsed here when it is not. The group, the shared options and
the one error handler are in :mod:`studykb.cli.app`; the commands, 10-30 lines each,
in modules by area.
"""

from __future__ import annotations

import sys

from studykb.launch import Launch, forward, start_early
from studykb.runtime.exit import leave


def main() -> None:
    code: int | str | None = forward(sys.argv[1:])  # a running watch answers
    if code is None:
        launch = Launch(early=start_early(sys.argv[1:]))  # the refresh runs while click loads
        # deferred: loads click
        from studykb.cli.app import run

        try:
            run(launch)
            code = 0
        except SystemExit as exc:
            code = exc.code
        finally:
            early = launch.take_early()
            if early is not None:  # not taken: bad usage
                early.discard()
    leave(code)
