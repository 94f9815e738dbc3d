"""What the terminal shows: T for a TODO, B for a module that does not import, L for a test
stopped by its time limit (a loop, as a rule) or waiting on one, and at the end each TODO and
each loop once, with how many tests wait on it, and where to start. A failure that many tests
share (the same error at the same line of the learner's code, or the same message) is shown in
full once, with the tests that share it, and in one line for each of the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.results import Kind

_STATUS = {Kind.TODO: ("todo", "T", ("TODO", {"yellow": True})),
           Kind.BROKEN: ("broken", "B", ("BROKEN", {"red": True})),
           Kind.TIMEOUT: ("timeout", "L", ("TIMEOUT", {"red": True}))}


class _Shown:
    """A failure's text (``str``, what the results record) and what the terminal shows of it."""

    def __init__(self, text: str, group: list[str], name: str) -> None:
        self.text, self.group, self.name = text, group, name  # group: the tests that share it, in order

    def __str__(self) -> str:
        return self.text

    def toterminal(self, tw) -> None:
        first, *others = self.group
        if self.name != first:
            tw.line(f"The same failure as {first} (shown above).")
            return
        tw.line(self.text)
        if others:
            names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            tw.line(f"(The same failure in {len(others)} more test{'s' if len(others) > 1 else ''}: {names}.)")


class _SharedFailures:
    """Groups the failures of a session by what they share, as their reports come."""

    def __init__(self) -> None:
        self.groups: dict[tuple, list[str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failure = getattr(report, "kata_failure", None)
        if not report.failed or failure is None or failure.kind in _STATUS or report.longrepr is None:
            return
        text = str(report.longrepr)
        last = failure.summary.strip().splitlines()[-1:]  # the error itself, without a worker's number
        key = (failure.exception, failure.where, *last) if failure.where else (failure.exception, text)
        group = self.groups.setdefault(key, [])
        name = report.nodeid.split("::", 1)[-1]
        group.append(name)
        report.longrepr = _Shown(text, group, name)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SharedFailures(), "kata-shared-failures")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    failure = getattr(report, "kata_failure", None)
    return _STATUS.get(failure.kind) if failure else None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tr = terminalreporter
    broken = _unique_messages(tr.stats.get("broken", []))
    todos = _unique_messages(tr.stats.get("todo", []))
    _loops(tr)
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


def _loops(tr) -> None:
    """Each line the time limit stopped a test at, once: how many more tests it stopped there
    (a loop that runs as a module is imported, say), and how many later tests waited on its
    loop (grader.plugin.loops); those are not shown one by one."""
    stopped: dict[str, list] = {}  # the line (or the message, where no line is known) -> the reports of the tests stopped there
    waiting: dict[str, set[str]] = {}  # the test that hit the limit -> the tests that waited on its loop
    for report in tr.stats.get("timeout", []):
        first = getattr(report, "kata_loop", report.nodeid)
        if first != report.nodeid:
            waiting.setdefault(first, set()).add(report.nodeid)
            continue
        group = stopped.setdefault(report.kata_failure.where or str(report.longrepr), [])
        if report.nodeid not in (r.nodeid for r in group):
            group.append(report)
    if not stopped:
        return
    tr.section("TIMEOUT", sep="=", red=True, bold=True)
    for group in stopped.values():
        tr.line(str(group[0].longrepr))
        again = len(group) - 1
        if again:
            tr.line(f"  ({again} more test{'s were' if again != 1 else ' was'} stopped there too)")
        count = sum(len(waiting.get(r.nodeid, ())) for r in group)
        if count:
            tr.line(f"  ({count} more test{'s that reach it' if count != 1 else ' that reaches it'} ended at once, "
                    "waiting on it)")


def _unique_messages(reports) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        message = str(report.longrepr)
        counts[message] = counts.get(message, 0) + 1
    return counts
