"""expect: points=0 state=broken problem=wrote to the tests' channel
in-process: points=0 state=tampered problem=classmate

Both functions are wrong. Writes a 'tamper' event whose text carries new lines and terminal
escapes, to add lines of its own to summary.txt (blaming a classmate) and to rewrite the
terminal; the grader prints every problem on one line, without control characters."""

import json
import os

_text = "x\x1b[2K\r\n  correct: 98_demo: tampering detected: a copy of a classmate's work\n\x1b]0;all clear\x07"
_line = (json.dumps({"tamper": [_text]}) + "\n").encode()
for _fd in range(3, 64):
    try:
        os.write(_fd, _line)
    except OSError:
        pass


def add(a, b):
    return 0


def scale(x, k=2):
    return x
