"""``kata report``: the learner's results as a file other tools read.

Two shapes:

- ``--json PATH``: exercism's results.json, version 3 (``version``, ``status``, ``message``,
  ``tests[]`` with ``name``, ``status``, ``message``, ``test_code``, ``task_id``; task_id is the
  lesson number), extended with ``lesson``, ``points``, ``max_points``, ``public`` and ``speed``
  (the ratios a speed test measured) on each test and a ``lessons[]`` summary.
- ``--gradescope PATH``: Gradescope's autograder results.json (``score``, ``tests[]`` with
  ``score``, ``max_score``, ``name``, ``output``, ``visibility``): public tests visible at
  once, the others after the grades are published.

Skipped tests (a CUDA test on a machine without a GPU) appear in neither: they are no one's
fault and earn no points. Every lesson runs in a subprocess of its own, in parallel.
"""

from __future__ import annotations

import argparse
import ast
import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from grader.files import write_json
from grader.lessons import KitError, Lesson, chosen_lessons
from grader.results import LessonSummary, Outcome, RunResult, State, TestResult, summarize
from grader.runs import run_pytest
from grader.stubs import first_line

MESSAGE_LIMIT = 65535  # exercism's limit on a message
# What a held test (grader.results.TestResult.held) says in place of its points.
HELD = (
    "passed; its points are held for a person: its check rests on what the code's process recorded, "
    "which that code could switch off, and the lesson is flagged: read the code"
)
EXERCISM_STATUS = {
    Outcome.PASSED: "pass",
    Outcome.FAILED: "fail",
    Outcome.TODO: "fail",
    Outcome.TIMEOUT: "fail",
    Outcome.ERROR: "error",
    Outcome.BROKEN: "error",
}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write exercism's results.json (v3) there")
    parser.add_argument("--gradescope", type=Path, metavar="PATH", help="write Gradescope's results.json there")
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="lessons run at once (default: the number of cores)"
    )


def run(args: argparse.Namespace, root: Path) -> int:
    if not args.json and not args.gradescope:
        raise KitError("say where to write the report: --json PATH (exercism's shape) and/or --gradescope PATH")
    lessons = chosen_lessons(root, args.lessons)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda lesson: run_pytest(root, [f"exercises/{lesson.name}"]), lessons))
    results = list(zip(lessons, runs))
    summaries = [summarize(lesson.name, pytest_run) for lesson, pytest_run in results]
    for path, data in ((args.json, exercism(results, summaries)), (args.gradescope, gradescope(results, summaries))):
        if path:
            write_json(path, data, indent=2)
            print(f"wrote {path}")
    points = sum(s.points for s in summaries)
    print(
        f"{sum(s.done for s in summaries)} of {len(summaries)} lessons done, "
        f"{points:g}/{sum(s.max_points for s in summaries):g} points"
    )
    return 0


def exercism(results: list[tuple[Lesson, RunResult]], summaries: list[LessonSummary]) -> dict:
    tests, problems = [], []
    for (lesson, pytest_run), summary in zip(results, summaries):
        if summary.state is State.ERROR:  # nothing ran: say why at the top, as exercism asks
            problems.append(f"{lesson.name}: {summary.problem}")
        for test in _graded(pytest_run):
            status = EXERCISM_STATUS.get(test.outcome, "error")
            tests.append(
                {
                    "name": _name(test),
                    "status": status,
                    "message": HELD if test.held else None if status == "pass" else test.message[:MESSAGE_LIMIT],
                    "test_code": source_of_test(lesson.root, test.nodeid),
                    "task_id": int(lesson.name[:2]),
                    "lesson": lesson.name,
                    "points": test.points,
                    "max_points": test.max_points,
                    "public": test.public,
                    "speed": list(test.speed),
                    **({"held": True} if test.held else {}),
                }
            )
    if not tests:
        status = "error"
    elif all(t["status"] == "pass" for t in tests) and not problems:
        status = "pass"
    elif all(t["status"] == "error" for t in tests):
        status = "error"
    else:
        status = "fail"
    message = "\n".join(problems)[:MESSAGE_LIMIT] or None
    if status == "error" and not message:
        message = "no test could run: " + next((t["message"] for t in tests if t["message"]), "no tests were collected")
    return {
        "version": 3,
        "status": status,
        "message": message,
        "tests": tests,
        "lessons": [_lesson_summary(s) for s in summaries],
    }


def gradescope(results: list[tuple[Lesson, RunResult]], summaries: list[LessonSummary]) -> dict:
    tests = []
    for lesson, pytest_run in results:
        for test in _graded(pytest_run):
            passed = test.outcome is Outcome.PASSED
            entry = {
                "name": _name(test),
                "score": test.points,
                "max_score": test.max_points,
                "output": "passed" if passed else test.message,
                "visibility": "visible" if test.public else "after_published",
            }
            if test.speed:
                entry["extra_data"] = {"speed": list(test.speed)}
            tests.append(entry)
    lines = [
        f"{s.lesson}: {s.passed}/{s.total} tests, {s.points:g}/{s.max_points:g} points, {s.state}"
        + (f" ({s.problem})" if s.problem else "")
        for s in summaries
    ]
    return {"score": sum(t["score"] for t in tests), "output": "\n".join(lines), "tests": tests}


def _graded(run: RunResult) -> list[TestResult]:
    return [t for t in run.tests if t.counts]


def _name(test: TestResult) -> str:
    """'tests/07_stable/test_stable.py::test_x[case]' -> '07_stable: test_x[case]'."""
    path, _, name = test.nodeid.partition("::")
    return f"{Path(path).parent.name}: {name}"


def _lesson_summary(summary: LessonSummary) -> dict:
    data = summary.to_json()
    del data["first_todo"]
    return data


def source_of_test(root: Path, nodeid: str) -> str:
    """The source of the test function a node id names (decorators included), or "" if not found."""
    path, _, name = nodeid.partition("::")
    function = name.split("[", 1)[0].split("::")[-1]
    return _functions(root / path).get(function, "")


@lru_cache(maxsize=None)
def _functions(path: Path) -> dict[str, str]:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = source.splitlines()
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            start = first_line(node)
            out.setdefault(node.name, "\n".join(lines[start - 1 : node.end_lineno]))
    return out
