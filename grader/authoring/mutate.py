"""``python -m grader mutate``: mutation testing of each lesson's tests with cosmic-ray.

Every single-point mutant of solutions/NN/*.py (grader.authoring.mutants: cosmic-ray's
operators that take no arguments, and the kit's own `kata/UnsetDefault`) runs against its
lesson's tests as a hand-written mutant does (``pytest tests/NN --mutant=FILE -x``), forked from
this process by `grader.authoring.verify.execute`: a fresh ``cosmic-ray exec`` worker would pay
`import torch` again for each of ~1,500 runs.

A mutant no test can tell from the reference (``x - c`` where c is always 0, say) is recorded
in tests/NN/equivalent_mutants.toml with the reason; the score counts it as accounted for:

    [[mutant]]
    line = "shift = shift.masked_fill(shift.isinf(), 0)"     # the reference's line
    mutant = "shift = shift.masked_fill(shift.isinf(), 1)"   # the same line, mutated
    why = "the fill only lands where exp(x - shift) is 0 or nan either way"
    function = "logsumexp"   # optional: only in this def (where the same line is elsewhere too)

Results and the command that reproduces them: docs/MUTATION.md, whose table this command
writes (``--write-docs``) with each row's fingerprint (grader.authoring.mutation_table): a hash
of the files that decide the row (the lesson's answer and tests, the grader.testing modules its
tests import, the modules that make and judge the mutants). A test (grader/tests/test_mutate.py)
recomputes them, so a row whose files changed since it was measured fails CI, naming the
command that measures it again.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from grader.authoring.mutants import LessonScore, Mutant, code_of, mutants_of
from grader.authoring.mutation_table import DOCS, HEADER, cells, write_docs
from grader.lessons import KitError, Lesson, chosen_lessons
from grader.results import Outcome

EQUIVALENTS = "equivalent_mutants.toml"
PER_TEST_TIMEOUT = 30  # s; a mutant that loops forever is killed by pytest-timeout, as a learner's is


# --- equivalent mutants ----------------------------------------------------------------------------


def equivalents(lesson: Lesson) -> list[dict]:
    """The lesson's recorded equivalent mutants; each has `line`, `mutant` and `why`."""
    path = lesson.tests_dir / EQUIVALENTS
    if not path.is_file():
        return []
    records = tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", [])
    for record in records:
        missing = {"line", "mutant", "why"} - set(record)
        if missing or not str(record.get("why", "")).strip():
            raise KitError(
                f"{path}: every [[mutant]] needs line, mutant and a non-empty why; {record} lacks "
                f"{', '.join(sorted(missing)) or 'a reason'}"
            )
    return records


def mark_equivalents(score: LessonScore) -> None:
    records = equivalents(score.lesson)
    used = set()
    for mutant in score.mutants:
        for number, record in enumerate(records):
            if (code_of(record["line"]), code_of(record["mutant"])) == (mutant.line, mutant.mutated) and record.get(
                "function", mutant.function
            ) == mutant.function:
                mutant.fate, mutant.why = "equivalent", record["why"]
                used.add(number)
                break
    score.stale = [record for number, record in enumerate(records) if number not in used]


# --- running them -----------------------------------------------------------------------------------


def run_mutants(mutants: list[Mutant], *, jobs: int, out) -> None:
    """Each pending mutant against its lesson's tests; sets its fate."""
    from grader.authoring.verify import Run, execute, killers

    with tempfile.TemporaryDirectory(prefix="kata-mutate-") as tmp:
        runs = []
        for number, mutant in enumerate(mutants):
            file = Path(tmp) / f"{mutant.lesson.name}_{number:04d}.py"
            file.write_text(f'{mutant.code}\nTARGET = "{mutant.stem}"\n', encoding="utf-8")
            run = Run(lesson=mutant.lesson, kind="mutant", mutant=file, extra=(f"--timeout={PER_TEST_TIMEOUT}",))
            run.tag = mutant
            runs.append(run)
        done = 0
        start = time.perf_counter()

        def finished(run) -> None:
            nonlocal done
            done += 1
            mutant: Mutant = run.tag
            failing = killers(run)
            if run.failed_to_run:
                mutant.fate, mutant.killer = "untested", run.failed_to_run
            elif failing or any(t.outcome in (Outcome.BROKEN, Outcome.TODO) for t in run.tests):
                mutant.fate = "killed"  # a mutant the module cannot even load with is rejected too
                mutant.killer = failing[0].split("::", 1)[-1] if failing else "does not load"
            elif run.result.collect_errors:
                mutant.fate, mutant.killer = "untested", run.result.collect_errors[0].message.splitlines()[0]
            else:
                mutant.fate = "survived"
            if done % 50 == 0 or done == len(runs):
                print(f"  {done}/{len(runs)} mutants run, {time.perf_counter() - start:.0f} s", file=out, flush=True)

        execute(runs, jobs=jobs, on_done=finished)


# --- the command -----------------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Mutation testing with cosmic-ray: every single-point mutant of solutions/NN/*.py runs against "
        "the lesson's tests. A mutant is killed when a test fails, equivalent when "
        f"tests/NN/{EQUIVALENTS} records why no test can tell it apart, and survives otherwise. "
        "Exits 1 when a lesson scores under --fail-under."
    )
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="pytest runs at once (default: the number of cores)"
    )
    parser.add_argument(
        "--fail-under",
        type=float,
        default=95.0,
        metavar="PERCENT",
        help="the least share of mutants killed or recorded equivalent, per lesson (default 95)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants without running them")
    parser.add_argument("-v", "--verbose", action="store_true", help="each mutant's fate, and the equivalent ones")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help=f"put the measured lessons' rows, dated and fingerprinted, in {DOCS.as_posix()}'s table",
    )


def run(args: argparse.Namespace, root: Path) -> int:
    try:
        import cosmic_ray  # noqa: F401 (only whether it is installed)
    except ImportError:
        print(
            "mutate: cosmic-ray is not installed here; install the kit's authoring tools:\n"
            '    pip install -c constraints.txt -e ".[dev]"',
            file=sys.stderr,
        )
        return 2
    lessons = chosen_lessons(root, args.lessons)
    return mutate(
        lessons,
        jobs=max(1, args.jobs),
        fail_under=args.fail_under,
        list_only=args.list,
        verbose=args.verbose,
        docs_root=root if args.write_docs else None,
    )


def mutate(
    lessons: list[Lesson],
    *,
    jobs: int,
    fail_under: float = 95.0,
    list_only: bool = False,
    verbose: bool = False,
    docs_root: Path | None = None,
    out=None,
) -> int:
    out = out or sys.stdout
    scores = [LessonScore(lesson, mutants_of(lesson)) for lesson in lessons]
    for score in scores:
        mark_equivalents(score)
    pending = [m for s in scores for m in s.mutants if m.fate == "pending"]
    if list_only:
        for score in scores:
            for m in score.mutants:
                print(
                    f"{m.label}: {m.line}  ->  {m.mutated}" + ("  [equivalent]" if m.fate == "equivalent" else ""),
                    file=out,
                )
        return 0
    print(
        f"mutate: {sum(len(s.mutants) for s in scores)} mutants of {len(scores)} lesson(s), "
        f"{len(pending)} to run on {jobs} worker(s)",
        file=out,
        flush=True,
    )
    start = time.perf_counter()
    run_mutants(pending, jobs=jobs, out=out)
    failed = _report(scores, fail_under, verbose, out)
    print(f"\nmutate took {time.perf_counter() - start:.0f} s", file=out)
    if docs_root is not None:
        write_docs(docs_root, scores)
        print(f"mutate: {len(scores)} row(s) written to {DOCS.as_posix()}", file=out)
    return 1 if failed else 0


def _report(scores: list[LessonScore], fail_under: float, verbose: bool, out) -> bool:
    rows = [HEADER[:7], *(cells(s) for s in scores)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("", file=out)
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)
    failed = False
    for s in scores:
        shown = [m for m in s.mutants if m.fate in ("survived", "untested") or (verbose and m.fate != "pending")]
        if shown or s.stale:
            print(f"\n{s.lesson.name}:", file=out)
        for m in shown:
            note = {
                "killed": f"killed by {m.killer}",
                "equivalent": f"equivalent: {m.why}",
                "untested": f"UNTESTED: {m.killer}",
                "survived": "SURVIVED",
            }[m.fate]
            print(f"  {m.label}: {note}\n      - {m.line}\n      + {m.mutated}", file=out)
        for record in s.stale:
            print(
                f"  stale record in tests/{s.lesson.name}/{EQUIVALENTS}: no mutant turns {record['line']!r} "
                f"into {record['mutant']!r}; remove it",
                file=out,
            )
        if 100 * s.score < fail_under or s.stale:
            failed = True
    return failed
