"""``kata status`` and ``kata next`` on the demo kit, as a learner runs them."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from grader.tests.kits import ROOT, SOLUTION, STUB


def kata(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.run(sys.executable, "-m", "grader", *args)


def solve(kit: pytest.Pytester, lesson: str) -> None:
    (kit.path / f"exercises/{lesson}/demo.py").write_text(SOLUTION, encoding="utf-8")


def test_status_of_an_untouched_kit(quick_kit):
    result = kata(quick_kit, "status")
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "lesson * tests * points  state",
        "98_demo * 0/3 * 0/4  not started  (next TODO: exercises/98_demo/demo.py:7)",
        "99_other * 0/3 * 0/4  not started",
        "total * 0/8  0 of 2 lessons done",
        "Next: pytest exercises/98_demo*",
    ])


def test_status_counts_points_and_names_the_current_lesson(quick_kit):
    solve(quick_kit, "98_demo")
    half = STUB.replace('    # TODO: add the two numbers.\n    raise NotImplementedError', "    return a + b")
    (quick_kit.path / "exercises/99_other/demo.py").write_text(half, encoding="utf-8")
    result = kata(quick_kit, "status")
    result.stdout.fnmatch_lines([
        "98_demo * 3/3 * 4/4  done",
        "99_other * 2/3 * 2/4  in progress  (next TODO: exercises/99_other/demo.py:12)",
        "total * 6/8  1 of 2 lessons done",
    ])


def ran(result) -> str:
    return result.stdout.lines[-1]


def test_status_is_cached_until_a_file_changes(quick_kit):
    first = kata(quick_kit, "status", "-v")
    assert ran(first) in ("ran: 98_demo, 99_other", "ran: 99_other, 98_demo")
    assert first.stderr.str() == ""  # piped: no progress lines among the output
    again = kata(quick_kit, "status", "-v")
    assert ran(again) == "ran: none (every lesson from the cache)", "nothing changed, yet lessons ran again"
    assert again.stdout.lines[:-1] == first.stdout.lines[:-1]
    solve(quick_kit, "99_other")
    after_edit = kata(quick_kit, "status", "-v")
    assert ran(after_edit) == "ran: 99_other"
    after_edit.stdout.fnmatch_lines(["99_other * 3/3 * 4/4  done"])
    fresh = kata(quick_kit, "status", "--no-cache", "-v")
    assert "98_demo" in ran(fresh)


def test_a_broken_lesson_is_named_and_the_others_are_still_graded(quick_kit):
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return a + b", "return a +"))
    solve(quick_kit, "99_other")
    result = kata(quick_kit, "status")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["98_demo * 0/3 * 0/4  broken: exercises/98_demo/demo.py:8: SyntaxError*", "99_other * 3/3 * 4/4  done"])


def test_status_of_some_lessons_from_a_subfolder(quick_kit, monkeypatch):
    monkeypatch.chdir(quick_kit.path / "exercises" / "99_other")
    result = quick_kit.run(sys.executable, "-m", "grader", "status", "99")
    result.stdout.fnmatch_lines(["99_other * 0/3 *"])
    assert "98_demo" not in result.stdout.str()


def test_an_unknown_lesson_lists_the_lessons(quick_kit):
    result = kata(quick_kit, "status", "42")
    assert result.ret == 2
    result.stderr.fnmatch_lines(["error: no lesson '42'; the lessons are: 98_demo, 99_other"])


def test_next_walks_the_lessons_in_order(quick_kit):
    result = kata(quick_kit, "next")
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "Next: 98_demo (0/3 tests pass, not started)",
        "  open exercises/98_demo/demo.py:7 and replace the TODO there with your code",
        "  run:   pytest exercises/98_demo",
        "*kata watch 98_demo*",
        "  stuck: kata hint 98_demo",
    ])
    solve(quick_kit, "98_demo")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Next: 99_other (0/3 tests pass, not started)"])
    solve(quick_kit, "99_other")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Every lesson passes*"])


def test_next_picks_the_lesson_in_progress_and_runs_no_untouched_lesson(quick_kit):
    half = STUB.replace('    # TODO: add the two numbers.\n    raise NotImplementedError', "    return a + b")
    (quick_kit.path / "exercises/99_other/demo.py").write_text(half, encoding="utf-8")
    result = kata(quick_kit, "next")
    result.stdout.fnmatch_lines(["Next: 99_other (2/3 tests pass, in progress)"])
    # 98_demo's files are its untouched stubs: not started, known without running its tests.
    cached = json.loads((quick_kit.path / ".kata/cache/status.json").read_text(encoding="utf-8"))
    assert list(cached["lessons"]) == ["99_other"]


@pytest.mark.parametrize("stubs", ["release", "none"])
def test_next_without_solutions_knows_the_stubs_from_a_release_or_from_the_tests(quick_kit, stubs):
    # A student release has no solutions/, and its untouched stubs in .kata/pristine/ (what
    # kata reset restores); without either, a lesson whose every test waits on a TODO is not started.
    for name in ("98_demo", "99_other"):
        if stubs == "release":
            shutil.copytree(quick_kit.path / "exercises" / name, quick_kit.path / ".kata/pristine" / name)
        shutil.rmtree(quick_kit.path / "solutions" / name)
    half = STUB.replace('    # TODO: add the two numbers.\n    raise NotImplementedError', "    return a + b")
    (quick_kit.path / "exercises/99_other/demo.py").write_text(half, encoding="utf-8")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Next: 99_other (2/3 tests pass, in progress)"])
    cached = json.loads((quick_kit.path / ".kata/cache/status.json").read_text(encoding="utf-8"))
    assert sorted(cached["lessons"]) == (["99_other"] if stubs == "release" else ["98_demo", "99_other"])


def test_next_takes_the_lowest_numbered_lesson_in_progress(quick_kit):
    for name in ("98_demo", "99_other"):
        (quick_kit.path / f"exercises/{name}/demo.py").write_text(STUB + "\n# started\n", encoding="utf-8")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Next: 98_demo (0/3 tests pass, not started)"])


def test_a_change_to_any_module_of_the_plugin_runs_the_lessons_again(quick_kit):
    # The cache key once listed the grader's modules by hand and missed grader/plugin/untouched.py,
    # which decides outcomes: after an upgrade of the grader, status served stale results.
    shutil.copytree(ROOT / "grader", quick_kit.path / "grader", ignore=shutil.ignore_patterns("__pycache__", "tests"))
    first = kata(quick_kit, "status", "-v")  # run from the kit's folder: its own grader/ is the one imported
    assert "98_demo" in ran(first), first.stdout.str()
    for module in ("plugin/untouched.py", "results.py", "testing/compare.py"):
        path = quick_kit.path / "grader" / module
        path.write_text(path.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
        again = kata(quick_kit, "status", "98_demo", "-v")
        assert ran(again) == "ran: 98_demo", f"a change to grader/{module} left the cached result standing"
