"""What a call allocates, measured with the PyTorch profiler: memory, not time.

Time is a poor signal for "does not materialise a big intermediate" (it moves with the load
on a shared machine); bytes allocated do not. DESIGN.md has the figures: on a [64, 128, 256]
merge the tiled version allocates 16 MiB in `aten::cat` and 8 MiB in `aten::repeat`, the
broadcast one nothing bigger than its output.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, NamedTuple

import torch
from torch.profiler import ProfilerActivity, profile

MiB = 2**20


class Allocation(NamedTuple):
    op: str  # the aten op that allocated, e.g. "aten::cat"
    nbytes: int


def allocations(fn: Callable[[], object]) -> list[Allocation]:
    """The CPU allocations made while `fn()` runs (without autograd), largest first.

    Each is attributed to the innermost op that made it.
    """
    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _quiet_stderr():
        prof.start()
    try:
        with torch.no_grad():
            fn()
    finally:
        with _quiet_stderr():
            prof.stop()
    found = [Allocation(e.name, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage > 0]
    return sorted(found, key=lambda a: -a.nbytes)


@contextmanager
def _quiet_stderr():
    """Silence file descriptor 2: the profiler writes "profiler_start/stop" lines there from C++,
    which would clutter a failure report and, in a notebook, count as an error (nbgrader)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def format_allocations(found: list[Allocation], limit: int = 5) -> str:
    """'aten::cat 16.0 MiB, aten::empty 8.0 MiB, ...' for failure messages."""
    shown = ", ".join(f"{a.op} {a.nbytes / MiB:.1f} MiB" for a in found[:limit])
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return (shown + more) or "nothing"
