"""Shared helpers for the lessons' tests: one place for comparison, speed and forbidden calls.

    from grader.testing import assert_close, assert_speed, forbid

Hypothesis strategies live in ``grader.testing.strategies`` (imported only by the tests that
use them, so a lesson that does not need hypothesis does not pay for importing it).
"""

from grader.testing.compare import assert_close, describe, tolerance
from grader.testing.forbid import forbid
from grader.testing.speed import assert_speed, speed_ratio

__all__ = ["assert_close", "assert_speed", "describe", "forbid", "speed_ratio", "tolerance"]
