"""expect: points=0 state=in progress

Wrong functions, and a conftest.py beside them that turns every failure into a pass;
the grader does not take a conftest.py from students."""


def add(a, b):
    return 0


def scale(x, k=2):
    return x
