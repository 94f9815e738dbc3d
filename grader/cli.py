"""The command line: ``python -m grader COMMAND`` (or ``kata COMMAND``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.lessons import KitError, all_lessons, find_root, get_lesson

EXAMPLES = """examples:
  python -m grader verify                 check every lesson (CI runs this)
  python -m grader verify 07_stable -v    one lesson, with each mutant and the test that caught it
  python -m grader hint 07_stable         the first hint for lesson 07
  python -m grader hint 07 2              the second level
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader", description="Effective PyTorch Kata: tools for learners and instructors.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", type=Path, help="the kit's folder (default: found from the current folder)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    verify = commands.add_parser(
        "verify", help="prove each lesson's tests pass the reference and reject stubs and mutants",
        description="For each lesson: the tests pass against solutions/, no test passes against the "
        "untouched exercises/, stub and solution agree, hints exist, and every mutant in "
        "tests/NN/mutants/ is rejected by at least one test. Exits 1 on any problem.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    verify.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="pytest runs at once (default: the number of cores)")
    verify.add_argument("-v", "--verbose", action="store_true", help="show each run and each mutant's fate")

    hint = commands.add_parser("hint", help="show a lesson's hints, one level at a time",
                               epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    hint.add_argument("lesson", metavar="LESSON", help="lesson name or number, e.g. 07_stable or 07")
    hint.add_argument("level", nargs="?", type=int, default=1, help="hint level, from 1 (default: 1)")

    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        root = find_root(args.root)
        if args.command == "verify":
            from grader.verify import verify as run_verify

            lessons = [get_lesson(root, name) for name in args.lessons] or all_lessons(root)
            if not lessons:
                raise KitError(f"no lessons found under {root}/tests")
            return run_verify(lessons, jobs=max(1, args.jobs), verbose=args.verbose)
        if args.command == "hint":
            return show_hint(get_lesson(root, args.lesson), args.level)
    except KitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... | head` closed the pipe: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
    return 0


def show_hint(lesson, level: int) -> int:
    hints = lesson.hints()
    if not hints:
        raise KitError(f"lesson {lesson.name} has no hints yet ({lesson.hints_file} is missing)")
    if not 1 <= level <= len(hints):
        raise KitError(f"lesson {lesson.name} has hint levels 1 to {len(hints)}")
    print(f"{lesson.name}, hint {level} of {len(hints)}\n\n{hints[level - 1]}")
    if level < len(hints):
        print(f"\nStill stuck? python -m grader hint {lesson.name} {level + 1}")
    return 0
