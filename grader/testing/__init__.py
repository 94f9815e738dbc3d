"""Shared helpers for the lessons' tests: one place for comparison, gradients, speed and
what the code runs at PyTorch's dispatcher.

    from grader.testing import assert_close, assert_speed, forbid

Two live in modules of their own, imported only by the tests that use them (a lesson that
does not need them does not pay for importing them): ``grader.testing.memory`` (what a call
allocates, with the profiler) and ``grader.testing.strategies`` (hypothesis strategies).
"""

from grader.testing.autograd import grad_of
from grader.testing.compare import (
    apart,
    assert_close,
    attribute,
    assert_defaults,
    counted,
    describe,
    dtype_name,
    fail,
    mismatch,
    number,
    numbers,
    same,
    tolerance,
)
from grader.testing.errors import expect_raises, explained, quoted, raises_the_same, reported, returned
from grader.testing.forbid import OpCall, assert_no_loop, count_ops, forbid, function_name, functions_called, trace_ops
from grader.testing.pitfalls import ErrorPitfall, Pitfall, pitfall_of, pitfall_raising, pitfall_saying, pitfalls_of
from grader.testing.speed import assert_speed, speed_ratio
from grader.testing.tables import below

__all__ = (
    "ErrorPitfall",
    "OpCall",
    "Pitfall",
    "apart",
    "assert_close",
    "attribute",
    "assert_defaults",
    "assert_no_loop",
    "assert_speed",
    "below",
    "count_ops",
    "counted",
    "describe",
    "dtype_name",
    "expect_raises",
    "explained",
    "fail",
    "forbid",
    "function_name",
    "functions_called",
    "grad_of",
    "mismatch",
    "number",
    "numbers",
    "pitfall_of",
    "pitfall_raising",
    "pitfall_saying",
    "pitfalls_of",
    "quoted",
    "raises_the_same",
    "reported",
    "returned",
    "same",
    "speed_ratio",
    "tolerance",
    "trace_ops",
)
