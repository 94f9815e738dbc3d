"""expect: points=0 state=broken problem=wrote to the tests' channel
in-process: points=0 state=tampered problem=00000000

Both functions are wrong. Writes one 'tamper' event of 200,000 distinct problems into every
open descriptor: a grader that compares each new problem with every one before it (a linear
scan) spends hours on it, and stops enforcing every other run's time limit meanwhile."""

import json
import os

_line = (json.dumps({"tamper": [f"{i:08d}" for i in range(200_000)]}) + "\n").encode()
for _fd in range(3, 64):
    try:
        os.write(_fd, _line)
    except OSError:
        pass


def add(a, b):
    return 0


def scale(x, k=2):
    return x
