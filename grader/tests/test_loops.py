"""A loop that never ends is stopped once a session: the function it ran ends at once in every
later test that reaches it (grader/plugin/loops.py), in-process and with --kata-remote."""

from __future__ import annotations

import json
import shutil
import textwrap
import tomllib

import pytest

from grader.results import Kind, Outcome, RunResult
from grader.tests.kits import ROOT, SOLUTION
from grader.tests.test_harness import assert_outcomes, run

LOOP = "    while a < b:  # never changes\n        pass\n"
LIMIT = "timeout=2"  # seconds: the loop's one wait, per run


def results(kit: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    """The run's terminal and its results by test name."""
    report = kit.path / "report.json"
    result = run(kit, *args, "-o", LIMIT, f"--kata-report={report}")
    tests = RunResult.from_json(json.loads(report.read_text())).tests
    return result, {t.nodeid.split("::")[-1]: t for t in tests}


def assert_waited(tests: dict, first: str, waiting: list[str], where: str) -> None:
    """`first` hit the time limit at `where`; each of `waiting` ended at once as a TIMEOUT
    naming that line and that test."""
    __tracebackhide__ = True
    stopped = tests[first]
    assert stopped.outcome is Outcome.TIMEOUT and stopped.failure.where == where, stopped
    assert stopped.message.startswith(f"TIMEOUT: {first} did not finish in 2.0 s; it was running "), stopped.message
    for name in waiting:
        test = tests[name]
        assert test.outcome is Outcome.TIMEOUT and test.failure.kind is Kind.TIMEOUT, test
        assert test.failure.where == where, test
        assert f"did not finish in 2.0 s in {first}; it was running " in test.message, test.message
        assert f"({where})" in test.message and "\n" not in test.message, test.message


def lesson(kit: pytest.Pytester, code: str, tests: str, tree: str = "exercises") -> None:
    (kit.path / tree / "98_demo/demo.py").write_text(textwrap.dedent(code))
    (kit.path / "tests/98_demo/test_demo.py").write_text(textwrap.dedent(tests))


def test_a_loop_is_stopped_once_and_the_tests_that_reach_it_wait_on_it(kit):
    looping = SOLUTION.replace("    return a + b\n", LOOP + "    return a + b\n")
    (kit.path / "exercises/98_demo/demo.py").write_text(looping)
    result, tests = results(kit, "exercises/98_demo", "-m", "not speed")
    assert_outcomes(result, passed=1, timeout=2)
    line = looping.splitlines().index(LOOP.splitlines()[0]) + 1
    where = tests["test_add"].failure.where
    assert where in (f"exercises/98_demo/demo.py:{line}", f"exercises/98_demo/demo.py:{line + 1}")
    assert_waited(tests, "test_add", ["test_add_negative"], where)
    assert tests["test_scale"].outcome is Outcome.PASSED  # it never calls add: it runs as ever
    result.stdout.fnmatch_lines(
        [
            "tests/98_demo/test_demo.py LL. *",
            "*= TIMEOUT =*",
            f"TIMEOUT: test_add did not finish in 2.0 s; it was running add ({where}).",
            "  Look there for a loop that never ends*",
            "  (1 more test that reaches it ended at once, waiting on it)",
        ]
    )
    assert "FAILURES" not in result.stdout.str()


HELPER = """\
def _settle(x):
    while x == x:
        pass
    return x


def add(a, b):
    return _settle(a + b)


def scale(x, k=2):
    return _settle(x * k)


def unrelated(x):
    return -x
"""

HELPER_TESTS = """\
def test_add(lesson):
    assert lesson.add(2, 3) == 5


def test_scale(lesson):
    assert lesson.scale(3) == 6


def test_unrelated(lesson):
    assert lesson.unrelated(3) == -3
"""


@pytest.mark.parametrize("where", ["in-process", "remote"])
def test_a_loop_in_a_helper_stops_every_function_that_calls_it(kit, where):
    """The helper is replaced, not the function the test called: `scale` reaches it too.
    Under --kata-remote, the code's process replaces it there."""
    lesson(kit, HELPER, HELPER_TESTS, tree="solutions")
    args = ["--kata-remote"] if where == "remote" else []
    result, tests = results(kit, "solutions/98_demo", *args)
    assert_outcomes(result, passed=1, timeout=2)
    at = tests["test_add"].failure.where
    assert at in ("solutions/98_demo/demo.py:2", "solutions/98_demo/demo.py:3")
    assert_waited(tests, "test_add", ["test_scale"], at)
    assert "it reached _settle, which did not finish" in tests["test_scale"].message
    result.stdout.fnmatch_lines(
        [
            f"TIMEOUT: test_add did not finish in 2.0 s; it was running _settle ({at}).",
            "*(1 more test that reaches it ended at once, waiting on it)",
        ]
    )


def test_a_loop_in_a_method(kit):
    lesson(
        kit,
        """\
        class Counter:
            def __init__(self):
                self.n = 0

            def step(self):
                while self.n >= 0:
                    self.n += 1
                return self.n

            def reset(self):
                self.n = 0
                return self


        def counter():
            return Counter()
        """,
        """\
        def test_step(lesson):
            assert lesson.Counter().step() == 1


        def test_step_again(lesson):
            assert lesson.counter().step() == 1


        def test_reset(lesson):
            assert lesson.Counter().reset().n == 0
        """,
    )
    result, tests = results(kit, "exercises/98_demo")
    assert_outcomes(result, passed=1, timeout=2)
    at = tests["test_step"].failure.where
    assert at in ("exercises/98_demo/demo.py:6", "exercises/98_demo/demo.py:7")
    assert_waited(tests, "test_step", ["test_step_again"], at)
    assert "it reached Counter.step, which" in tests["test_step_again"].message


GIVEN = """\
from hypothesis import given, strategies as st


@given(st.integers(0, 5))
def test_add_given(lesson, x):
    assert lesson.add(x, x + 1) == 2 * x + 1


@given(st.integers(0, 5))
def test_add_given_again(lesson, x):
    assert lesson.add(x + 1, x + 2) == 2 * x + 3
"""


REPORTED = """\
from grader.testing.errors import reported


def test_add(lesson):
    with reported("add(1, 2)"):
        assert lesson.add(1, 2) == 3


def test_add_again(lesson):
    with reported("add(2, 3)"):
        assert lesson.add(2, 3) == 5
"""


@pytest.mark.parametrize("where", ["in-process", "remote"])
@pytest.mark.parametrize("tests", ["hypothesis", "helpers"])
def test_a_loop_reached_in_a_hypothesis_test_or_through_the_tests_helpers(kit, where, tests):
    """A @given test stopped by the limit ends there (hypothesis would run the looping example
    again, with no limit left, to shrink it). The helpers that tell a learner's error with its
    call (`reported`, as every lesson's tests use it) let the limit through: the code's process
    stopping the call is the test's TIMEOUT, not an error of the learner's code. Either way the
    next test that reaches the loop ends at once."""
    first, then = {"hypothesis": ("test_add_given", "test_add_given_again"), "helpers": ("test_add", "test_add_again")}[
        tests
    ]
    lesson(
        kit,
        "def add(a, b):\n    while a < b:\n        pass\n    return a + b\n",
        GIVEN if tests == "hypothesis" else REPORTED,
    )
    result, found = results(kit, "exercises/98_demo", *(["--kata-remote"] if where == "remote" else []))
    assert_outcomes(result, timeout=2)
    at = found[first].failure.where
    assert at in ("exercises/98_demo/demo.py:2", "exercises/98_demo/demo.py:3")
    assert_waited(found, first, [then], at)
    assert "Falsifying" not in result.stdout.str()


@pytest.mark.parametrize("where", ["in-process", "remote"])
def test_a_loop_as_the_module_is_imported_is_told_once(kit, where):
    """Nothing to replace (no function ran it): each test that imports the module is stopped
    there, and the terminal tells the line once, with how many more it stopped."""
    (kit.path / "exercises/98_demo/demo.py").write_text("while True:\n    pass\n")
    result, tests = results(
        kit, "exercises/98_demo", "-m", "not speed", *(["--kata-remote"] if where == "remote" else [])
    )
    assert_outcomes(result, timeout=3)
    (where,) = {t.failure.where for t in tests.values()}
    assert where in ("exercises/98_demo/demo.py:1", "exercises/98_demo/demo.py:2")
    result.stdout.fnmatch_lines(
        [
            f"TIMEOUT: test_add did not finish in 2.0 s; it was running <module> ({where}).",
            "  Look there for a loop that never ends*",
            "  (2 more tests were stopped there too)",
        ]
    )
    assert result.stdout.str().count("did not finish") == 1


@pytest.mark.timeout(300)
def test_a_loop_in_a_lessons_function_costs_its_limit_once(pytester):
    """Lesson 03 with its answers and a loop in broadcast_shape: one test waits out the limit,
    and every other test of broadcast_shape ends at once, naming the same line. The kit's own
    limit is 60 s (pyproject.toml, what the README promises); this run sets 10 s, as the time
    it waits is not what the test checks."""
    kit_limit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["timeout"]
    assert kit_limit == 60
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(ROOT / name, pytester.path / name)
    for tree in ("exercises", "solutions"):
        (pytester.path / tree).mkdir()
        (pytester.path / tree / "__init__.py").write_text("")
    ignore = shutil.ignore_patterns("__pycache__", "mutants")
    shutil.copytree(ROOT / "tests/03_broadcast", pytester.path / "tests/03_broadcast", ignore=ignore)
    lesson = shutil.copytree(ROOT / "solutions/03_broadcast", pytester.path / "exercises/03_broadcast", ignore=ignore)
    source = (lesson / "broadcast.py").read_text()
    start = "    a, b = tuple(shape_a), tuple(shape_b)\n"
    assert source.count(start) == 1
    (lesson / "broadcast.py").write_text(
        source.replace(start, "    i, n = 0, 1\n    while i < n:\n        pass\n" + start)
    )
    loop = next(
        n for n, text in enumerate((lesson / "broadcast.py").read_text().splitlines(), 1) if text == "    while i < n:"
    )

    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "exercises/03_broadcast",
        "-k",
        "broadcast_shape",
        f"--kata-report={report}",
        "-o",
        "timeout=10",
        timeout=300,
    )
    tests = RunResult.from_json(json.loads(report.read_text())).tests
    stopped = [t for t in tests if "did not finish in 10.0 s;" in t.message]
    assert len(stopped) == 1, result.stdout.str()
    first, where = stopped[0].nodeid.split("::")[-1], stopped[0].failure.where
    assert where in (f"exercises/03_broadcast/broadcast.py:{loop}", f"exercises/03_broadcast/broadcast.py:{loop + 1}")
    waiting = [t for t in tests if t is not stopped[0]]
    assert len(waiting) >= 20, [t.nodeid for t in tests]
    for test in waiting:
        assert test.outcome is Outcome.TIMEOUT and test.failure.where == where, test
        assert f"did not finish in 10.0 s in {first}; it was running broadcast_shape ({where})" in test.message, test
    text = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            f"TIMEOUT: {first} did not finish in 10.0 s; it was running broadcast_shape ({where}).",
            "*Look there for a loop that never ends*",
            f"  ({len(waiting)} more tests that reach it ended at once, waiting on it)",
        ]
    )
    assert text.count("did not finish in 10.0 s") == 1, text
    assert "FAILURES" not in text
