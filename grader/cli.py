"""The command line: ``kata COMMAND`` (or ``python -m grader COMMAND``, the same commands).

Each command lives in a module of its own that exposes two functions:
``configure(parser, name)`` adds its arguments, ``run(args, root) -> int`` does the work and
returns the exit status. Those modules import nothing heavy at their top (torch and pytest run
in subprocesses or are imported inside functions), so ``kata --help`` answers at once.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from grader import module_file
from grader.lessons import KitError, find_root

# name -> (module, one-line help, examples). The order is the order of `kata --help`.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "status": (
        "grader.learner.status",
        "one line per lesson: tests passed, points, state, your next TODO",
        """\
  kata status                 every lesson (cached: a second call with nothing changed is instant)
  kata status 03 07_stable    only these lessons
  kata status --no-cache      run everything again""",
    ),
    "next": (
        "grader.learner.next",
        "the lesson in progress (else the first not started) and its command",
        """\
  kata next""",
    ),
    "hint": (
        "grader.learner.hint",
        "a lesson's hints, one level at a time",
        """\
  kata hint 07_stable         the first hint for lesson 07
  kata hint 07 2              the second level""",
    ),
    "watch": (
        "grader.learner.watch",
        "re-run a lesson's tests on every save, warm (torch stays imported)",
        """\
  kata watch                  the lesson `kata next` would pick
  kata watch 03_broadcast     a given lesson (Ctrl-C to stop)""",
    ),
    "reset": (
        "grader.learner.reset",
        "put a lesson's untouched stub back (your file is backed up first)",
        """\
  kata reset 03_broadcast     back up exercises/03_broadcast/*.py, then restore the stubs
  kata reset --list           the backups made so far, newest first""",
    ),
    "report": (
        "grader.learner.report",
        "write your results as JSON (exercism results.json v3 or Gradescope)",
        """\
  kata report --json results.json                 every lesson, exercism-style
  kata report --json results.json 07              one lesson
  kata report --gradescope /autograder/results/results.json""",
    ),
    "release": (
        "grader.authoring.release",
        "write a student bundle: stubs, public tests, tooling; no answers",
        """\
  kata release ../kata-student     then zip that folder and hand it out""",
    ),
    "nbgrader": (
        "grader.notebooks.course",
        "an nbgrader course from the lessons, and class autograding",
        """\
  kata nbgrader build ../course               nbgrader_config.py and a source notebook per lesson
  kata nbgrader autograde ../course 07_stable grade every submission, in parallel; a CSV
  kata nbgrader from-module ../course alice ~/alice/exercises   .py work as a submission""",
    ),
    "grade": (
        "grader.grading.grade",
        "grade a whole class's .py work: isolated, limited, in parallel, resumable",
        """\
  kata grade ../class --out ../results          every student folder in ../class (each has exercises/)
  kata grade ../class --out ../results --jobs 8 --no-speed
  kata grade ../class --out r3 --shard 3/8      one slice of the class (a CI matrix, a Slurm array)
  kata grade --merge r1 r2 r3 --out results     the slices' results as one class.csv and summary""",
    ),
    "gradescope": (
        "grader.grading.gradescope",
        "the kit as a Gradescope autograder zip, graded as kata grade grades",
        """\
  kata gradescope build autograder.zip --lessons 03 07    upload it to a Gradescope programming assignment
  kata gradescope run --autograder /autograder            what its run_autograder calls""",
    ),
    "verify": (
        "grader.authoring.verify",
        "prove each lesson's tests pass the reference and reject stubs and mutants",
        """\
  kata verify                 check every lesson (CI runs this)
  kata verify 07_stable -v    one lesson, with each mutant and the test that caught it""",
    ),
    "exercises": (
        "grader.authoring.exercises",
        "write the stubs in exercises/ from each lesson's one source in solutions/",
        """\
  kata exercises              every lesson's stubs, from the answer regions of solutions/NN
  kata exercises --check      write nothing; exit 1 if a stub is stale (kata verify checks this too)""",
    ),
    "mutate": (
        "grader.authoring.mutate",
        "mutation testing with cosmic-ray: which mutants of the answers the tests miss",
        """\
  kata mutate 07_stable       every mutant of solutions/07_stable, and the ones no test kills
  kata mutate --list 07       the mutants, without running them""",
    ),
}


def available_commands() -> dict[str, tuple[str, str, str]]:
    """The commands whose module is here: a student release leaves out the instructor's (verify)."""
    # By file, not by import: an editable install of the full kit must not leak verify into a bundle.
    return {name: spec for name, spec in COMMANDS.items() if module_file(spec[0]).is_file()}


def build_parser() -> argparse.ArgumentParser:
    overview = "\n".join(f"  {examples.splitlines()[0].strip()}" for _, _, examples in available_commands().values())
    parser = argparse.ArgumentParser(
        prog="kata",
        description="Effective PyTorch Kata: tools for learners and instructors.",
        epilog=f"examples:\n{overview}\n\n`kata COMMAND --help` shows each command's options and more examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", type=Path, help="the kit's folder (default: found from the current folder)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, summary, examples) in available_commands().items():
        sub = commands.add_parser(
            name,
            help=summary,
            description=summary[0].upper() + summary[1:] + ".",
            epilog=f"examples:\n{examples}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        importlib.import_module(module).configure(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        root = find_root(args.root)
        return importlib.import_module(COMMANDS[args.command][0]).run(args, root)
    except KitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: stop without a traceback, as shell tools do
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # `... | head` closed the pipe: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
