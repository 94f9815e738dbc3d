"""expect: points=0 state=broken problem=No such file or directory
in-process: points=0 state=broken problem=Read-only file system

add() is wrong. On import it tries to rewrite the tests and the root conftest of its grading
copy, to make the tests (of this student or the next) pass. With the checks apart, the code's
process does not see tests/ at all; with --in-process it does, but the copy is read-only to the
run: either way the import fails. (With --trusted the grader finds the rewritten copy and flags
it.)"""

from pathlib import Path

Path("tests/98_demo/test_demo.py").write_text("def test_add():\n    pass\n")
Path("conftest.py").write_text("")


def add(a, b):
    return 0


def scale(x, k=2):
    return x * k
