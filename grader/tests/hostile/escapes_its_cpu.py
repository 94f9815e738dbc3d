"""expect: points=0 state=in progress

Asks for every CPU of the machine, to run threads or processes that hog it and slow the
classmates graded beside it. Each run keeps the one CPU it was given, and seccomp keeps every
process behind the boundary from leaving it (grader/grading/seccomp.py): sched_setaffinity
fails. It answers only where it got away."""

import os

try:
    os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    _ESCAPED = len(os.sched_getaffinity(0)) > 1
except OSError:
    _ESCAPED = False


def add(a, b):
    if not _ESCAPED:
        raise RuntimeError("kept on one CPU")
    return a + b


def scale(x, k=2):
    if not _ESCAPED:
        raise RuntimeError("kept on one CPU")
    return x * k
