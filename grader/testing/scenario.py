"""Scenarios: the part of a test that drives the code under test's objects, run beside that code.

A test that builds the learner's module, trains it or steps their optimizer cannot call it
from another process one function at a time: the objects live where the code does. So the
test is split. A scenario is a function of the test file, ``fn(lesson, *args, **kwargs)``,
that makes the objects, drives them and returns what it saw, as plain data (tensors, numbers,
strings, and lists, tuples and dicts of them); the test checks that against what it works out
itself, with its own torch::

    @beside
    def merged(lesson, a, b):
        merge = lesson.Merge(3, 4, 2)
        return merge(a, b), merge.state_dict()

    def test_merge(lesson):
        out, weights = merged(lesson, a, b)
        assert_close(out, tiled(weights, a, b), what=...)

In a learner's run (``pytest exercises/NN``) a scenario is a plain call. Under ``kata grade``,
with the checks in a process of their own (grader.remote), the code's process runs it, and only
its observations cross: the expectations and every check stay in the tests' process. The
code's process could lie about what it saw, as it could about any result; what it cannot do is
reach a check. Its arguments cross as data too (a scenario takes the name of an activation,
not the function).
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

R = TypeVar("R")


def beside(fn: Callable[..., R]) -> Callable[..., R]:
    """Make `fn(lesson, ...)`, defined at the top level of a test file, a scenario: run in the
    process the code under test lives in, its result sent back as data."""
    if fn.__qualname__ != fn.__name__:
        raise TypeError(f"scenario {fn.__qualname__}: define it at the top level of the test file, where the "
                        "code's process finds it by name")

    @functools.wraps(fn)
    def scenario(lesson, *args, **kwargs):
        __tracebackhide__ = True
        elsewhere = getattr(type(lesson), "_kata_scenario", None)  # a stand-in for a module in another process
        if elsewhere is None:
            return fn(lesson, *args, **kwargs)
        return elsewhere(lesson, fn, args, kwargs)

    scenario._kata_scenario_of = fn  # what the code's process calls: the function, not this wrapper
    return scenario
