"""expect: points=0 state=in progress
in-process: points=0 state=tampered problem=test_add's code was replaced

Both answers are wrong. On import it finds the test modules in sys.modules and swaps the code
of every test function for one that does nothing, so every test would pass: the same function
objects, so no check of who is bound where sees it. With --in-process the tamper check compares
each watched function's code with the snapshot's; by default the tests are in a process the
code cannot reach, and its own process imported no test module."""

import sys


def _nothing(lesson):
    pass


for _module in [m for name, m in list(sys.modules.items()) if "test_" in name]:
    for _test in [f for name, f in vars(_module).items() if name.startswith("test_")]:
        if getattr(_test, "__code__", None) is not None and _test.__code__.co_varnames[:1] == ("lesson",):
            _test.__code__ = _nothing.__code__


def add(a, b):
    return 0


def scale(x, k=2):
    return x
