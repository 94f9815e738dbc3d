"""``kata grade``: grade a whole class's .py work, without trusting it.

    kata grade CLASS_DIR --out RESULTS_DIR [--jobs N] [--lessons ...] [--no-speed] [--shard I/N] [--in-process] [--trusted]
    kata grade --merge RESULTS_DIR... --out RESULTS_DIR

CLASS_DIR holds one folder per student, each with an ``exercises/`` tree (whole, partial or
broken). Every (student, lesson) runs in a grading copy of its own: the kit's conftest.py and
pyproject.toml, the lesson's tests (no mutants), the stubs with the student's files laid over
them; no ``solutions/``. The runs are forked from one preloaded process, under limits
(grader.grading.sandbox), and report over a channel the parent owns (grader.grading.protocol).

RESULTS_DIR gets:

    students/<name>.json     kata report --json's shape (exercism v3), plus points and reasons
    logs/<name>/<lesson>.txt what the lesson's run printed (cut to --max-output)
    class.csv                student x lesson points, total, flags
    summary.txt              the table printed at the end, and every problem, one line each

Each student's JSON is written, atomically, the moment the student is done, with a fingerprint
of everything that decided it (the student's files, the kit's tests and grader, the options): an
interrupted run loses only students in progress, and a re-run skips students whose fingerprint
did not change. Identical submissions of a lesson (an untouched stub, above all) run once.

This module is the command; the work is done by: intake (the students' files), kitfiles (the
grading copies), schedule (what runs, and resuming), sandbox (the runs; in each, runner and its
sessions: grader.grading.job), verdict (a lesson's result from its run), records (a student's
file), classtables (class.csv, summary.txt, --merge).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from grader.grading.classtables import merge
from grader.grading.intake import find_students
from grader.grading.job import Limits
from grader.lessons import KitError, chosen_lessons

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# CPU seconds a lesson may use, per wall-clock second: more than one, as threads spinning in
# parallel can use CPU time faster than the clock runs; the wall clock stops the rest.
CPU_PER_WALL = 1.25


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "class_dir",
        nargs="?",
        type=Path,
        metavar="CLASS_DIR",
        help="one folder per student, each holding an exercises/ tree",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="RESULTS_DIR",
        help="where the results go (students/*.json, class.csv, summary.txt)",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="RESULTS_DIR",
        help="grade nothing: combine these results folders (shards) into --out",
    )
    parser.add_argument("--lessons", nargs="+", metavar="LESSON", help="only these lessons (default: all)")
    parser.add_argument("--students", nargs="+", metavar="NAME", help="only these students (default: all)")
    parser.add_argument(
        "--shard",
        type=parse_shard,
        metavar="I/N",
        help="grade the I-th of N slices of the class (1 <= I <= N); merge them with --merge",
    )
    parser.add_argument("--force", action="store_true", help="grade again students whose files did not change")
    add_grading_options(parser)


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    """The options of how each run is graded, shared by kata grade and kata nbgrader autograde."""
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="lesson runs at once (default: the number of cores)"
    )
    parser.add_argument("--no-speed", action="store_true", help="leave out the speed tests")
    checks = parser.add_mutually_exclusive_group()
    checks.add_argument(
        "--remote",
        dest="remote",
        action="store_true",
        default=True,
        help="(the default) run the tests, with their checks, in a process of their own, outside the "
        "boundary, and only the students' code behind it, answering their calls; the tests that cannot "
        "run so (the kit's answer shows which) run again in the student's process (docs/INSTRUCTORS.md)",
    )
    checks.add_argument(
        "--in-process",
        dest="remote",
        action="store_false",
        help="run the tests, with their checks, in the student's process, behind the boundary: faster, "
        "and as trustworthy as checks made beside the code they check (docs/INSTRUCTORS.md)",
    )
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="run the students' code without the OS boundary (namespaces): only for work you trust, "
        "on a machine where namespaces cannot be made",
    )
    default = Limits()
    limits = parser.add_argument_group("limits for one student's lesson")
    # (option, Limits field, parse, metavar, help): each default is Limits()'s
    for option, name, parse, metavar, text in (
        ("--timeout", "wall", float, "S", f"wall-clock seconds (default %s; CPU seconds: {CPU_PER_WALL:g}x this)"),
        ("--test-timeout", "test_timeout", float, "S", "seconds per test (default %s)"),
        (
            "--memory",
            "memory",
            parse_size,
            "SIZE",
            "memory beyond what the grader itself maps, e.g. %s (default) or 512M",
        ),
        (
            "--max-file",
            "file_size",
            parse_size,
            "SIZE",
            "the size any one file it writes may reach, its output included (default %s)",
        ),
        (
            "--max-output",
            "output",
            parse_size,
            "SIZE",
            "output kept in the log, e.g. %s (default); the middle of more is cut",
        ),
    ):
        value = getattr(default, name)
        shown = size_text(value) if parse is parse_size else f"{value:g}"
        limits.add_argument(option, dest=name, type=parse, default=value, metavar=metavar, help=text % shown)


def limits_of(args: argparse.Namespace) -> Limits:
    """The limits the grading options ask for."""
    return Limits(
        wall=args.wall,
        cpu=CPU_PER_WALL * args.wall,
        memory=args.memory,
        output=args.output,
        file_size=args.file_size,
        test_timeout=args.test_timeout,
    )


def grading_of(args: argparse.Namespace, root: Path, lessons: list, out: Path, hidden: tuple[Path, ...]):
    """kata grade's engine, set up as the grading options ask; no run sees `hidden` (the class)."""
    if os.name != "posix" or not hasattr(os, "fork"):
        raise KitError("kata grade needs fork() and resource limits (Linux or macOS)")
    from grader.grading.schedule import Grading

    return Grading(
        root,
        lessons,
        out,
        limits_of(args),
        speed=not args.no_speed,
        jobs=max(1, args.jobs),
        hidden=hidden,
        trusted=args.trusted,
        remote=args.remote,
    )


def parse_shard(text: str) -> tuple[int, int]:
    """--shard's "I/N": the I-th of N slices."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N, like 2/8, not {text!r}") from None
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"{text}: I must be between 1 and N")
    return i, n


def parse_size(text: str) -> int:
    """A size in bytes: 512M, 4G, 64K (any case) or a plain number."""
    try:
        if text[-1:].upper() in UNITS:
            return int(float(text[:-1]) * UNITS[text[-1].upper()])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size like 512M or 4G, not {text!r}") from None


def size_text(size: int) -> str:
    """The largest unit that says `size` exactly: 4G, 256M, 64K."""
    for unit, factor in reversed(UNITS.items()):
        if size and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def run(args: argparse.Namespace, root: Path) -> int:
    if args.merge:
        return merge(args.merge, args.out)
    if args.class_dir is None:
        raise KitError(
            "say which class to grade: kata grade CLASS_DIR --out RESULTS_DIR "
            "(or combine shards with kata grade --merge RESULTS_DIR... --out RESULTS_DIR)"
        )
    if not args.class_dir.is_dir():
        raise KitError(f"{args.class_dir} is not a folder: CLASS_DIR holds one folder per student")
    lessons = chosen_lessons(root, args.lessons)
    grading = grading_of(args, root, lessons, args.out, (args.class_dir,))
    roster = [s for s in find_students(args.class_dir) if s.folder.resolve() != args.out.resolve()]
    if args.students:
        unknown = sorted(set(args.students) - {s.name for s in roster})
        if unknown:
            raise KitError(f"no folder in {args.class_dir} for: {', '.join(unknown)}")
        roster = [s for s in roster if s.name in args.students]
    if args.shard:
        i, n = args.shard
        roster = roster[i - 1 :: n]
    return grading.run(roster, force=args.force)
