"""The process seams (studykb.runtime.pools): results come back in order, from other
processes, and failures reach the caller."""

from __future__ import annotations

import os
import time

import pytest

from studykb.runtime import pools


def _square(n: int) -> int:
    return n * n


def _pid_and(value: list[int]) -> tuple[int, int]:
    return os.getpid(), sum(value)


def _slow_pid_and(value: list[int]) -> tuple[int, int]:
    time.sleep(0.3)  # a large item: long enough for the other worker to be there
    return _pid_and(value)


def _fail(_value: object) -> None:
    raise ValueError("broken on purpose")


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_imap_spreads_a_few_large_items_over_the_workers() -> None:
    """Four items for two workers: both work (they once all went to one worker)."""
    pids = list(pools.imap(_slow_pid_and, [[1], [2], [3], [4]], workers=2, at_least=1))
    assert [total for _pid, total in pids] == [1, 2, 3, 4]
    assert len({pid for pid, _total in pids}) == 2
    assert os.getpid() not in {pid for pid, _total in pids}


def test_imap_gives_results_in_order() -> None:
    assert list(pools.imap(_square, list(range(200)), workers=2)) == [n * n for n in range(200)]


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_runs_in_another_process_with_what_this_one_holds() -> None:
    held = list(range(1000))  # inherited, never pickled on the way in
    running = pools.beside(_pid_and, held)
    held.append(10**6)  # this process goes on; the worker has its own copy
    pid, total = running.result()
    assert pid != os.getpid()
    assert total == sum(range(1000))


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_gives_the_workers_failure_to_the_caller() -> None:
    running = pools.beside(_fail, None)
    with pytest.raises(ValueError, match="broken on purpose"):
        running.result()


def test_beside_without_fork_runs_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pools, "can_fork", lambda: False)
    pid, total = pools.beside(_pid_and, [1, 2, 3]).result()
    assert (pid, total) == (os.getpid(), 6)


def _die(_value: object) -> None:
    os._exit(3)  # the process ends without a word: killed, out of memory


def _unsendable(_value: object) -> object:
    return lambda: None  # a value pickle cannot carry back


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_says_when_the_process_died_without_an_answer() -> None:
    with pytest.raises(RuntimeError, match="without an answer"):
        pools.beside(_die, None).result()


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_says_when_the_answer_cannot_come_back() -> None:
    with pytest.raises(RuntimeError, match="unsendable"):
        pools.beside(_unsendable, None).result()


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_leaves_no_process_behind() -> None:
    running = pools.beside(_pid_and, [1])
    pid, _total = running.result()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped by result(): no zombie left


def test_beside_helps_only_alone_on_several_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    # threads this test did not start (an earlier test's, pytest-xdist's own) are left out
    # of the count, whenever they end; the thread started below is counted for real
    before = set(threading.enumerate())
    monkeypatch.setattr(
        threading, "active_count", lambda: 1 + sum(t not in before for t in threading.enumerate())
    )
    monkeypatch.setattr(pools, "cores", lambda: 2)
    assert pools.beside_helps() == pools.can_fork()
    monkeypatch.setattr(pools, "cores", lambda: 1)
    assert not pools.beside_helps()
    monkeypatch.setattr(pools, "cores", lambda: 2)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not pools.beside_helps()  # a fork would copy only this thread
    finally:
        stop.set()
        other.join()


class _Own(Exception):
    pass


def _fail_own(_value: object) -> None:
    raise _Own("one of ours")


@pytest.mark.skipif(not pools.can_fork(), reason="needs fork")
def test_beside_answers_with_plain_data_only() -> None:
    """Nothing that crosses the pipe can run code: the answer is JSON, and an exception
    of a kind not built in comes back as a RuntimeError naming it."""
    assert pools.beside(_pid_and, [2, 3]).result()[1] == 5
    assert isinstance(pools.beside(_pid_and, [1]).result(), list)  # a tuple, as JSON
    with pytest.raises(RuntimeError, match="_Own: one of ours"):
        pools.beside(_fail_own, None).result()
