"""expect: points=0 state=in progress

Hands in nothing of its own: finds the class folder in the grader's command line (as /proc/1
and /proc/PPID show it) and runs a classmate's file. The class is not in the run's view."""

import os
from pathlib import Path

_answers = {}
for _pid in ("1", str(os.getppid())):
    try:
        _argv = [a.decode() for a in Path(f"/proc/{_pid}/cmdline").read_bytes().split(b"\0")]
    except OSError:
        continue
    for _arg in _argv:
        try:
            exec(Path(_arg, "correct", "exercises", "98_demo", "demo.py").read_text(), _answers)
            break
        except (OSError, ValueError):
            continue


def add(a, b):
    return _answers["add"](a, b) if "add" in _answers else None


def scale(x, k=2):
    return _answers["scale"](x, k) if "scale" in _answers else None
