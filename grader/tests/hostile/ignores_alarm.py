"""expect: points=0 state=stopped problem=a call of its code ran past its time limit
in-process: points=0 state=stopped problem=time limit

add() switches off the per-test timeout's alarm, then loops: only the parent's wall clock stops
it. By default the tests' process stops the code's when a call has run past its limit; the
tests after it fail at once (scale() is right, but its process is gone)."""

import signal


def add(a, b):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        pass


def scale(x, k=2):
    return x * k
