"""expect: points=2 state=in progress

add() is right; scale() calls pytest.skip instead of scaling, so that its test would leave the
lesson's maximum rather than fail. A test skipped by the code under test (the skip raised in
its file) counts as failed; only the kit skips tests. (By default the code's process raises
built-in exceptions only: its Skipped crosses as a RuntimeError, and fails the test too.)"""

import pytest


def add(a, b):
    return a + b


def scale(x, k=2):
    pytest.skip("not today")
