"""``kata report``: exercism's results.json (v3) and Gradescope's, on the demo kit."""

from __future__ import annotations

import json
import sys

import pytest

from grader.tests.kits import SOLUTION

EXERCISM_KEYS = {"name", "status", "message", "test_code", "task_id"}


def report(kit: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict, dict]:
    result = kit.run(
        sys.executable,
        "-m",
        "grader",
        "report",
        *args,
        "--json",
        "out/results.json",
        "--gradescope",
        "out/gradescope.json",
    )
    assert result.ret == 0, result.stderr.str()
    read = lambda name: json.loads((kit.path / "out" / name).read_text(encoding="utf-8"))  # noqa: E731 (a one-line reader)
    return result, read("results.json"), read("gradescope.json")


def test_untouched_stubs_fail_with_todo_messages(quick_kit):
    result, exercism, gradescope = report(quick_kit)
    result.stdout.fnmatch_lines(
        ["wrote out/results.json", "wrote out/gradescope.json", "0 of 2 lessons done, 0/8 points"]
    )
    assert exercism["version"] == 3 and exercism["status"] == "fail" and exercism["message"] is None
    assert [t["name"] for t in exercism["tests"][:3]] == [  # the order of the test file
        "98_demo: test_add",
        "98_demo: test_add_negative",
        "98_demo: test_scale",
    ]
    first = exercism["tests"][0]
    assert EXERCISM_KEYS <= first.keys()
    assert first["status"] == "fail" and first["task_id"] == 98
    assert first["message"] == "TODO: add (exercises/98_demo/demo.py:7) is not implemented yet"
    assert first["test_code"] == "@pytest.mark.public\ndef test_add(lesson):\n    assert lesson.add(2, 3) == 5"
    assert gradescope["score"] == 0 and len(gradescope["tests"]) == 6


def test_points_and_visibility(quick_kit):
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION, encoding="utf-8")
    result, exercism, gradescope = report(quick_kit)
    result.stdout.fnmatch_lines(["1 of 2 lessons done, 4/8 points"])
    demo = [t for t in exercism["tests"] if t["lesson"] == "98_demo"]
    assert {t["status"] for t in demo} == {"pass"} and all(t["message"] is None for t in demo)
    assert [t["points"] for t in demo] == [1, 1, 2]
    assert exercism["lessons"][0] == {
        "lesson": "98_demo",
        "state": "done",
        "passed": 3,
        "total": 3,
        "points": 4,
        "max_points": 4,
        "problem": None,
    }
    assert gradescope["score"] == 4
    scale = next(t for t in gradescope["tests"] if t["name"] == "98_demo: test_scale")
    assert scale == {
        "name": "98_demo: test_scale",
        "score": 2,
        "max_score": 2,
        "output": "passed",
        "visibility": "after_published",
    }
    add = next(t for t in gradescope["tests"] if t["name"] == "99_other: test_add")
    assert add["visibility"] == "visible" and add["score"] == 0 and "TODO" in add["output"]
    assert "98_demo: 3/3 tests, 4/4 points, done" in gradescope["output"]


def test_one_lesson_that_cannot_import_is_an_error_with_a_message(quick_kit):
    (quick_kit.path / "exercises/99_other/demo.py").write_text("def add(a, b)\n", encoding="utf-8")
    _, exercism, _ = report(quick_kit, "99")
    assert exercism["status"] == "error"
    assert "99_other" in exercism["message"] and "SyntaxError" in exercism["message"]
    assert {t["status"] for t in exercism["tests"]} == {"error"}


def test_speed_ratios_are_reported(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION, encoding="utf-8")
    _, exercism, gradescope = report(kit, "98")
    speed = next(t for t in exercism["tests"] if t["name"] == "98_demo: test_scale_speed")
    assert speed["status"] == "pass" and speed["speed"] and speed["speed"][0]["ratio"] > 1
    assert "extra_data" in next(t for t in gradescope["tests"] if t["name"] == "98_demo: test_scale_speed")


def test_without_a_destination_it_says_what_to_pass(quick_kit):
    result = quick_kit.run(sys.executable, "-m", "grader", "report")
    assert result.ret == 2
    result.stderr.fnmatch_lines(["error: say where to write the report: --json PATH*--gradescope PATH"])
