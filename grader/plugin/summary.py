"""What the terminal shows: T for a TODO, B for a module that does not import, and at the end
each TODO once, with how many tests wait on it, and where to start."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.results import Kind

_STATUS = {Kind.TODO: ("todo", "T", ("TODO", {"yellow": True})),
           Kind.BROKEN: ("broken", "B", ("BROKEN", {"red": True}))}


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    failure = getattr(report, "kata_failure", None)
    return _STATUS.get(failure.kind) if failure else None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tr = terminalreporter
    broken = _unique_messages(tr.stats.get("broken", []))
    todos = _unique_messages(tr.stats.get("todo", []))
    if broken:
        tr.section("could not import", sep="=", red=True, bold=True)
        for message, count in broken.items():
            tr.line(f"{message}\n  ({count} test{'s' if count != 1 else ''} could not run)")
    if todos:
        tr.section("TODO", sep="=", yellow=True, bold=True)
        for message, count in todos.items():
            tr.line(f"{message}  ({count} test{'s wait' if count != 1 else ' waits'} on it)")
        first = tr.stats["todo"][0]
        lesson = Path(first.location[0]).parent.name  # the test file's folder: tests/<lesson>/
        tr.line(
            f"\nNext: open {first.kata_failure.where}, read the TODO there and replace "
            "`raise NotImplementedError` with your code; save and run the same command again.\n"
            f"Stuck? `kata hint {lesson}` gives a hint, one level at a time.",
            yellow=True,
        )


def _unique_messages(reports) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        message = str(report.longrepr)
        counts[message] = counts.get(message, 0) + 1
    return counts
