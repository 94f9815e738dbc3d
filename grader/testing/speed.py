"""Speed as a ratio measured side by side, never as an absolute time.

The machines this runs on are shared and noisy, so: one thread (with torch's default pool,
ops stall in bursts), calls interleaved (baseline, candidate, baseline, ...) so both see the
same load, two warm-up calls, and the ratio of the minimums, the least disturbed sample of
each; and freed memory kept in the process (`keep_freed_memory`), so that no call pays for
faulting in pages the previous one gave back. The measurements behind each step, and behind
the lessons' thresholds, are in docs/MEASUREMENTS.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import sys
import time
from typing import Callable, Iterator

import torch

from grader import running


@functools.cache
def keep_freed_memory() -> None:
    """Raise glibc's trim and mmap thresholds (1 GiB) for the rest of the process.

    With glibc's defaults a tensor of a few MiB may come from mmap, or sit at the top of the heap
    and be handed back to the system when freed, depending on how the heap lay when the test
    began: then every call faults its buffers in again, and a fresh process's ratio can fall
    several times below a warm one's (docs/MEASUREMENTS.md). Elsewhere than glibc: nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
    for option in (m_trim_threshold, m_mmap_threshold):
        mallopt(option, 1 << 30)


def plainly(ratio: float) -> str:
    """A speed ratio in words: "ran about as fast as", "ran 3.2 times as fast as", "took 2.5
    times as long as" (what follows is the baseline's name)."""
    if 0.95 <= ratio <= 1.05:
        return "ran about as fast as"
    if ratio > 1:
        return f"ran {ratio:.1f} times as fast as"
    return f"took {1 / ratio:.1f} times as long as"


def speed_ratio(
    baseline: Callable[[], object], candidate: Callable[[], object], *, repeats: int = 10, warmup: int = 2
) -> float:
    """How many times faster `candidate` runs than `baseline` (> 1: faster)."""
    keep_freed_memory()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        base, cand = minimum_times(baseline, candidate, repeats=repeats, warmup=warmup)
    finally:
        torch.set_num_threads(threads)
    return base / max(cand, 1e-9)


class WallClock:
    """The clock of code under test in this process: the wall clock (read through this module's
    `time`), each call timed where it runs."""

    def now(self) -> float:
        return time.perf_counter()

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        yield


def clock() -> running.Clock:
    """What a speed test reads: the wall clock, or, with the code under test in a process of its
    own (grader.remote), that process's clock (grader.running.Clock), which counts both sides by
    CPU time."""
    test = running.current()
    code_clock = test.code_clock() if test is not None else None
    return code_clock if code_clock is not None else WallClock()


def minimum_times(
    first: Callable[[], object], second: Callable[[], object], *, repeats: int, warmup: int = 2
) -> tuple[float, float]:
    """The shortest time of `first()` and of `second()`, in seconds, over `repeats` calls of
    each, interleaved (first, second, first, ...) after `warmup` calls of each."""
    timer = clock()
    now = timer.now
    # A thread's CPU clock is a system call, not the wall clock's few nanoseconds: what reading
    # it costs is counted out of both sides' times alike.
    reading = 0.0 if isinstance(timer, WallClock) else min(-now() + now() for _ in range(20))
    with timer.timing():
        for _ in range(warmup):
            now()
            first()
            now()
            second()
        a, b = [], []
        for _ in range(repeats):
            t0 = now()
            first()
            t1 = now()
            second()
            t2 = now()
            a.append(t1 - t0 - reading)
            b.append(t2 - t1 - reading)
    return max(min(a), 1e-9), max(min(b), 1e-9)


def assert_speed(
    baseline: Callable[[], object],
    candidate: Callable[[], object],
    *,
    at_least: float,
    what: str,
    baseline_name: str,
    hint: str = "",
    repeats: int = 10,
    fresh_at_least: float | None = None,
) -> float:
    """Fail unless `candidate` runs at least `at_least` times as fast as `baseline`.

    `at_least` < 1 allows a slower candidate: 0.2 means "at most 5x slower than baseline".
    `fresh_at_least`, where given, replaces it when the candidate runs in another process
    (timed by its CPU time), on fresh values every call: an answer that reads a little of a large input
    then finds none of it in the cache, as it does when called again in-process.
    Returns the measured ratio, which also goes into the test's report.
    """
    __tracebackhide__ = True
    by_cpu_time = not isinstance(clock(), WallClock)
    if by_cpu_time and fresh_at_least is not None:
        at_least = fresh_at_least
    ratio = speed_ratio(baseline, candidate, repeats=repeats)
    if (test := running.current()) is not None:  # the plugin puts it into the test's result
        test.measurements.append(dict(what=what, ratio=round(ratio, 3), at_least=at_least, baseline=baseline_name))
    if ratio < at_least:
        needed = (
            f"at least {at_least:g} times as fast as"
            if at_least > 1
            else "at least as fast as"
            if at_least == 1
            else f"take at most {1 / at_least:g} times as long as"
        )
        raise AssertionError(
            f"{what} is too slow: it {plainly(ratio)} {baseline_name}; it must {'be ' if at_least >= 1 else ''}"
            f"{needed} {baseline_name} (minimum of {repeats} interleaved runs each, 1 thread"
            f"{'; by CPU time, the code under test in another process on fresh inputs each call' if by_cpu_time else ''})."
            + (f"\n{hint}" if hint else "")
        )
    return ratio
