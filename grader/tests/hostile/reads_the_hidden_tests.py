"""expect: points=0 state=in progress
in-process: points=2 state=in progress

Reads the grading copy's hidden tests (tests/98_demo/ beside its working directory: the test
file and the hints) and answers only where it could read them, putting what it read in its
error messages, where a report would carry it. With the checks apart, the code's process does
not see tests/ at all: the scenarios it runs come to it as source. With --in-process, the tests
run in the student's own process, which must read them: nothing there is hidden from it, and
the test file comes back in scale's message (the control, in test_classgrade)."""

import os
from pathlib import Path

_read = {}
for _name in ("test_demo.py", "hints.md"):
    for _folder in (Path.cwd(), Path(__file__).resolve().parents[2]):
        try:
            _read[_name] = (_folder / "tests" / "98_demo" / _name).read_text()
            break
        except OSError:
            continue


def add(a, b):
    if "test_demo.py" not in _read:
        raise LookupError(f"no hidden tests seen from {os.getcwd()}")
    return a + b


def scale(x, k=2):
    raise LookupError(" ".join(_read.get("test_demo.py", "no hidden tests seen").split()))  # what it read, in one line
