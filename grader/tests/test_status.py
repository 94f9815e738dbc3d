"""``kata status`` and ``kata next`` on the demo kit, as a learner runs them."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from grader.tests.kits import QUICK_TESTS, ROOT, SOLUTION, STUB, write_lesson


def kata(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.run(sys.executable, "-m", "grader", *args)


def solve(kit: pytest.Pytester, lesson: str) -> None:
    (kit.path / f"exercises/{lesson}/demo.py").write_text(SOLUTION, encoding="utf-8")


def test_status_of_an_untouched_kit(quick_kit):
    result = kata(quick_kit, "status")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "lesson * tests * points  state",
            "98_demo * 0/3 * 0/4  not started  (next TODO: exercises/98_demo/demo.py:7)",
            "99_other * 0/3 * 0/4  not started",
            "total * 0/8  0 of 2 lessons done",
            "Next: pytest exercises/98_demo*",
        ]
    )


def test_status_counts_points_and_names_the_current_lesson(quick_kit):
    solve(quick_kit, "98_demo")
    half = STUB.replace("    # TODO: add the two numbers.\n    raise NotImplementedError", "    return a + b")
    (quick_kit.path / "exercises/99_other/demo.py").write_text(half, encoding="utf-8")
    result = kata(quick_kit, "status")
    result.stdout.fnmatch_lines(
        [
            "98_demo * 3/3 * 4/4  done",
            "99_other * 2/3 * 2/4  in progress  (next TODO: exercises/99_other/demo.py:12)",
            "total * 6/8  1 of 2 lessons done",
        ]
    )


def test_a_damaged_cache_is_only_a_slower_answer(quick_kit):
    cache = quick_kit.path / ".kata/cache/status.json"
    cache.parent.mkdir(parents=True)
    cache.write_text('{"version": 2, "lessons": {"98_demo": ', encoding="utf-8")
    result = kata(quick_kit, "status", "-v")
    assert result.ret == 0 and result.stderr.str() == ""
    result.stdout.fnmatch_lines(["98_demo * 0/3 * 0/4  not started*", "99_other * 0/3 * 0/4  not started"])
    assert ran(result) in ("ran: 98_demo, 99_other", "ran: 99_other, 98_demo")
    assert ran(kata(quick_kit, "status", "-v")) == "ran: none (every lesson from the cache)", "not written anew"


def test_lessons_run_as_many_at_once_as_the_cpus_this_process_may_use(monkeypatch):
    from grader.learner import status

    from grader.cli import build_parser

    monkeypatch.setattr(status.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert status.usable_cpus() == 3
    assert build_parser().parse_args(["status"]).jobs == 3
    monkeypatch.delattr(status.os, "sched_getaffinity")
    assert status.usable_cpus() == (status.os.cpu_count() or 1)


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


@pytest.mark.parametrize("jobs", ["1", "2"])  # forked runs, fresh ones
def test_a_broken_lesson_is_named_and_the_others_are_still_graded(quick_kit, jobs):
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return a + b", "return a +"))
    solve(quick_kit, "99_other")
    result = kata(quick_kit, "status", "-j", jobs)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["98_demo * 0/3 * 0/4  broken: exercises/98_demo/demo.py:8: SyntaxError*", "99_other * 3/3 * 4/4  done"]
    )


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
    result.stdout.fnmatch_lines(
        [
            "Next: 98_demo (0/3 tests pass, not started)",
            "  open exercises/98_demo/demo.py:7 and replace the TODO there with your code",
            "  run:   pytest exercises/98_demo",
            "*kata watch 98_demo*",
            "  stuck: kata hint 98_demo",
        ]
    )
    solve(quick_kit, "98_demo")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Next: 99_other (0/3 tests pass, not started)"])
    solve(quick_kit, "99_other")
    kata(quick_kit, "next").stdout.fnmatch_lines(["Every lesson passes*"])


def test_next_picks_the_lesson_in_progress_and_runs_no_untouched_lesson(quick_kit):
    half = STUB.replace("    # TODO: add the two numbers.\n    raise NotImplementedError", "    return a + b")
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
    half = STUB.replace("    # TODO: add the two numbers.\n    raise NotImplementedError", "    return a + b")
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


# statuses() with a time limit of its own for each run, as `kata status` calls it, `jobs` at
# once (forked where there are more lessons to run than that); "no-fork" first takes os.fork
# away, as on Windows.
STATUSES = """\
import os, sys
from pathlib import Path
if sys.argv[1] == "no-fork":
    del os.fork
from grader.learner.status import Cache, print_table, statuses
from grader.lessons import all_lessons
print("status pid", os.getpid())
root = Path.cwd()
print_table(statuses(all_lessons(root), cache=Cache(root, enabled=False), jobs=int(sys.argv[3]), timeout=float(sys.argv[2])))
print("the caller imported torch:", "torch" in sys.modules)
"""


def statuses_run(kit: pytest.Pytester, how: str, timeout: float = 60, jobs: int = 1) -> pytest.RunResult:
    result = kit.run(sys.executable, "-c", STATUSES, how, str(timeout), str(jobs))
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return result


@pytest.mark.parametrize("how", ["fork", "no-fork"])
def test_a_lesson_that_hangs_or_exits_is_named_and_the_others_are_graded(quick_kit, how):
    # 97 ends its process as its module is imported; 98's import never returns (pytest-timeout
    # bounds a test's time, not this); 99 is solved.
    write_lesson(quick_kit.path, "97_exits", stub="import os\nos._exit(3)\n" + STUB, tests=QUICK_TESTS)
    hang = "import time\ntime.sleep(3600)\n" + STUB
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(hang, encoding="utf-8")
    solve(quick_kit, "99_other")
    result = statuses_run(quick_kit, how, timeout=20, jobs=2)
    result.stdout.fnmatch_lines(
        ["97_exits *", "98_demo *", "99_other * 3/3 * 4/4  done", "total * 1 of 3 lessons done"]
    )
    if how == "fork":
        result.stdout.fnmatch_lines(
            [
                "97_exits * 0/3 * 0/4  stopped: the run ended (exit status 3) before its tests finished: "
                "the code under test called os._exit*",
                "98_demo * 0/3 * 0/4  stopped: the run stopped after 20 s, the time limit for a lesson*",
            ]
        )


@pytest.mark.parametrize(
    "how, jobs, forked",
    [
        ("fork", 1, True),
        ("fork", 2, False),  # no more lessons than runs at once: each a fresh process, no preloading
        ("no-fork", 1, False),
    ],
)
def test_each_run_imports_the_learners_module_itself(quick_kit, how, jobs, forked):
    # Forked: by a run the runner child forked, never by the runner (which would hand every
    # run the module as it was then) nor by the caller, which imports no torch. Else by a
    # fresh pytest process of the caller's. The results are the same either way.
    record = "import os\nwith open('importers.txt', 'a') as f:\n    f.write(f'{os.getpid()} {os.getppid()}\\n')\n"
    (quick_kit.path / "exercises/98_demo/demo.py").write_text(record + SOLUTION, encoding="utf-8")
    result = statuses_run(quick_kit, how, jobs=jobs)
    result.stdout.fnmatch_lines(["98_demo * 3/3 * 4/4  done", "99_other * 0/3 * 0/4  not started*"])
    status = result.stdout.lines[0].split()[-1]
    importers = {tuple(line.split()) for line in (quick_kit.path / "importers.txt").read_text().splitlines()}
    assert importers and all(pid != status for pid, _ in importers)
    if forked:
        assert all(parent != status for _, parent in importers), "the module was imported by the runner itself"
        assert result.stdout.lines[-1] == "the caller imported torch: False"
    else:
        assert all(parent == status for _, parent in importers), "not a fresh subprocess of the caller's"
