"""Speed as a ratio measured side by side, never as an absolute time.

The machines this runs on are shared and noisy, so: one thread (with torch's default pool,
ops stall in bursts), calls interleaved (baseline, candidate, baseline, ...) so both see the
same load, two warm-up calls, and the ratio of the minimums, the least disturbed sample of
each; and freed memory kept in the process (`keep_freed_memory`), so that no call pays for
faulting in pages the previous one gave back. The measurements behind each step, and behind
the lessons' thresholds, are in docs/MEASUREMENTS.md.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import time
from typing import Callable

import torch

from grader.plugin import measurements


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


def speed_ratio(baseline: Callable[[], object], candidate: Callable[[], object], *, repeats: int = 10, warmup: int = 2) -> float:
    """How many times faster `candidate` runs than `baseline` (> 1: faster)."""
    keep_freed_memory()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        base, cand = minimum_times(baseline, candidate, repeats=repeats, warmup=warmup)
    finally:
        torch.set_num_threads(threads)
    return base / max(cand, 1e-9)


# Code under test in another process (grader.remote) is timed from here: while `TIMING` is set,
# each of its calls gets inputs of fresh values, and adds to `EXCLUDED` what moving them cost
# this process, which is not the call's time.
TIMING = [False]
EXCLUDED = [0.0]


def minimum_times(first: Callable[[], object], second: Callable[[], object], *, repeats: int, warmup: int = 2) -> tuple[float, float]:
    """The shortest time of `first()` and of `second()`, in seconds, over `repeats` calls of
    each, interleaved (first, second, first, ...) after `warmup` calls of each."""
    TIMING[0] = True
    try:
        for _ in range(warmup):
            first()
            second()
        a, b = [], []
        for _ in range(repeats):
            e0, t0 = EXCLUDED[0], time.perf_counter()
            first()
            e1, t1 = EXCLUDED[0], time.perf_counter()
            second()
            e2, t2 = EXCLUDED[0], time.perf_counter()
            a.append((t1 - t0) - (e1 - e0))
            b.append((t2 - t1) - (e2 - e1))
    finally:
        TIMING[0] = False
    return min(a), min(b)


def assert_speed(
    baseline: Callable[[], object],
    candidate: Callable[[], object],
    *,
    at_least: float,
    what: str,
    baseline_name: str,
    hint: str = "",
    repeats: int = 10,
) -> float:
    """Fail unless `candidate` runs at least `at_least` times as fast as `baseline`.

    `at_least` < 1 allows a slower candidate: 0.2 means "at most 5x slower than baseline".
    Returns the measured ratio, which also goes into the test's report.
    """
    __tracebackhide__ = True
    ratio = speed_ratio(baseline, candidate, repeats=repeats)
    measurements.record(what=what, ratio=round(ratio, 3), at_least=at_least, baseline=baseline_name)
    if ratio < at_least:
        needed = (f"at least {at_least:g} times as fast as" if at_least > 1 else "at least as fast as"
                  if at_least == 1 else f"take at most {1 / at_least:g} times as long as")
        raise AssertionError(
            f"{what} is too slow: it {plainly(ratio)} {baseline_name}; it must {'be ' if at_least >= 1 else ''}"
            f"{needed} {baseline_name} (minimum of {repeats} interleaved runs each, 1 thread)."
            + (f"\n{hint}" if hint else "")
        )
    return ratio

