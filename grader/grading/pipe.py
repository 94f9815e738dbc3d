"""The child's side of class grading: the kit's results, sent down a pipe the parent owns.

``kata grade`` runs each student's lesson in a forked child (grader.grading.sandbox), which
registers a `PipeWriter` with pytest. The plugin tells it what happens through the kit's hooks
(grader.plugin.hooks); it sends each event through the results channel (grader.grading.protocol)
instead of writing a report file into the grading copy, where the student's code could rewrite
it, and runs the tamper checks (grader.grading.guard) at the moments that matter:

- when collection has ended, the snapshot (pytest has configured itself; no student code has
  run yet: the `lesson` fixture imports it when the first test starts), then a first check;
- after every test, before its result is sent: its fixtures are undone, so what is still
  replaced was the student's doing;
- when the session ends, before "finish".
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable

import pytest

from grader.grading import protocol
from grader.grading.guard import Guard
from grader.plugin.hooks import CodeProcessEnd
from grader.results import CollectError, TestInfo, TestResult
from grader.running import TestNotes


class PipeWriter:
    """Implements the kit's hooks by sending events down the pipe `fd`. With `hold`, the results
    it picks (by the result and the test's notes), and the end of the run, are kept back for the
    caller to send (`send`, `finish`). How the code process ended (--remote) is kept in
    `code_process` for the caller.
    `guarded`: whether to run the tamper checks; a process the student's code does not run in
    (the tests' own under --remote) has nothing to check."""

    def __init__(
        self, fd: int, hold: Callable[[TestResult, TestNotes], bool] | None = None, *, guarded: bool = True
    ) -> None:
        self.fd = fd
        self.guarded = guarded
        self.guard: Guard | None = None
        self.hold = hold
        self.held: list[TestResult] = []
        self.exitstatus: int | None = None  # held back, with `hold`
        self.code_process = CodeProcessEnd(gone=False, overran=False, overhead=None)  # (as told at the end)

    def pytest_kata_collected(
        self, config: pytest.Config, collected: list[TestInfo], errors: list[CollectError]
    ) -> None:
        self._send(protocol.collected_event(collected, errors))
        if self.guarded:
            self.guard = Guard(
                type(self), frozenset(config.rootpath / info.nodeid.partition("::")[0] for info in collected)
            )
            self._check(config)

    def pytest_kata_result(self, config: pytest.Config, result: TestResult, notes: TestNotes) -> None:
        self._check(config)
        if notes.recorded:
            result = replace(result, recorded=True)
        if notes.review:
            self._send(protocol.review_event([f"{result.nodeid.rpartition('::')[2]}: {note}" for note in notes.review]))
        if self.hold is not None and self.hold(result, notes):
            self.held.append(result)
        else:
            self._send(protocol.result_event(result))

    def pytest_kata_finished(self, config: pytest.Config, exitstatus: int) -> None:
        self._check(config)
        if self.hold is not None:
            self.exitstatus = exitstatus
        else:
            self._send(protocol.finish_event(exitstatus))

    def pytest_kata_code_process_ended(self, config: pytest.Config, ended: CodeProcessEnd) -> None:
        self.code_process = ended

    def announce(self, collected: list[TestInfo]) -> None:
        """The tests of a run that reports them without a pytest session (grader.grading.sandbox)."""
        self._send(protocol.collected_event(collected, []))

    def send(self, results: list[TestResult], problems: list[str]) -> None:
        """Results and tampering problems found after the session (the held tests, run elsewhere)."""
        for result in results:
            self._send(protocol.result_event(result))
        if problems:
            self._send(protocol.tamper_event(problems))

    def code_ended(self, returncode: int, overran: bool = False) -> None:
        """The code's process, in another (--remote), ended so while its tests still called it (or
        was stopped: `overran`)."""
        self._send(protocol.code_ended_event(returncode, overran))

    def overhead(self, one: float, each: float) -> None:
        """The protocol's cost of a timed call, as this run's tests measured it (--remote)."""
        self._send(protocol.overhead_event(one, each))

    def finish(self) -> None:
        """The end of a run whose end was held back, once its session had one."""
        if self.exitstatus is not None:
            self._send(protocol.finish_event(self.exitstatus))

    def _check(self, config: pytest.Config) -> None:
        if self.guard is not None and (problems := self.guard.check(config)):
            self._send(protocol.tamper_event(problems))

    def _send(self, data: bytes) -> None:
        while data:
            written = os.write(self.fd, data)
            data = data[written:]
