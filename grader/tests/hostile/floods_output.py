"""expect: points=2 state=in progress problem=wrote more than

add() prints without end: its output reaches the file-size limit (8 MiB in the test), the write
fails (Python ignores SIGXFSZ, so it is an OSError), that test fails, and the run goes on."""


def add(a, b):
    while True:
        print("x" * 65536)


def scale(x, k=2):
    return x * k
