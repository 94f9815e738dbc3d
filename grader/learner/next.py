"""``kata next``: the lesson to work on now, and what to do there.

The lesson in progress comes first (started and not done; the lowest-numbered of several),
then the lowest-numbered one not started. Whether a lesson is started needs no run: its
exercises/NN files are compared with the untouched stubs (`untouched_stubs`). Only started
lessons run their tests (through ``kata status``'s cache), to know whether they are done; on a
fresh kit nothing runs to choose, and the chosen lesson runs once, for what ``kata next`` shows.
Where no untouched stubs are at hand, every lesson runs, and one whose every test waits on a
TODO is not started."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from grader.authoring.exercises import expected_stubs
from grader.learner.reset import is_pristine, lesson_files, pristine_dir, pristine_stubs
from grader.learner.status import Cache, add_no_cache, statuses
from grader.lessons import Lesson, all_lessons
from grader.results import State


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    add_no_cache(parser)


def run(args: argparse.Namespace, root: Path) -> int:
    return show_next(root, Cache(root, enabled=not args.no_cache))


def untouched_stubs(lesson: Lesson) -> dict[str, bytes] | None:
    """The lesson's stubs as handed out, by file name: a student release's .kata/pristine/, else
    what `kata exercises` makes of solutions/NN; None when neither is there.

    Not git's HEAD, which ``kata reset`` falls back on: a learner who commits their work would
    make it look untouched."""
    if lesson_files(pristine_dir(lesson.root, lesson.name)):
        return pristine_stubs(lesson)[0]
    if lesson.dir("solutions").is_dir():
        return {name: text.encode("utf-8") for name, text in expected_stubs(lesson).items()}
    return None


def started(lesson: Lesson) -> bool | None:
    """Whether the learner changed a stub of exercises/NN; None where no stubs are at hand to
    compare with."""
    stubs = untouched_stubs(lesson)
    return None if stubs is None else not is_pristine(lesson, stubs)


def choose(root: Path, cache: Cache | None = None) -> Lesson | None:
    """The lesson in progress (the lowest-numbered), else the first not done; None when every
    lesson is done. Only the lessons that may be started run, at once, one per core; where no
    stubs are at hand, a lesson whose tests all wait on TODOs counts as not started."""
    lessons = all_lessons(root)
    begun = {lesson.name: started(lesson) for lesson in lessons}
    ran = [lesson for lesson in lessons if begun[lesson.name] is not False]
    status = dict(
        zip((lesson.name for lesson in ran), statuses(ran, cache=cache or Cache(root), jobs=os.cpu_count() or 1))
    )
    unfinished = [lesson for lesson in lessons if lesson.name not in status or not status[lesson.name].done]
    in_progress = [
        lesson
        for lesson in unfinished
        if begun[lesson.name] or (begun[lesson.name] is None and status[lesson.name].state is not State.NOT_STARTED)
    ]
    return next(iter(in_progress + unfinished), None)


def show_next(root: Path, cache: Cache) -> int:
    lesson = choose(root, cache)
    if lesson is None:
        print("Every lesson passes. Well done! `kata status` shows your points.")
        return 0
    (status,) = statuses([lesson], cache=cache, jobs=1)  # from the cache, unless it was not started
    print(f"Next: {lesson.name} ({status.passed}/{status.total} tests pass, {status.state})")
    if status.problem:
        print(f"  fix first: {status.problem}")
    if status.first_todo:
        print(f"  open {status.first_todo} and replace the TODO there with your code")
    print(f"  run:   pytest exercises/{lesson.name}")
    print(f"  watch: kata watch {lesson.name}   (re-runs the tests each time you save)")
    print(f"  stuck: kata hint {lesson.name}")
    return 0
