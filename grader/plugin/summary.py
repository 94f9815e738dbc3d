"""What the terminal shows: T for a TODO, B for a module that does not import, and at the end
each TODO once, with how many tests wait on it, and where to start. A failure that many tests
share is shown in full once, with how many tests share it and their names, and in one line for
each of the others. Failures are the same when they are the same error at the same line of the
learner's code (the kit's message for it included), or the same message, once numbers, the
tests' parameters (the parts of their ids in brackets, but a name of the learner's module) and
a property test's example are left out: a message that differs only in a size, a tolerance or
a dtype is one failure to the learner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.plugin import failures, untouched
from grader.results import Kind

_STATUS = {Kind.TODO: ("todo", "T", ("TODO", {"yellow": True})),
           Kind.BROKEN: ("broken", "B", ("BROKEN", {"red": True}))}


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
        self.parameters: tuple[str, ...] | None = None  # every test's, once the first has run

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        handled = failures.handled_error(call.excinfo.value) if call.excinfo else None  # the kit's message's error
        report.kata_handled = f"{type(handled).__name__}: {handled}" if handled is not None else None
        if self.parameters is None:  # the session's, for every message alike: test_x[float32] names
            # float32 where test_x[float16] names float16, and test_y[a] "a" where test_z says "a" too
            module = getattr(item, "funcargs", {}).get(untouched.FIXTURE)
            if module is not None:  # (a test without the module under test: the next one)
                self.parameters = _parameters(item.session.items, module)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failure = getattr(report, "kata_failure", None)
        if not report.failed or failure is None or failure.kind in _STATUS or report.longrepr is None:
            return
        text, parameters = str(report.longrepr), self.parameters or ()
        last = failure.summary.strip().splitlines()[-1:]  # the error itself, without a worker's number
        handled = getattr(report, "kata_handled", None)
        key = ((failure.where, _alike(handled, parameters)) if failure.where and handled
               else (failure.exception, failure.where, *(_alike(line, parameters) for line in last)) if failure.where
               else (failure.exception, _alike(text, parameters)))
        group = self.groups.setdefault(key, [])
        name = report.nodeid.split("::", 1)[-1]
        group.append(name)
        report.longrepr = _Shown(text, group, name)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")  # dim=-1 and dim=0 alike
_NAME = re.compile(r"[A-Za-z_][\w.]*")  # a parameter's id that is a name: float32, k1, sliced (a shape is values)
_VALUES = re.compile(r"\[[^\[\]{}]*\]|\{[^\[\]{}]*\}|\((?:<number>|<values>)(?:, (?:<number>|<values>))*,?\)")
_EXAMPLE = re.compile(r"^(?:Falsifying|Failing) ", re.MULTILINE)  # hypothesis's notes


def _alike(text: str, parameters: tuple[str, ...]) -> str:
    """`text` as the same failure reads in another test: without hypothesis's example, the
    tests' parameters, any number, or the contents of a list, a dict or a size."""
    text = _EXAMPLE.split(text, 1)[0].strip()
    for parameter in parameters:  # whole words only: "float16" is no "1" of test_x[1]
        text = re.sub(rf"(?<![\w.]){re.escape(parameter)}(?!\w)", "<parameter>", text)
    text = _NUMBER.sub("<number>", text)
    while True:  # lists, dicts and sizes of any length: ['part1.tar', 'part0.tar'], (4, 1, 2)
        text, count = _VALUES.subn("<values>", text)
        if not count:
            return text


def _parameters(items: list[pytest.Item], module) -> tuple[str, ...]:
    """The parts of the tests' ids in brackets that are names ("float32", not "3", in
    test_x[float32-3]; numbers and sizes are left out anyway), longest first, less the names of
    the learner's module (test_x[softmax] and test_x[logsumexp] test two functions: their
    failures are two)."""
    parts = {p for item in items if getattr(item, "callspec", None) is not None
             for part in item.callspec.id.split("-") if part for p in (part, part.rsplit(".", 1)[-1])}
    kept = (p for p in parts if _NAME.fullmatch(p) and not hasattr(module, p))
    return tuple(sorted(kept, key=len, reverse=True))


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SharedFailures(), "kata-shared-failures")


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
