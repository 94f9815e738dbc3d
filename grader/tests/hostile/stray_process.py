"""expect: points=4 state=done

Starts a process in a session of its own (out of the run's process group) and leaves it
running; the test checks that the grader killed it. @PIDFILE@ is filled in by the test."""

import subprocess
from pathlib import Path

_child = subprocess.Popen(["sleep", "600"], start_new_session=True)
Path("@PIDFILE@").write_text(str(_child.pid))


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
