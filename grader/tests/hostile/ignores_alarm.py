"""expect: points=0 state=stopped problem=time limit for a lesson
remote: points=0 state=in progress

add() switches off the per-test timeout's alarm, then loops: only the parent's wall clock stops it."""

import signal


def add(a, b):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        pass


def scale(x, k=2):
    return x * k
