"""expect: points=0 state=in progress
in-process: points=2 state=in progress

add() returns an object that equals anything; scale() is wrong. Compared in the student's own
process, the object passes both add tests; it cannot cross to a process of its own."""


class _Anything:
    def __eq__(self, other):
        return True


def add(a, b):
    return _Anything()


def scale(x, k=2):
    return x
