"""Doing many independent things on every core: the one place studykb starts processes.

* :func:`imap` runs a function over many items in forked worker processes and yields
  the results in order as they come (parsing files, analysing texts);
* :func:`map_shared` runs a function over chunks in forked workers that inherit a
  large read-only object (the related-documents ranker), instead of pickling it;
  :func:`imap_shared` the same, its results given in order as they come, so the caller
  holds a few at a time;
* :func:`beside` starts one function in a forked process that inherits what this one
  has loaded, and gives its result when asked, so that this process can go on with
  something else meanwhile (a site's search index while the ranker loads);
* :func:`python_workers` runs jobs in fresh, isolated interpreters (``python -I -c``),
  for work whose worker must not inherit this process's memory (the search index's
  segments); nothing they import can come from the vault or the working folder;
  :func:`python_stream` streams frames of plain data through a few such interpreters
  and gives their answers in order (the text analysis of a full build, whose parent
  holds the whole parsed vault by then: a fork would count it once more per worker).

Below a threshold, or without ``fork``, everything runs in this process: the results
are the same, only slower.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

from studykb.runtime.memory import collector_on

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    return hasattr(os, "fork")


def cores() -> int:
    return os.cpu_count() or 1


def imap(
    func: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    progress: Callable[[int, int], None] | None = None,
    at_least: int = 64,
) -> Iterator[R]:
    """``func(item)`` of every item, in order, using ``workers`` forked processes when
    there are at least ``at_least`` items; ``progress(done, total)`` after each."""
    total = len(items)
    if total < at_least or workers < 2 or not can_fork():
        results: Iterable[R] = map(func, items)
    else:
        results = _forked(func, items, workers)
    for n, result in enumerate(results, 1):
        if progress:
            progress(n, total)
        yield result


def _forked(func: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    # deferred: worker processes: loaded only where they start
    import multiprocessing as mp

    # about eight chunks a worker (at most 64 items each), so the workers finish nearly
    # together; a few large items (the text analysis hands over a few big lists) go one
    # at a time, else one worker would take them all
    chunk = max(1, min(64, len(items) // (workers * 8)))
    # workers switch their collector on: the parent may have paused its own (paused_gc)
    with mp.get_context("fork").Pool(workers, initializer=collector_on) as pool:
        yield from pool.imap(func, items, chunksize=chunk)


_SHARED: dict[str, Any] = {}
#: How many frames a worker of :func:`python_stream` is handed ahead of the answer read.
STREAM_AHEAD = 2


def map_shared(
    func: Callable[[Any, list[T]], list[R]], shared: Any, chunks: list[list[T]], workers: int
) -> list[list[R]]:
    """``func(shared, chunk)`` for every chunk, in forked workers that inherit ``shared``
    (nothing is pickled but the chunks and the results); in this process without fork."""
    if workers < 2 or not can_fork():
        return [func(shared, chunk) for chunk in chunks]
    # deferred: worker processes: loaded only where they start
    import multiprocessing as mp

    _SHARED["value"], _SHARED["func"] = shared, func
    try:
        with mp.get_context("fork").Pool(workers, initializer=collector_on) as pool:
            return pool.map(_run_shared, chunks)
    finally:
        _SHARED.clear()


def imap_shared(
    func: Callable[[Any, list[T]], list[R]], shared: Any, chunks: list[list[T]], workers: int
) -> Iterator[list[R]]:
    """``func(shared, chunk)`` of every chunk, in order, as they are done (forked workers
    inheriting ``shared``, as :func:`map_shared`): the caller can use each result and let
    it go before the next, so that what is held at once is a few chunks' results, not
    all of them. In this process without fork."""
    if workers < 2 or not can_fork():
        for chunk in chunks:
            yield func(shared, chunk)
        return
    # deferred: worker processes: loaded only where they start
    import multiprocessing as mp

    _SHARED["value"], _SHARED["func"] = shared, func
    try:
        # what the workers inherit is never walked by their collections (nor copied for them)
        with mp.get_context("fork").Pool(workers, initializer=_frozen_collector_on) as pool:
            yield from pool.imap(_run_shared, chunks)
    finally:
        _SHARED.clear()


def _run_shared(chunk: list[Any]) -> list[Any]:
    func: Callable[[Any, list[Any]], list[Any]] = _SHARED["func"]
    return func(_SHARED["value"], chunk)


class Beside:
    """A function running in a forked process; :meth:`result` waits for what it returns
    (or raises what it raised).

    The child is a bare ``os.fork()``: it inherits every module this process loaded and
    starts at once (a ``multiprocessing`` pool cost ~25 ms more to set up), hands its
    answer back as JSON through a pipe (plain data only: nothing that crosses can run
    code), and leaves with ``os._exit``: no flush of inherited buffers, no ``atexit``
    handler, no close of an inherited connection.
    """

    def __init__(self, func: Callable[[Any], Any], shared: Any) -> None:
        self._pid: int | None = None
        self._value: Any = None
        if not can_fork():
            self._value = func(shared)
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            _answer(write, func, shared)
        os.close(write)
        self._pid, self._pipe = pid, read

    def ready(self) -> bool:
        """Whether :meth:`result` would answer at once: the child wrote its answer or
        ended (nothing is read)."""
        if self._pid is None:
            return True
        import select  # deferred: only a caller that asks loads it

        readable, _writable, _failed = select.select([self._pipe], [], [], 0)
        return bool(readable)

    def result(self) -> Any:
        if self._pid is None:
            return self._value
        try:
            with open(self._pipe, "rb") as pipe:
                data = pipe.read()
        finally:
            _pid, status = os.waitpid(self._pid, 0)
            self._pid = None
        if not data:
            raise RuntimeError(f"the forked process ended without an answer (status {status})")
        answer = json.loads(data)
        if "error" in answer:
            raise _failure(answer["error"], answer["message"])
        return answer["value"]


def _failure(kind: str, message: str) -> BaseException:
    """The child's exception, as one of the same built-in kind (else a RuntimeError)."""
    found = getattr(builtins, kind, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found(message)
    return RuntimeError(f"{kind}: {message}")


def _answer(pipe: int, func: Callable[[Any], Any], shared: Any) -> NoReturn:
    """In the child: run ``func(shared)``, write its value (JSON) or its failure, exit."""
    code = 1
    try:
        _frozen_collector_on()
        try:
            out: dict[str, Any] = {"value": func(shared)}
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, raised there
            out = {"error": type(exc).__name__, "message": str(exc)}
        try:
            data = json.dumps(out)
        except (TypeError, ValueError) as exc:  # an answer that is not plain data
            data = json.dumps({"error": "RuntimeError", "message": f"unsendable answer: {exc}"})
        with open(pipe, "wb") as sink:
            sink.write(data.encode())
        code = 0
    finally:
        os._exit(code)


def beside(func: Callable[[Any], R], shared: Any) -> Beside:
    """``func(shared)`` started in a forked process (in this one without fork, at once);
    ``.result()`` gives what it returned: plain data (JSON: dicts, lists, strings,
    numbers, None; tuples come back as lists)."""
    return Beside(func, shared)


def beside_helps() -> bool:
    """Whether work run :func:`beside` this process can go faster: fork, a second core,
    and no other thread here (a fork copies only the calling thread; a lock another
    one held would stay locked in the child)."""
    # deferred: only this path starts threads
    import threading

    return can_fork() and cores() > 1 and threading.active_count() == 1


def _frozen_collector_on() -> None:
    """What the worker inherited is never walked by its collections (nor copied for
    them); what it makes is collected as usual."""
    # deferred: collector tuning on this path only
    import gc

    gc.freeze()
    collector_on()


def python_workers(entry: str, jobs: Sequence[tuple[str, ...]], workers: int = 2) -> list[int]:
    """Run ``python -I -c "...; from MODULE import FUNC; FUNC()" ARGS...`` for each job's
    arguments, ``workers`` at a time; the exit codes, in job order.

    Each worker is a fresh interpreter: a worker forked from this process would inherit
    everything it holds (the parsed vault, maybe a caller's graph), doubling the memory
    of the process tree; multiprocessing's spawn and forkserver methods re-run the
    caller's main script, which hangs a caller without a ``__main__`` guard.
    ``entry`` is ``"module:function"``.

    A worker never imports from the vault or the working folder (a ``json.py`` in a
    cloned vault must not run): it starts isolated (``-I``: no working folder or script
    folder on ``sys.path``, no ``PYTHON*`` variables, no user site), in the file
    system's root, and its path is the interpreter's own plus only the folder this
    studykb was imported from (:func:`worker_path`).
    """
    # deferred: only this path runs a program
    import subprocess

    # deferred: worker pools: loaded only where they start
    from concurrent.futures import ThreadPoolExecutor

    argv, place = _fresh(entry)

    def one(args: tuple[str, ...]) -> int:
        done = subprocess.run(
            [*argv, *args], **place, stdin=subprocess.DEVNULL, capture_output=True, check=False
        )
        if done.returncode != 0:
            raise _failed(done.stderr)
        return done.returncode

    with ThreadPoolExecutor(max(1, workers)) as pool:
        return list(pool.map(one, jobs))


def _fresh(entry: str) -> tuple[list[str], dict[str, Any]]:
    """The command line of a fresh isolated worker running ``entry`` (``"module:function"``),
    and where it runs (``env``, ``cwd``): see :func:`python_workers`."""
    module, func = entry.split(":")
    code = f"import sys; sys.path[:0] = {worker_path()!r}; from {module} import {func}; {func}()"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return [sys.executable, "-I", "-c", code], {"env": env, "cwd": os.path.abspath(os.sep)}


def _failed(stderr: bytes) -> RuntimeError:
    """A fresh worker's failure, with the last line of its errors."""
    tail = stderr.decode(errors="replace").strip().splitlines()[-1:]
    return RuntimeError(f"a worker failed: {' '.join(tail)}")


def worker_path() -> list[str]:
    """What a fresh worker adds to its isolated interpreter's path: the folder holding
    the ``studykb`` package this process runs (an install from source, or ``src/`` on
    ``PYTHONPATH``), and nothing else of this process's path."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # studykb/
    return [os.path.dirname(package)]


def python_stream(entry: str, first: Any, frames: Iterable[Any], workers: int = 2) -> Iterator[Any]:
    """``FUNC(frame)`` of every frame, in order, as they come, computed in ``workers``
    fresh isolated interpreters (as :func:`python_workers` starts them); ``entry`` is
    ``"module:function"``, a function that calls :func:`serve_frames`.

    Frames and answers are plain data, a line of JSON each (nothing that crosses can
    run code). Every worker is sent ``first`` (what it sets itself up with), then frame
    ``i`` goes to worker ``i % workers``, from a thread, while this one reads the answers
    in frame order: what is held at once is the frames not yet sent and a pipe's worth
    of answers. A worker that fails raises RuntimeError with the end of its errors.
    """
    # deferred: only this path runs programs
    import subprocess
    import tempfile  # deferred: as above (the workers' errors)
    import threading  # deferred: as above (the thread feeding them)

    argv, place = _fresh(entry)
    with contextlib.ExitStack() as stack:
        errors = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(max(1, workers))]
        procs = [
            stack.enter_context(
                subprocess.Popen(
                    argv,
                    **place,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                )
            )
            for err in errors
        ]
        stack.callback(_ended, procs)  # run first: a worker still going is stopped
        yield from _answers(procs, errors, first, frames, threading)


def _answers(
    procs: list[Any], errors: list[Any], first: Any, frames: Iterable[Any], threading: Any
) -> Iterator[Any]:
    """Hand the frames to a thread that writes them to the workers (taken from
    ``frames`` here, at most :data:`STREAM_AHEAD` a worker ahead of the answers read);
    the answers, read here in frame order."""
    # deferred: only this path hands frames to a thread
    import queue

    todo: queue.SimpleQueue[Any] = queue.SimpleQueue()
    failed: list[BaseException] = []
    end = object()

    def feed() -> None:
        try:
            for proc in procs:
                proc.stdin.write(_line(first))
                proc.stdin.flush()
            n = 0
            while (frame := todo.get()) is not end:
                stdin = procs[n % len(procs)].stdin
                stdin.write(_line(frame))
                stdin.flush()
                n += 1
        except BrokenPipeError:  # a worker gone (its error is read below)
            pass
        except BaseException as exc:  # noqa: BLE001 - raised by the reading thread
            failed.append(exc)
        finally:
            for proc in procs:
                with contextlib.suppress(OSError, ValueError):
                    proc.stdin.close()

    feeder = threading.Thread(target=feed, name="studykb-frames", daemon=True)
    feeder.start()
    source = iter(frames)
    sent, n, done = 0, 0, False
    try:
        while True:
            while not done and sent < n + STREAM_AHEAD * len(procs):
                frame = next(source, end)
                todo.put(frame)
                done, sent = frame is end, sent + (frame is not end)
            if done and n >= sent:
                break
            worker = n % len(procs)
            answer = procs[worker].stdout.readline()
            if not answer:  # the worker ended before answering: stop them all
                _ended(procs)
                feeder.join()
                if failed:
                    raise failed[0]
                raise _stream_failure(procs[worker], errors[worker])
            n += 1
            yield json.loads(answer)
    finally:
        if not done:
            todo.put(end)  # the feeder ends (the caller stopped early, or a failure)
    feeder.join()
    if failed:
        raise failed[0]
    for proc, err in zip(procs, errors, strict=True):
        if proc.wait() != 0:
            raise _stream_failure(proc, err)


def _line(value: Any) -> bytes:
    """One frame or answer of :func:`python_stream`: a line of JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _ended(procs: list[Any]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _stream_failure(proc: Any, err: Any) -> RuntimeError:
    """What a worker of :func:`python_stream` that ended too soon said last."""
    if proc.wait() != 0:
        err.seek(0)
        return _failed(err.read())
    return RuntimeError("a worker ended before answering every frame")


def serve_frames(setup: Callable[[Any], Any], each: Callable[[Any, Any], Any]) -> None:
    """The loop of a :func:`python_stream` worker: ``state = setup(first)``, then
    ``each(state, frame)`` of every frame, written back at once, until the input ends."""
    out = sys.stdout.buffer
    lines = iter(sys.stdin.buffer.readline, b"")
    state = setup(json.loads(next(lines)))
    for frame in lines:
        out.write(_line(each(state, json.loads(frame))))
        out.flush()
