"""The ``studykb`` command (the only package that imports click and rich).

:func:`main` is the entry point. It imports nothing heavy: while ``studykb watch`` runs,
a command is answered by the watch's process (:mod:`studykb.editor.client`), and the
command line is only parsed here when it is not. The group, the shared options and
the one error handler are in :mod:`studykb.cli.app`; the commands, 10-30 lines each,
in modules by area.
"""

from __future__ import annotations

import sys


def main() -> None:
    from studykb.editor.client import forward
    from studykb.runtime.exit import leave

    code: int | str | None = forward(sys.argv[1:])
    if code is None:
        from studykb.cli import early

        started = early.start(sys.argv[1:])  # the refresh runs while click loads
        from studykb.cli.app import Context, run

        Context.early = started
        try:
            run()
            code = 0
        except SystemExit as exc:
            code = exc.code
        finally:
            if Context.early is not None:  # not taken: bad usage
                Context.early.discard()
    leave(code)
