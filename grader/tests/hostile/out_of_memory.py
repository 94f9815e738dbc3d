"""expect: points=2 state=in progress problem=out of memory

add() asks for 4 GiB; the run's memory limit (1 GiB in the test) turns that into MemoryError."""


def add(a, b):
    block = bytearray(4 << 30)
    return a + b + len(block) * 0


def scale(x, k=2):
    return x * k
