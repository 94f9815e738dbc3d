"""expect: points=2 state=in progress

add() never returns: each of its tests is stopped by the per-test timeout; scale still counts."""


def add(a, b):
    while True:
        pass


def scale(x, k=2):
    return x * k
