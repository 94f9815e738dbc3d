"""expect: points=0 state=tampered problem=grading copy

add() is wrong. On import it rewrites the tests and the root conftest of its grading copy,
to make the tests (of this student or the next) pass."""

from pathlib import Path

Path("tests/98_demo/test_demo.py").write_text("def test_add():\n    pass\n")
Path("conftest.py").write_text("")


def add(a, b):
    return 0


def scale(x, k=2):
    return x * k
