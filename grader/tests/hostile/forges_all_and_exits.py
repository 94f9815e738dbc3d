"""expect: points=0 state=in progress
in-process: points=4 state=done

Both functions are wrong. At import (the first test's setup) it finds the pytest session on
the stack and writes a pass for every test it collected, then the end of the run, into every
pipe it holds, and leaves at once, before any test has run: nothing is reported twice or after
the end, and no check is left to run. In the student's own process this forgery succeeds, and
nothing in that process can tell it from the real writer: this entry shows the limit of
grading with --in-process (docs/INSTRUCTORS.md). By default the code's process has no
session and no channel to the grader; the tests' process checks its answers."""

import json
import os
import sys


def _forge() -> None:
    frame, session = sys._getframe(1), None
    while frame is not None and session is None:
        for value in list(frame.f_locals.values()):
            candidate = getattr(value, "session", None)
            if type(candidate).__name__ == "Session" and hasattr(candidate, "items"):
                session = candidate
                break
        frame = frame.f_back
    if session is None:
        return
    lines = b"".join((json.dumps({"test": {"nodeid": item.nodeid, "outcome": "passed", "message": ""}}) + "\n").encode()
                     for item in session.items)
    lines += (json.dumps({"finish": {"exitstatus": 0}}) + "\n").encode()
    for fd in range(3, 256):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(fd, lines)
        except OSError:
            pass
    os._exit(0)


_forge()


def add(a, b):
    return 0


def scale(x, k=2):
    return x
