"""The code clock: what a speed test reads while the code under test runs in the code process."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator


class CodeClock:
    """What a speed test reads with the code under test in the code process (grader.running.Clock):
    this thread's CPU time, less what this process spent on each timed call (`excluded`), plus
    the CPU time the code process spent on it, as the kernel counts it (`code`, grader.remote.
    cputime). While `timing` is open, each call of the code under test is timed so
    (grader.remote.timed.measure); both sides of a speed test are then measured by CPU time."""

    def __init__(self) -> None:
        self.timing_calls = False
        self.read = 0.0  # this thread's CPU time at the last reading
        self.excluded = 0.0
        self.code = 0.0

    def now(self) -> float:
        self.read = time.thread_time()
        return self.read - self.excluded + self.code

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        self.timing_calls = True
        try:
            yield
        finally:
            self.timing_calls = False
