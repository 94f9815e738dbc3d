"""``kata hint LESSON [LEVEL]``: a lesson's hints, one level at a time.

Hints live in tests/NN_topic/hints.md as "## Level N" sections (see Lesson.hints); level 1
points to the idea, the last one comes close to the answer without giving the code.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.lessons import KitError, Lesson, get_lesson


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("lesson", metavar="LESSON", help="lesson name or number, e.g. 07_stable or 07")
    parser.add_argument("level", nargs="?", type=int, default=1, help="hint level, from 1 (default: 1)")


def run(args: argparse.Namespace, root: Path) -> int:
    return show_hint(get_lesson(root, args.lesson), args.level)


def show_hint(lesson: Lesson, level: int) -> int:
    hints = lesson.hints()
    if not hints:
        raise KitError(f"lesson {lesson.name} has no hints yet ({lesson.hints_file} is missing)")
    if not 1 <= level <= len(hints):
        raise KitError(f"lesson {lesson.name} has hint levels 1 to {len(hints)}; try `kata hint {lesson.name} 1`")
    print(f"{lesson.name}, hint {level} of {len(hints)}\n\n{hints[level - 1]}")
    if level < len(hints):
        print(f"\nStill stuck? kata hint {lesson.name} {level + 1}")
    return 0
