"""``kata next``: the first unfinished lesson, and what to do there.

Lessons run one at a time, through ``kata status``'s cache, and the search stops at the first
unfinished one, so on a fresh kit this costs a single lesson's run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.learner.status import Cache, add_no_cache, statuses
from grader.lessons import Lesson, all_lessons
from grader.results import LessonSummary


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    add_no_cache(parser)


def run(args: argparse.Namespace, root: Path) -> int:
    return show_next(root, Cache(root, enabled=not args.no_cache))


def first_unfinished(root: Path, cache: Cache | None = None) -> Lesson | None:
    """The first lesson, in order, that is not done; None when every lesson passes."""
    found = _first_unfinished(root, cache or Cache(root))
    return found[0] if found else None


def _first_unfinished(root: Path, cache: Cache) -> tuple[Lesson, LessonSummary] | None:
    for lesson in all_lessons(root):
        (status,) = statuses([lesson], cache=cache, jobs=1)
        if not status.done:
            return lesson, status
    return None


def show_next(root: Path, cache: Cache) -> int:
    found = _first_unfinished(root, cache)
    if found is None:
        print("Every lesson passes. Well done! `kata status` shows your points.")
        return 0
    lesson, status = found
    print(f"Next: {lesson.name} ({status.passed}/{status.total} tests pass, {status.state})")
    if status.problem:
        print(f"  fix first: {status.problem}")
    if status.first_todo:
        print(f"  open {status.first_todo} and replace the TODO there with your code")
    print(f"  run:   pytest exercises/{lesson.name}")
    print(f"  watch: kata watch {lesson.name}   (re-runs the tests each time you save)")
    print(f"  stuck: kata hint {lesson.name}")
    return 0
