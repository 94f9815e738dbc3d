"""expect: points=0 state=broken
in-process: points=4 state=done

Starts a process in a session of its own (out of the run's process group) and leaves it
running; the test checks that no such process outlives the grading. @MARKER@ (filled in by the
test) marks its command line, as the run's /proc and PIDs are not the grader's. By default
the code's process can make no process (grader/grading/seccomp.py): its import fails."""

import subprocess

_child = subprocess.Popen(["sleep", "@MARKER@"], start_new_session=True)


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
