"""Helpers shared by the benchmark scripts: timing child processes, their peak memory, tables.

    from common import Run, run, repeat, Table, ratio

``run(cmd)`` times one child process end to end (wall clock, interpreter start and
imports included) and measures its memory two ways:

* ``rss_mb``: the largest resident set of any single process of the tree: the
  ``VmHWM`` high-water mark of each process, sampled from ``/proc`` every few
  milliseconds (``ru_maxrss`` is not used when a sample exists: Linux keeps the
  forking parent's peak across ``exec``, so it reports at least the size of the
  benchmark script itself);
* ``tree_mb``: the peak of the *sum* of resident sets of the child and its live
  descendants, sampled likewise (what a parallel build really costs; a short-lived
  peak between two samples can be missed).

It also reports ``cpu`` seconds (user + system of the child and the children it
reaped, e.g. a worker pool), which a busy machine disturbs less than wall time.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

Cmd = Sequence[str]


@dataclass
class Run:
    """One timed child process."""

    seconds: float
    rss_mb: float
    tree_mb: float
    returncode: int
    cpu: float = 0.0
    stdout: str = ""
    stderr: str = ""


@dataclass
class Timing:
    """Several runs of one command."""

    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def best(self) -> float:
        return min(r.seconds for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    @property
    def rss_mb(self) -> float:
        return max(r.rss_mb for r in self.runs)

    @property
    def tree_mb(self) -> float:
        return max(r.tree_mb for r in self.runs)

    def spread(self) -> str:
        secs = sorted(r.seconds for r in self.runs)
        return f"{secs[0]:.3f}-{secs[-1]:.3f}"


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _mem_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of one process in KB; zeros when it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return rss, hwm


def _tree_kb(pid: int) -> tuple[int, int]:
    """(sum of VmRSS, largest VmHWM) over the process and its descendants."""
    total, top, stack, seen = 0, 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        rss, hwm = _mem_kb(p)
        total += rss
        top = max(top, hwm)
        stack.extend(_children(p))
    return total, top


def run(
    cmd: Cmd,
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    check: bool = False,
    ok_codes: tuple[int, ...] = (0,),
    sample: float = 0.005,
) -> Run:
    """Run ``cmd`` once; wall time, peak memory, exit code and output."""
    full_env = dict(os.environ, **(env or {}))
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    peak = [0, 0]  # tree sum, single-process high-water mark
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            tree, hwm = _tree_kb(proc.pid)
            peak[0] = max(peak[0], tree)
            peak[1] = max(peak[1], hwm)
            done.wait(sample)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    # read the pipes in threads so a chatty child never blocks; reap with wait4 for rusage
    outs: dict[str, bytes] = {}

    def reader(name: str, stream) -> None:  # type: ignore[no-untyped-def]
        outs[name] = stream.read()

    readers = [
        threading.Thread(target=reader, args=("out", proc.stdout)),
        threading.Thread(target=reader, args=("err", proc.stderr)),
    ]
    for r in readers:
        r.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    for r in readers:
        r.join()
    thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    single = peak[1] or usage.ru_maxrss  # no sample: a very short run
    result = Run(
        seconds,
        single / 1024,
        max(peak[0], single) / 1024,
        proc.returncode,
        cpu=usage.ru_utime + usage.ru_stime,
        stdout=outs.get("out", b"").decode(errors="replace"),
        stderr=outs.get("err", b"").decode(errors="replace"),
    )
    if check and result.returncode not in ok_codes:
        raise RuntimeError(
            f"{shlex.join(cmd)} exited {result.returncode}:\n{result.stderr[-2000:]}"
        )
    return result


def repeat(
    cmd: Cmd, n: int, *, before: Callable[[], None] | None = None, warmup: int = 0, **kwargs
) -> Timing:  # type: ignore[no-untyped-def]
    """Run ``cmd`` ``warmup`` + ``n`` times (``before()`` ahead of each); keep the last ``n``."""
    timing = Timing()
    for i in range(warmup + n):
        if before:
            before()
        result = run(cmd, **kwargs)
        if i >= warmup:
            timing.runs.append(result)
    return timing


def interleave(
    cmds: dict[str, Cmd],
    n: int,
    *,
    before: dict[str, Callable[[], None]] | None = None,
    warmup: int = 0,
    **kwargs,
) -> dict[str, Timing]:  # type: ignore[no-untyped-def]
    """Run several commands in turns (a, b, a, b...), so a busy machine disturbs them alike."""
    before = before or {}
    out = {name: Timing() for name in cmds}
    for i in range(warmup + n):
        for name, cmd in cmds.items():
            if name in before:
                before[name]()
            result = run(cmd, **kwargs)
            if i >= warmup:
                out[name].runs.append(result)
    return out


#: Environment of a fresh ``studykb`` process that never asks a running watch.
LOCAL = {"NO_COLOR": "1", "STUDYKB_LOCAL": "1"}
#: Environment of a ``studykb`` process that hands its command to a running watch.
SERVED = {"NO_COLOR": "1", "STUDYKB_LOCAL": ""}


@contextlib.contextmanager
def watching(studykb: Sequence[str], vault: str, timeout: float = 300.0) -> Iterator[None]:
    """``studykb watch`` running on ``vault`` (and answering commands) during the block."""
    import signal

    proc = subprocess.Popen(
        [*studykb, "--vault", vault, "watch", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, NO_COLOR="1"),
    )
    sock = os.path.join(vault, ".studykb", "serve.sock")
    deadline = time.monotonic() + timeout
    try:
        while not os.path.exists(sock):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("studykb watch did not start serving")
            time.sleep(0.05)
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def precompile() -> str:
    """Compile studykb's modules to bytecode once, as a regular install does.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on the machines these figures come from),
    an editable install would compile every module again in every timed process, which
    no installed copy does (pip compiles at install time). Returns a line to print.
    """
    import compileall

    import studykb

    folder = os.path.dirname(studykb.__file__)
    compileall.compile_dir(folder, quiet=1)
    return f"bytecode of {folder} compiled up front (as pip does at install time)"


def preamble() -> None:
    """Print what the figures depend on (Python, cores, load, bytecode), compiling first."""
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}, PYTHONDONTWRITEBYTECODE="
        f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')}"
    )
    print(precompile())


def report(table: Table, figures: object, markdown: bool, json_out: str | None) -> None:
    """Print the table (also as Markdown when asked) and write the figures as JSON."""
    import json

    table.print()
    if markdown:
        print()
        table.print(markdown=True)
    if json_out:
        with open(json_out, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2)


def python_cmd(code: str, *args: str) -> list[str]:
    """A fresh interpreter (the running one) executing ``code``."""
    return [sys.executable, "-c", code, *args]


def ratio(value: float, base: float | None) -> float | None:
    return None if not base else value / base


class Table:
    """A plain-text table; ``print()`` aligns the columns."""

    def __init__(self, *headers: str) -> None:
        self.headers = headers
        self.rows: list[tuple[str, ...]] = []

    def add(self, *cells: object) -> None:
        self.rows.append(tuple(_cell(c) for c in cells))

    def render(self, markdown: bool = False) -> str:
        rows = [tuple(self.headers)] + self.rows
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.headers))]
        if markdown:
            lines = [
                "| " + " | ".join(h for h in self.headers) + " |",
                "|" + "|".join(" --- " for _ in self.headers) + "|",
            ]
            lines += ["| " + " | ".join(r) + " |" for r in self.rows]
            return "\n".join(lines)
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [fmt.format(*self.headers), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*r) for r in self.rows]
        return "\n".join(lines)

    def print(self, markdown: bool = False) -> None:
        print(self.render(markdown), flush=True)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if value >= 10 else f"{value:.3f}"
    return str(value)
