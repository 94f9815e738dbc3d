"""expect: points=2 state=in progress

sys.exit() inside a test is a failure of that test, not the end of the run."""

import sys


def add(a, b):
    sys.exit(0)


def scale(x, k=2):
    return x * k
