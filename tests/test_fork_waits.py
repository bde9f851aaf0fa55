"""A fork of this process waits for the work finishing in background threads
(:class:`studykb.runtime.background.Later`): a child forked while such a thread holds
SQLite's or the allocator's lock would hang on it."""

from __future__ import annotations

import os
import threading

import pytest

from studykb.runtime.background import Later


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_fork_lets_the_finishing_threads_end_first() -> None:
    started = threading.Event()
    release = threading.Event()
    done: list[str] = []

    def work() -> None:
        started.set()
        release.wait(10)
        done.append("done")

    later = Later()
    later.start(work, "finishing")
    started.wait(10)
    # let the thread go only a little after fork() is called: fork must wait for it
    timer = threading.Timer(0.2, release.set)
    timer.start()
    pid = os.fork()
    if pid == 0:  # the child: nothing to do
        os._exit(0)
    assert done == ["done"]  # the parent's thread had ended before the fork
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    timer.join()
    later.join()
