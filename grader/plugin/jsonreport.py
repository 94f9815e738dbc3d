"""``--kata-report PATH``: the run's results as JSON (grader.results.RunResult.to_json), which
``grader.runs`` reads back.

The file is rewritten whole after collection and after each test, with "exitstatus" null
until the session ends: a process killed midway (a timeout, code that calls os._exit) still
leaves what it ran, and "collected" says what it did not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.files import write_json
from grader.results import CollectError, RunResult, TestInfo, TestResult


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("kata").addoption(
        "--kata-report", metavar="PATH", help="write every test's outcome to PATH as JSON."
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("kata_report")
    if path:
        config.pluginmanager.register(JsonReport(Path(path)), "kata-json-report")


class JsonReport:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.run = RunResult()

    def _write(self) -> None:
        write_json(self.path, self.run.to_json())

    def pytest_kata_collected(
        self, config: pytest.Config, collected: list[TestInfo], errors: list[CollectError]
    ) -> None:
        self.run.collected, self.run.collect_errors = collected, errors
        self._write()

    def pytest_kata_result(self, config: pytest.Config, result: TestResult) -> None:
        self.run.tests.append(result)
        self._write()

    def pytest_kata_finished(self, config: pytest.Config, exitstatus: int) -> None:
        self.run.exitstatus = exitstatus
        self._write()
