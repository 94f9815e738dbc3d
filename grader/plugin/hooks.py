"""The kit's own hooks: what a run's results are, told to whoever keeps them.

The plugin records every test as a grader.results.TestResult and calls these hooks; a writer
implements them. Two do: the JSON file of ``--kata-report`` (grader.plugin.jsonreport) and the
pipe of a sandboxed class-grading run (grader.grading.pipe). Added through
``pytest_addhooks``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from grader.results import CollectError, TestInfo, TestResult
from grader.running import TestNotes


@dataclass(frozen=True)
class CodeProcessEnd:
    """How the session's code process (``--kata-remote``) ended, as the tests' process saw it."""

    gone: bool  # it closed its end while the tests still called it
    overran: bool  # this process stopped it, a call having run past its limit
    # The protocol's cost of a timed call, (one input, each more) seconds of the code process's
    # CPU, as the connection measured it or was given it (--kata-overhead); None: neither.
    overhead: tuple[float, float] | None


@pytest.hookspec
def pytest_kata_collected(config: pytest.Config, collected: list[TestInfo], errors: list[CollectError]) -> None:
    """Collection has ended: the tests the session means to run, and what could not be collected.
    Called once, before any test runs (before any of the learner's code is imported)."""


@pytest.hookspec
def pytest_kata_result(config: pytest.Config, result: TestResult, notes: TestNotes) -> None:
    """A test's teardown has run: `result` is final. `notes`: what its run with the code under
    test in the code process left for a person and for class grading (empty otherwise)."""


@pytest.hookspec
def pytest_kata_finished(config: pytest.Config, exitstatus: int) -> None:
    """The session has ended with pytest's `exitstatus`."""


@pytest.hookspec
def pytest_kata_code_process_ended(config: pytest.Config, ended: CodeProcessEnd) -> None:
    """Under ``--kata-remote``, at the session's end (pytest_unconfigure): the connection to the
    code process is closed, and `ended` says how that process ended. Not called where no
    connection was made."""
