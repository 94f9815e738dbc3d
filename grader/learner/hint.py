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
    show_hint(get_lesson(root, args.lesson), args.level)
    return 0


def show_hint(lesson: Lesson, level: int, quiet: bool = False) -> int:
    """Print hint `level` (the last one, past the end); the level shown. `quiet`: without the
    line that says how to ask for the next one (kata watch has a key for it)."""
    hints = lesson.hints()
    if not hints:
        raise KitError(f"lesson {lesson.name} has no hints yet ({lesson.hints_file} is missing)")
    if level < 1:
        raise KitError(f"lesson {lesson.name} has hint levels 1 to {len(hints)}; try `kata hint {lesson.name} 1`")
    if level > len(hints):  # past the last level: the last one, which is what was asked for
        print(f"{lesson.name} has {len(hints)} hint levels; here is the last one.")
        level = len(hints)
    print(f"{lesson.name}, hint {level} of {len(hints)}\n\n{hints[level - 1]}")
    if level < len(hints) and not quiet:
        print(f"\nStill stuck? kata hint {lesson.name} {level + 1}")
    return level
