"""What the terminal shows: T for a TODO, B for a module that does not import, L for a test
stopped by its time limit (a loop, as a rule) or waiting on one, and at the end each TODO and
each loop once, with how many tests wait on it, and where to start. A failure that many tests
share is shown in full once, with how many tests share it and their names; the others get no
section of their own. Failures are the same when they are the same error at the same line of
the learner's code (the kit's message for it included), or the same message, once numbers, the
tests' parameters (the parts of their ids in brackets, but a name of the learner's module) and
a property test's example are left out: a message that differs only in a size, a tolerance or
a dtype is one failure to the learner, unless its advice names another dtype. A line of advice
that an earlier section gave word for word (a pitfall and its fix, seen on another input) points
there instead of being told again.
At the end, each reason tests were skipped for, once, with a count; and when every test run
passes, whether that was a whole lesson and where to go next."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import MappingProxyType

import pytest

from grader.lessons import LESSON_RE, all_lessons
from grader.plugin import failures, untouched
from grader.plugin.target import tree_of
from grader.quoting import OBSERVATIONS
from grader.results import Kind

# Per session: the lessons whose tests were collected, each as (its tree, whether every test
# of it was selected).
LESSONS = pytest.StashKey[dict[str, tuple[str, bool]]]()

_STATUS = MappingProxyType(
    {
        Kind.TODO: ("todo", "T", ("TODO", {"yellow": True})),
        Kind.BROKEN: ("broken", "B", ("BROKEN", {"red": True})),
        Kind.TIMEOUT: ("timeout", "L", ("TIMEOUT", {"red": True})),
    }
)


class _Shown:
    """A failure's text (``str``, what the results record) and what the terminal shows of it."""

    def __init__(self, text: str, group: list[str], name: str, advised: dict[str, str]) -> None:
        self.text, self.group, self.name = text, group, name  # group: the tests that share it, in order
        self.advised = advised  # {a line of advice: the first test whose section shows it}, the session's

    def __str__(self) -> str:
        return self.text

    @property
    def repeated(self) -> bool:
        """Whether an earlier test's section shows this failure."""
        return self.name != self.group[0]

    def toterminal(self, tw) -> None:
        first, *others = self.group
        if self.repeated:  # (where a report is shown alone)
            tw.line(f"The same failure as {first} (shown above).")
            return
        opening, *rest = self.text.splitlines() or [""]
        tw.line(opening)
        pointed = None  # the test the last line pointed to: lines in a row told there make one pointer
        for line in rest:
            first_told = self.advised.get(line) if _advice(line) else None
            if first_told in (None, self.name):
                tw.line(line)
            elif first_told != pointed:
                tw.line(f'(As told under {first_told} above: "{_opening(line)}")')
            pointed = first_told if first_told not in (None, self.name) else None
        if others:
            names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            # "each on its own input": their numbers, sizes and dtypes may differ from this section's
            tw.line(
                f"(The same failure, each on its own input, in {len(others)} more test{'s' if len(others) > 1 else ''}: "
                f"{names}.)"
            )


class _SharedFailures:
    """Groups the failures of a session by what they share, as their reports come."""

    def __init__(self) -> None:
        self.groups: dict[tuple, list[str]] = {}
        self.parameters: tuple[str, ...] | None = None  # every test's, once the first has run
        self.advised: dict[str, str] = {}  # each line of advice: the first test whose section shows it

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

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        """pytest prints a section for each failed test: the tests whose failure was shown in
        full by another's section (which names them) get none. The counts stay every test's."""
        tr = terminalreporter
        failed = tr.stats.get("failed")
        if failed:
            tr.stats["failed"] = [r for r in failed if not (isinstance(r.longrepr, _Shown) and r.longrepr.repeated)]
        try:
            return (yield)
        finally:
            if failed:
                tr.stats["failed"] = failed

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failure = getattr(report, "kata_failure", None)
        if not report.failed or failure is None or failure.kind in _STATUS or report.longrepr is None:
            return
        text, parameters = str(report.longrepr), self.parameters or ()
        last = failure.summary.strip().splitlines()[-1:]  # the error itself, without a worker's number
        handled = getattr(report, "kata_handled", None)
        # Each way two failures can be the same; the first key an earlier failure has is its group.
        # (The last line is the error only where the kit's message is not told about one: after
        # a kit's message, it is advice, which two different errors can share.)
        keys = [
            (failure.where, _alike(handled, parameters)) if failure.where and handled else None,
            (failure.exception, failure.where, *(_alike(line, parameters) for line in last))
            if failure.where and not handled
            else None,
            (failure.exception, _alike(text, parameters)),
        ]
        # Advice for another dtype is another failure ("cast back to float16"), though the dtype
        # is left out of the rest as a parameter of the tests. (Advice on a line of its own: the
        # first line says what was called on which input, and names the input's dtype.)
        dtypes = tuple(
            m.group()
            for line in text.splitlines()[1:]
            if _advice(line) and not line.endswith(":")
            for m in _DTYPE.finditer(line)
        )
        keys = [(*key, dtypes) for key in keys if key is not None]
        group = next((self.groups[key] for key in keys if key in self.groups), [])
        for key in keys:
            self.groups.setdefault(key, group)
        name = report.nodeid.split("::", 1)[-1]
        group.append(name)
        if len(group) == 1:  # a section of its own, shown in this order: advice is told in the first
            for line in text.splitlines()[1:]:
                if _advice(line):
                    self.advised.setdefault(line, name)
        report.longrepr = _Shown(text, group, name, self.advised)


_NAME = re.compile(r"[A-Za-z_][\w.]*")  # a parameter's id that is a name: float32, k1, sliced (a shape is values)
_VALUES = re.compile(
    r"\[[^\[\]{}]*\]|\{[^\[\]{}]*\}|\((?:<number>|<values>)(?:, (?:<number>|<values>))*,?\)"
    r"|(?<=shape )\(\)"
)  # a 0-d tensor's shape is a size too
# A line of the kit's advice that another failure can share word for word (a pitfall and its fix):
# long, not indented (a line of code), and not an error's own line (which is what went wrong).
_ADVICE = re.compile(r"^(?![ \t(]|\w+(?:Error|Exception|Warning): )(?!.*: in \w+$).{100,}$")


def _advice(line: str) -> bool:
    return bool(_ADVICE.match(line)) and not line.startswith((*OBSERVATIONS, failures.EXAMPLE))


def _opening(line: str) -> str:
    """The first words of a line, enough to find it above: to its first stop, or about 50 characters."""
    stop = re.match(r"^.{12,60}?[:.;](?=\s)", line)
    if stop:
        return stop.group() + " ..."
    cut = re.match(r"^.{40,50}?(?=\s)", line)
    return cut.group() + " ..." if cut else line


_DTYPE = re.compile(r"\b(?:b?float|u?int|complex)\d+\b")  # a dtype as messages name it

_EXAMPLE = re.compile(rf"^(?:Falsifying |Failing |{failures.EXAMPLE})", re.MULTILINE)  # hypothesis's example


def _alike(text: str, parameters: tuple[str, ...]) -> str:
    """`text` as the same failure reads in another test: without hypothesis's example, the
    tests' parameters, any number, or the contents of a list, a dict or a size."""
    # Numbers first, in the parameters too: float32, a parameter, and float64, which none of
    # the tests' ids names, are then one word.
    text = failures.NUMBER.sub("<number>", _EXAMPLE.split(text, 1)[0].strip())
    for parameter in dict.fromkeys(failures.NUMBER.sub("<number>", p) for p in parameters):  # whole words only
        text = re.sub(rf"(?<![\w.]){re.escape(parameter)}(?![\w<])", "<parameter>", text)
    while True:  # lists, dicts and sizes of any length: ['part1.tar', 'part0.tar'], (4, 1, 2)
        text, count = _VALUES.subn("<values>", text)
        if not count:
            return text


def _parameters(items: list[pytest.Item], module) -> tuple[str, ...]:
    """The parts of the tests' ids in brackets that are names ("float32", not "3", in
    test_x[float32-3]; numbers and sizes are left out anyway), longest first, less the names of
    the learner's module (test_x[softmax] and test_x[logsumexp] test two functions: their
    failures are two)."""
    parts = {
        p
        for item in items
        if getattr(item, "callspec", None) is not None
        for part in item.callspec.id.split("-")
        if part
        for p in (part, part.rsplit(".", 1)[-1])
    }
    defined = _module_names(module)
    kept = (p for p in parts if _NAME.fullmatch(p) and p not in defined)
    return tuple(sorted(kept, key=len, reverse=True))


def _module_names(module) -> set[str]:
    """The names the learner's module defines. A module in another process (grader.remote) is
    not asked, which would be a call of the code under test's and, for an object that cannot
    cross, an error charged to the test that runs: its source files are read instead."""
    sources = getattr(module, "_kata_sources", None)  # (a plain attribute: no call to that process)
    if sources is None:
        return set(vars(module))
    names: set[str] = set()
    for path in sources:
        try:
            tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SharedFailures(), "kata-shared-failures")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    failure = getattr(report, "kata_failure", None)
    return _STATUS.get(failure.kind) if failure else None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Which lessons the run holds, and whether each is whole: every test file of tests/NN
    collected, no single test named (``file::test``). A lesson test's path is tests/NN/test_*.py;
    a run holding any other test holds no lesson."""
    tests = session.config.rootpath / "tests"
    files: dict[str, set[Path]] = {}
    trees: dict[str, str] = {}
    for item in session.items:
        folder = item.path.parent
        if folder.parent != tests or not LESSON_RE.match(folder.name):
            return
        files.setdefault(folder.name, set()).add(item.path)
        trees.setdefault(folder.name, tree_of(item))
    one_test_named = any("::" in arg for arg in session.config.args)
    session.config.stash[LESSONS] = {
        name: (trees[name], not one_test_named and found == set((tests / name).glob("test_*.py")))
        for name, found in files.items()
    }


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tr = terminalreporter
    for reason, count in _skip_reasons(tr.stats.get("skipped", [])).items():
        tr.line(f"{count} test{'s' if count != 1 else ''} skipped: {reason}")
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
    if exitstatus == 0 and tr.stats.get("passed"):
        line = _all_passed(
            config, len(tr.stats["passed"]), len(tr.stats.get("skipped", [])), bool(tr.stats.get("deselected"))
        )
        if line:
            tr.line(line, green=True)


def _all_passed(config: pytest.Config, passed: int, skipped: int, deselected: bool) -> str | None:
    """What a run in which every test passed (or was skipped) means: a lesson done, or only the
    tests chosen; None for a run that holds no lesson."""
    lessons = config.stash.get(LESSONS, {})
    if not lessons:
        return None
    tests = f"{passed} test{'s' if passed != 1 else ''}"
    if deselected or not all(whole for _, whole in lessons.values()):
        tree, _ = next(iter(lessons.values()))
        names = ", ".join(lessons)
        return (
            f"The {tests} you chose pass{'es' if passed == 1 else ''}: part of {names}, not all of it. "
            f"`pytest {' '.join(f'{tree}/{name}' for name in lessons)}` runs every test."
        )
    if len(lessons) > 1:
        return f"All {tests} of the {len(lessons)} lessons run pass. `kata next` says where to go on."
    ((name, (tree, _)),) = lessons.items()
    order = [lesson.name for lesson in all_lessons(config.rootpath)]
    after = order[order.index(name) + 1 :] if name in order else []
    where = (
        f"Next: `pytest {tree}/{after[0]}`, or `kata next` for a lesson you left unfinished."
        if after
        else "It is the last lesson: `kata next` says whether one is left unfinished."
    )
    if skipped:
        return f"Every test of {name} that can run here passes ({tests}; {skipped} skipped, see above). {where}"
    return f"Every test of {name} passes ({tests}). {where}"


def _skip_reasons(reports) -> dict[str, int]:
    """Why tests were skipped, each reason once, with how many tests it skipped."""
    counts: dict[str, int] = {}
    for report in reports:
        if isinstance(report.longrepr, tuple):  # (file, line, reason)
            reason = report.longrepr[2].removeprefix("Skipped: ")
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def _loops(tr) -> None:
    """Each line the time limit stopped a test at, once: how many more tests it stopped there
    (a loop that runs as a module is imported, say), and how many later tests waited on its
    loop (grader.plugin.loops); those are not shown one by one."""
    stopped: dict[
        str, list
    ] = {}  # the line (or the message, where no line is known) -> the reports of the tests stopped there
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
            tr.line(
                f"  ({count} more test{'s that reach it' if count != 1 else ' that reaches it'} ended at once, "
                "waiting on it)"
            )


def _unique_messages(reports) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        message = str(report.longrepr)
        counts[message] = counts.get(message, 0) + 1
    return counts
