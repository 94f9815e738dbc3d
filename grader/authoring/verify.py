"""``python -m grader verify``: prove each lesson's tests can tell right from wrong.

For every lesson: the tests pass against solutions/, no test passes against the untouched
exercises/, the stubs are what the lesson's one source makes (a TODO and a NotImplementedError
in every stub), hints exist, and every mutant (a known-wrong version kept in tests/NN/mutants/)
makes at least one test fail. A mutant that is a pitfall the lesson names declares the words
its failure must show (``EXPECT = r"unscale_"``), and one failure's message must match them.
Every test runs against every mutant, as in a learner's run, and what the stub's and the
mutants' runs print is the lesson's committed transcript (grader/authoring/transcripts.py):
verify fails when it reads otherwise, and ``--write-transcripts`` writes it again.

Each pytest run is forked from this process once it has imported torch, pytest and hypothesis
(grader/sandbox.py, as ``kata grade`` runs a class): a fresh process would pay `import torch`
and torch's lazy imports (torch._dynamo for the first optimizer) again in each of ~260 runs.
Where the system cannot fork, each run is a fresh subprocess. Either way outcomes are read from
the plugin's own results, never from terminal text.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from grader.lessons import KitError, Lesson, chosen_lessons, mutant_constant, mutant_target
from grader.authoring import transcripts
from grader.authoring.twins import check_trees
from grader.results import Outcome, RunResult, TestResult
from grader.runs import pytest_args, run_pytest

MIN_PUBLIC_TESTS = 2


@dataclass
class Run:
    """One pytest run: a lesson's tests against solutions, exercises or a mutant."""

    lesson: Lesson
    kind: str = "solutions"  # "solutions", "exercises" or "mutant"
    mutant: Path | None = None
    extra: tuple[str, ...] = ()  # more pytest options
    expect: str | None = None  # a mutant's EXPECT: what one of its failures must say (a regex)
    tag: object = None  # the caller's, handed back with the run
    result: RunResult = field(default_factory=RunResult)

    def args(self) -> list[str]:
        args = [f"tests/{self.lesson.name}", *self.extra]
        if self.kind == "mutant":  # every test, as in the learner's own run: its transcript is theirs
            return [*args, f"--mutant={self.mutant}"]
        return [*args, f"--impl={self.kind}"]

    def execute(self) -> Run:
        """Run in a fresh subprocess (where the system cannot fork)."""
        self.result = run_pytest(self.lesson.root, self.args())
        return self

    def job(self, home: Path):
        """This run as a job for grader.grading.sandbox, forked from the preloaded verify process."""
        from grader.grading.sandbox import Job

        return Job(
            name=f"{self.lesson.name} {self.label}",
            workdir=self.lesson.root,
            args=pytest_args(*self.args()),
            home=home,
            tag=self,
        )

    @property
    def failed_to_run(self) -> str | None:
        """Why this run says nothing about the tests, in words, or None: it did not end as pytest
        ends, or (forked) the guard saw tampering."""
        notes = [self.result.ended] if self.result.ended else []
        notes += [f"tampering seen: {what}" for what in self.result.tampering]
        if not notes and self.result.exitstatus is None:
            notes.append("wrote no report")
        return "; ".join(notes) or None

    @property
    def tests(self) -> list[TestResult]:
        return self.result.tests

    def count(self, *outcomes: Outcome) -> int:
        return self.result.count(*outcomes)

    @property
    def tested(self) -> bool:
        """Whether the run got as far as running tests (no collection error, some tests)."""
        return self.failed_to_run is None and not self.result.collect_errors and bool(self.tests)

    @property
    def label(self) -> str:
        return self.mutant.stem if self.mutant else self.kind


@dataclass
class LessonResult:
    lesson: Lesson
    problems: list[str] = field(default_factory=list)
    solutions: Run | None = None
    exercises: Run | None = None
    mutants: list[Run] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text)


# --- dynamic checks: the pytest runs ---------------------------------------------------------


def judge_runs(result: LessonResult) -> None:
    name = result.lesson.name
    ref, stub = result.solutions, result.exercises
    seen: dict[tuple[str, str], list[str]] = {}  # one report per distinct error, with every run it broke
    for run in (ref, stub, *result.mutants):
        for error in run.result.collect_errors:
            seen.setdefault((error.nodeid or "tests", error.message), []).append(run.label)
    for (where, message), labels in seen.items():
        runs = ", ".join(labels) if len(labels) <= 3 else f"{', '.join(labels[:2])} and {len(labels) - 2} more runs"
        result.problem(f"{name} ({runs}): collection error in {where}:\n{_indent(message)}")
    for run in (ref, stub, *result.mutants):
        if run.failed_to_run:
            result.problem(
                f"{name} ({run.label}): the pytest run {run.failed_to_run}. Its output:\n"
                f"{_indent(run.result.output[-3000:])}"
            )
    if ref.failed_to_run is None:
        if not ref.tests:
            result.problem(f"{name}: no tests were collected from tests/{name}/ (pytest exit 5 is not a pass).")
        for test in ref.tests:
            if test.outcome not in (Outcome.PASSED, Outcome.SKIPPED):
                result.problem(f"{name}: {test.nodeid} is {test.outcome} against solutions/:\n{_indent(test.message)}")
        public = sum(t.public for t in ref.tests)
        if public < MIN_PUBLIC_TESTS:
            result.problem(
                f"{name}: {public} test(s) marked @pytest.mark.public; a student release needs at "
                f"least {MIN_PUBLIC_TESTS} for quick feedback."
            )
    if stub.failed_to_run is None:
        for test in stub.tests:
            if test.outcome is Outcome.PASSED:
                result.problem(
                    f"{name}: {test.nodeid} passes against the untouched stubs; a test that passes "
                    "before the learner wrote anything checks nothing. Make it call the code."
                )
            elif test.outcome is Outcome.BROKEN:
                result.problem(f"{name}: the stubs cannot be imported:\n{_indent(test.message)}")
                break
    if not result.mutants:
        result.problem(
            f"{name}: no mutants in tests/{name}/mutants/; add the naive versions from the seed "
            "and the bugs learners make."
        )
    for run in result.mutants:
        if not run.tested:
            continue  # reported above; a run that tested nothing says nothing about the mutant
        broken = [t for t in run.tests if t.outcome in (Outcome.BROKEN, Outcome.TODO)]
        if broken:
            result.problem(f"{name}: mutant {run.mutant.name} does not load:\n{_indent(broken[0].message)}")
        elif not killers(run):
            result.problem(
                f"{name}: mutant {run.mutant.name} SURVIVED: every test passed against it. "
                f"Add a test it fails ({_doc(run.mutant)})"
            )
        elif run.expect and not named(run):
            killed = set(killers(run))
            said = "\n".join(
                f"{t.nodeid.split('::', 1)[-1]}: {t.message.strip().splitlines()[0] if t.message.strip() else ''}"
                for t in run.tests
                if t.nodeid in killed
            )
            result.problem(
                f"{name}: mutant {run.mutant.name} is caught, but no failure names its pitfall: "
                f"none matches EXPECT = {run.expect!r} ({_doc(run.mutant)}). Its failures said:\n"
                f"{_indent(said)}"
            )


def check_transcript(result: LessonResult, write: bool) -> None:
    """The lesson's transcript against what its runs printed: written, with `write`; else a
    problem where it differs. Not while the lesson has other problems (a run that said nothing
    of the tests, a mutant that does not load): those come first, and their text is no lesson's."""
    if result.problems:
        return
    lesson = result.lesson
    current = transcripts.transcript(
        lesson, result.exercises.result.output, [(run.mutant, run.result.output) for run in result.mutants]
    )
    file = transcripts.path(lesson)
    if write:
        file.write_text(current, encoding="utf-8")
        return
    problem = transcripts.drift(file.read_text(encoding="utf-8") if file.is_file() else None, current, lesson)
    if problem:
        result.problem(f"{lesson.name}: {problem}")


def killers(run: Run) -> list[str]:
    return [t.nodeid for t in run.tests if t.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT)]


def named(run: Run) -> bool:
    """Whether one of a mutant's failures says what its EXPECT asks (searched in the message)."""
    pattern, killed = re.compile(run.expect), set(killers(run))
    return any(pattern.search(t.message or "") for t in run.tests if t.nodeid in killed)


def expectation(path: Path) -> str | None:
    """A mutant's module-level ``EXPECT = r"..."``: the words a learner who made this mistake
    must see in a failure (a regex), or None. Read, not imported."""
    expect = mutant_constant(path, "EXPECT")
    if expect is not None:
        re.compile(expect)
    return expect


def _doc(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "it has no docstring saying what is wrong"
    return doc.splitlines()[0]


def _indent(text: str) -> str:
    return "\n".join("      " + line for line in str(text).strip().splitlines()[:15])


# --- putting it together ------------------------------------------------------------------------


REQUIRED = ("torch", "pytest", "pytest_timeout", "hypothesis", "numpy")


def missing_dependencies() -> list[str]:
    """What the pytest runs need but this interpreter cannot import (they run with it)."""
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "For each lesson: the tests pass against solutions/, no test passes against the untouched "
        "exercises/, the stubs are what solutions/ makes, hints exist, every mutant in "
        "tests/NN/mutants/ is rejected by at least one test (whose message matches the mutant's "
        "EXPECT, if it has one), and what the stub's and the mutants' runs print is the committed "
        "tests/NN/transcript.md. Exits 1 on any problem."
    )
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="pytest runs at once (default: the number of cores)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show each run and each mutant's fate")
    parser.add_argument(
        "--write-transcripts",
        action="store_true",
        help="write each lesson's tests/NN/transcript.md (what a learner reads) from these runs",
    )


def run(args: argparse.Namespace, root: Path) -> int:
    lessons = chosen_lessons(root, args.lessons)
    if not lessons:
        raise KitError(f"no lessons found under {root}/tests")
    return verify(lessons, jobs=max(1, args.jobs), verbose=args.verbose, write_transcripts=args.write_transcripts)


def verify(
    lessons: list[Lesson], *, jobs: int, verbose: bool = False, write_transcripts: bool = False, out=None
) -> int:
    out = out or sys.stdout  # looked up now: a default bound at import would outlive a redirect
    missing = missing_dependencies()
    if missing:
        print(
            f"verify: {sys.executable} cannot import {', '.join(missing)}, which every lesson's tests need.\n"
            "Activate the kit's environment (. .venv/bin/activate) or install it there:\n"
            '    pip install -c constraints.txt -e ".[dev]"',
            file=out,
        )
        return 2
    results = [LessonResult(lesson) for lesson in lessons]
    runs: list[Run] = []
    for result in results:
        lesson = result.lesson
        result.solutions, result.exercises = Run(lesson=lesson, kind="solutions"), Run(lesson=lesson, kind="exercises")
        result.mutants = []
        for mutant in lesson.mutants():
            run = Run(lesson=lesson, kind="mutant", mutant=mutant)
            try:
                mutant_target(mutant, lesson)
                run.expect = expectation(mutant)
            except Exception as exc:  # noqa: BLE001 (a mutant that cannot be set up is the lesson's problem, named)
                result.problem(f"{mutant.relative_to(lesson.root)}: {exc}")
            result.mutants.append(run)
        runs += [result.solutions, result.exercises, *result.mutants]
    print(f"verify: {len(lessons)} lesson(s), {len(runs)} pytest runs on {jobs} worker(s)", file=out, flush=True)
    start = time.perf_counter()
    done = 0

    def finished(run: Run) -> None:
        nonlocal done
        done += 1
        if verbose:
            print(
                f"  [{done}/{len(runs)}] {run.lesson.name} {run.label}: {run.result.seconds:.1f} s",
                file=out,
                flush=True,
            )

    execute(runs, jobs=jobs, on_done=finished)
    for result in results:  # after the runs: these import the lesson's modules, which must not be forked
        check_trees(result.lesson, result.problem)
        judge_runs(result)
        check_transcript(result, write_transcripts)
    _print_table(results, verbose, out)
    failed = [r for r in results if r.problems]
    for result in failed:
        print(f"\n{result.lesson.name}: {len(result.problems)} problem(s)", file=out)
        for problem in result.problems:
            print(f"  - {problem}", file=out)
    print(f"\nverify took {time.perf_counter() - start:.0f} s", file=out)
    print(f"verify: {len(results) - len(failed)} passed, {len(failed)} failed", file=out)
    return 1 if failed or not results else 0


def execute(runs: list[Run], *, jobs: int, on_done) -> None:
    """Every run, `jobs` at a time; on_done(run) as each ends.

    Forked from this process after grader.grading.sandbox.preload (torch, pytest, hypothesis and
    torch._dynamo imported once, which each fresh process would pay for again); where
    the system cannot fork, fresh subprocesses.
    """
    if not hasattr(os, "fork"):
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for run in pool.map(Run.execute, runs):
                on_done(run)
        return
    from grader.grading import sandbox

    sandbox.preload()

    def taken(job, run: RunResult) -> None:
        job.tag.result = run
        on_done(job.tag)

    with tempfile.TemporaryDirectory(prefix="kata-verify-") as tmp:
        pending = (run.job(Path(tmp) / f"{number:03d}") for number, run in enumerate(runs))
        sandbox.run_jobs(pending, parallel=jobs, limits=sandbox.Limits.ungraded(), on_done=taken)


def _print_table(results: list[LessonResult], verbose: bool, out) -> None:
    rows = [("lesson", "solutions", "stubs", "mutants caught", "result")]
    for r in results:
        ref, stub = r.solutions, r.exercises
        caught = sum(bool(killers(m)) for m in r.mutants)
        rows.append(
            (
                r.lesson.name,
                f"{ref.count(Outcome.PASSED)}/{len(ref.tests)} pass"
                + (f", {ref.count(Outcome.SKIPPED)} skip" if ref.count(Outcome.SKIPPED) else ""),
                f"{stub.count(Outcome.TODO, Outcome.FAILED)}/{len(stub.tests)} todo/fail",
                f"{caught}/{len(r.mutants)}",
                "ok" if not r.problems else "FAIL",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("", file=out)
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)
    if verbose:
        for r in results:
            for m in r.mutants:
                k = killers(m)
                fate = (
                    f"caught by {k[0].split('::', 1)[-1]}"
                    if k
                    else "SURVIVED"
                    if m.tested
                    else "not tested (see the problems below)"
                )
                print(f"  {r.lesson.name} mutant {m.mutant.stem}: {fate}", file=out)
