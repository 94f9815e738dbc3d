"""expect: points=2 state=in progress

add() never returns: its first test is stopped by the per-test timeout, and the other test that
calls it ends at once, waiting on it; scale still counts."""


def add(a, b):
    while True:
        pass


def scale(x, k=2):
    return x * k
