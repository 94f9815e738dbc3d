"""Each test's result, recorded once as a grader.results.TestResult and handed to the writers.

A test's result is final when its teardown has run; the first phase that did not pass decides
its outcome. The writers (``--kata-report``'s JSON file, class grading's pipe) implement the
kit's hooks (grader.plugin.hooks) and receive the results from here.

Each test runs with its context set (grader.running.TEST): what the tests' helpers leave there
(speed ratios, notes for a person) goes with its result.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from grader import running
from grader.plugin.remote import code_clock
from grader.results import CollectError, Kind, Outcome, TestInfo, TestResult

_OUTCOME_OF = MappingProxyType({Kind.TODO: Outcome.TODO, Kind.BROKEN: Outcome.BROKEN, Kind.TIMEOUT: Outcome.TIMEOUT})


def info(item: pytest.Item) -> TestInfo:
    marker = item.get_closest_marker("points")
    points = float(marker.args[0]) if marker and marker.args else 1.0
    return TestInfo(item.nodeid, points, item.get_closest_marker("public") is not None)


class Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.errors: list[CollectError] = []
        self.items: dict[str, pytest.Item] = {}
        self.running: dict[str, TestResult] = {}  # nodeid -> the result so far, phase by phase

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append(CollectError(report.nodeid, str(report.longrepr)))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = {item.nodeid: item for item in session.items}
        self.config.hook.pytest_kata_collected(
            config=self.config, collected=[info(i) for i in session.items], errors=list(self.errors)
        )

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        """The test's context, around every other plugin's part of its setup, call and teardown."""
        token = running.TEST.set(running.RunningTest(item.nodeid, code_clock(self.config)))
        try:
            return (yield)
        finally:
            running.TEST.reset(token)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        item = self.items.get(report.nodeid)
        so_far = self.running.get(report.nodeid)
        if so_far is None:
            test = info(item) if item is not None else TestInfo(report.nodeid)
            so_far = TestResult(test.nodeid, Outcome.PASSED, test.max_points, test.public)
        context = running.current()
        measured = []
        if report.when == "call" and context is not None:  # the speed ratios its call measured
            measured, context.measurements = context.measurements, []
        result = dataclasses.replace(
            so_far, speed=(*so_far.speed, *measured), seconds=round(so_far.seconds + report.duration, 4)
        )
        if so_far.outcome is Outcome.PASSED and not report.passed:  # the first phase that did not pass decides
            result = _with_failure(result, report)
        self.running[report.nodeid] = result
        if report.when == "teardown":  # the test is over: its result is final
            del self.running[report.nodeid]
            notes = context.notes() if context is not None else running.TestNotes()
            self.config.hook.pytest_kata_result(config=self.config, result=result, notes=notes)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.config.hook.pytest_kata_finished(config=self.config, exitstatus=int(exitstatus))


def _with_failure(result: TestResult, report: pytest.TestReport) -> TestResult:
    if report.skipped:
        message = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        outcome, failure = Outcome.SKIPPED, None
    else:
        failure = getattr(report, "kata_failure", None)
        outcome = _OUTCOME_OF.get(
            failure.kind if failure else None, Outcome.FAILED if report.when == "call" else Outcome.ERROR
        )
        message = str(report.longrepr)
    return dataclasses.replace(result, outcome=outcome, message=message, failure=failure)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Recorder(config), "kata-recorder")
