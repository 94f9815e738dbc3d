"""The kit's own hooks: what a run's results are, told to whoever keeps them.

The plugin records every test as a grader.results.TestResult and calls these hooks; a writer
implements them. Two do: the JSON file of ``--kata-report`` (grader.plugin.jsonreport) and the
pipe of a sandboxed class-grading run (grader.grading.pipe). Added through
``pytest_addhooks``.
"""

from __future__ import annotations

import pytest

from grader.results import CollectError, TestInfo, TestResult


@pytest.hookspec
def pytest_kata_collected(config: pytest.Config, collected: list[TestInfo], errors: list[CollectError]) -> None:
    """Collection has ended: the tests the session means to run, and what could not be collected.
    Called once, before any test runs (before any of the learner's code is imported)."""


@pytest.hookspec
def pytest_kata_result(config: pytest.Config, result: TestResult) -> None:
    """A test's teardown has run: `result` is final."""


@pytest.hookspec
def pytest_kata_finished(config: pytest.Config, exitstatus: int) -> None:
    """The session has ended with pytest's `exitstatus`."""
