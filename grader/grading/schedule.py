"""Grading a class: what to grade again, the untouched stubs first, then every student's lessons.

A student is graded again only when the fingerprint of everything that decides their grade
(their files, what was left out of them, the kit's tests and grader, the options) differs from
the one in their results file, or with --force. Each student's file is written the moment
their last lesson is done: an interrupted run loses only students in progress.

Every lesson's untouched stub runs first (`Grading.baseline`): it tells what tests each lesson
has (for a run that never finished collecting), which of them this machine skips, and is the
result of every student who left the lesson alone. Then the students' runs, in the order of the
roster; identical submissions of a lesson run once, and every student who handed them in
waits on that run (`Schedule`).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Iterator

from grader.files import remove_tree
from grader.grading import cgroup, classtables, isolation, records, sandbox
from grader.grading.intake import Student, read_work
from grader.grading.job import (
    ALL_IN_THE_STUDENTS_PROCESS,
    CODE_MAKING_PROCESSES,
    CODE_PROCESS,
    STUDENTS_PROCESS,
    Found,
    Job,
    Limits,
    Session,
    memory_note,
)
from grader.grading.kitfiles import SCRATCH_PREFIX, KitFiles, run_key
from grader.grading.verdict import LessonVerdict, judge
from grader.lessons import KitError, Lesson
from grader.progress import Progress
from grader.results import Outcome, RunResult, TestInfo
from grader.runs import pytest_args

SCHEMA = 1  # bump when a student's JSON changes meaning: every student is graded again
ISOLATION_NONE = "none (--trusted): the students' code ran as your user, with your files and network"
CHECKS_INSIDE = "in the student's process (--in-process)"
CHECKS_OUTSIDE = "in a process of their own, the student's code answering calls"


class Grading:
    """One class's grading: its kit files, its options, and the verdicts so far, by run key."""

    def __init__(
        self,
        root: Path,
        lessons: list[Lesson],
        out: Path,
        limits: Limits,
        *,
        speed: bool,
        jobs: int,
        hidden: tuple[Path, ...] = (),
        trusted: bool = False,
        remote: bool = True,
    ) -> None:
        if not trusted:  # the runs' code processes bounded together, where the machine allows it
            limits = replace(limits, cgroups=cgroup.find())
        self.root, self.lessons, self.out, self.limits, self.speed, self.jobs = root, lessons, out, limits, speed, jobs
        # What no run may see, besides the kit's answers: the class, the results.
        self.hidden = tuple(p.resolve() for p in (*hidden, out))
        self.trusted = trusted
        self.remote = remote  # the tests' checks outside the students' process (grader.remote)
        self.kit = KitFiles.read(root, lessons)
        self.options = {
            "lessons": [lesson.name for lesson in lessons],
            "speed": speed,
            "limits": {
                "wall": limits.wall,
                "cpu": limits.cpu,
                "memory": limits.memory,
                "test_timeout": limits.test_timeout,
            },
            "isolation": ISOLATION_NONE if trusted else isolation.DESCRIPTION,
            "memory": memory_note(limits),
            "checks": CHECKS_OUTSIDE if remote else CHECKS_INSIDE,
        }
        self.verdicts: dict[str, LessonVerdict] = {}  # run key -> the verdict on that run
        self.expected: dict[str, list[TestInfo]] = {}  # lesson -> the tests its stub's run collected
        self.skipped: dict[str, set[str]] = {}  # lesson -> the tests skipped on this machine (CUDA ones)
        self.scratch: Path | None = None  # where the grading copies are made
        self.submissions: dict[tuple[str, str], tuple[dict[str, bytes], str]] = {}  # see submission()
        # The checks apart (not --in-process): lesson -> the tests that cannot run with the code
        # in another process, as the kit's own answer shows (`find_fallbacks`); only these are
        # run again in a student's process, and a student's code cannot add to them.
        self.fallbacks: dict[str, frozenset[str]] = {}
        # Of those, the tests the kit's answer passes with the checks still apart, against a code
        # process that may make processes (a DataLoader's workers) but has nothing timed or recorded.
        self.processes: dict[str, frozenset[str]] = {}
        # The protocol's cost of a timed call, measured where the kit's answers ran (`find_fallbacks`),
        # the least of each part: every student's run subtracts this, and need not measure it.
        self.overhead: tuple[float, float] | None = None

    @property
    def stamp(self) -> dict:
        """What every student's file records of how they were graded."""
        return {"kit": self.kit.digest, "options": self.options}

    def submission(self, student: Student, lesson: str) -> tuple[dict[str, bytes], str]:
        """The student's files of `lesson` that differ from its stub, and the key of their run;
        worked out once, for the fingerprint and the schedule alike."""
        if (student.name, lesson) not in self.submissions:
            overlay = self.kit.overlay(lesson, student.files.get(lesson, {}))
            self.submissions[student.name, lesson] = overlay, run_key(lesson, overlay)
        return self.submissions[student.name, lesson]

    def fingerprint(self, student: Student) -> str:
        digest = hashlib.sha256(json.dumps([SCHEMA, self.kit.digest, self.options]).encode())
        for lesson in self.lessons:
            digest.update(self.submission(student, lesson.name)[1].encode())
        digest.update(json.dumps(student.ignored).encode())
        return digest.hexdigest()

    def run(self, roster: list[Student], *, force: bool) -> int:
        """Grade the students of `roster` whose work changed (all, with `force`). 1 when one could
        not be graded at all, else 0."""
        todo, unchanged = [], 0
        for student in roster:
            read_work(student, self.lessons)
            previous = records.load(self.out / "students" / f"{student.name}.json")
            student.fingerprint = None if student.problem else self.fingerprint(student)
            if not force and student.fingerprint and previous and previous.get("fingerprint") == student.fingerprint:
                unchanged += 1
            else:
                todo.append(student)
        print(
            f"grading {len(todo)} student{'s' if len(todo) != 1 else ''} x {len(self.lessons)} lessons, "
            f"{self.jobs} at a time"
            + (f" ({unchanged} unchanged since the last run, skipped)" if unchanged else "")
            + f"; results in {self.out}",
            file=sys.stderr,
        )
        sandbox.preload()  # first: a Ctrl-C meanwhile ends the process there, with nothing to clean up
        self.kit.parse_tests()
        self.scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX)).resolve()
        try:
            self.check_isolation()
        except BaseException:
            remove_tree(self.scratch)
            raise
        progress = Progress(len(todo), "students", verb=("grade", "graded"), work=len(todo) * len(self.lessons))
        schedule = Schedule(self, todo, progress)
        try:
            self.baseline()
            if self.remote:
                self.find_fallbacks()
            sandbox.run_jobs(schedule.jobs(), parallel=self.jobs, limits=self.limits, on_done=schedule.on_done)
        finally:
            progress.close()
            remove_tree(self.scratch)
            if len(self.expected) == len(self.lessons):  # (interrupted too: the students done so far)
                classtables.write_class(self.out)
        return 1 if schedule.failed else 0

    def job(
        self, name: str, lesson: str, overlay: dict[str, bytes], key: str, sessions: tuple[Session, ...] | None = None
    ) -> Job:
        """A run of `lesson` with `overlay` laid over its stubs, in a grading copy of its own, its
        tests in `sessions`; None: the lesson's (`sessions`), with the protocol's cost of a timed
        call as the kit's answers' runs measured it."""
        home = self.scratch / f"{len(self.verdicts):05d}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        while home.exists():
            home = home.with_name(home.name + "x")
        self.kit.write_copy(home / "kit", lesson, overlay)
        # CUDA tests stay: the plugin skips them where there is no GPU, and skipped tests count
        # on neither side (the parent never touches CUDA, so a child may).
        args = pytest_args(f"exercises/{lesson}", "--color=no", *([] if self.speed else ["-m", "not speed"]))
        return Job(
            name=name,
            workdir=home / "kit",
            args=args,
            home=home,
            tag=(lesson, key),
            view=self.view(home),
            remote=self.root.resolve() if self.remote else None,
            sessions=self.sessions(lesson) if sessions is None else sessions,
            overhead=self.overhead if sessions is None else None,
            expected=tuple(self.expected.get(lesson, ())),
            imports=self.imports(lesson, overlay),
        )

    def sessions(self, lesson: str) -> tuple[Session, ...]:
        """A student's run of `lesson`: with the checks apart, the code in a code process, but for
        the tests `find_fallbacks` found cannot run so, each in a session of its own kind."""
        if not self.remote:
            return ALL_IN_THE_STUDENTS_PROCESS
        later = [
            Session(kind, tests)
            for kind, tests in (
                (CODE_MAKING_PROCESSES, self.processes.get(lesson)),
                (STUDENTS_PROCESS, self.fallbacks.get(lesson)),
            )
            if tests
        ]
        return (Session(CODE_PROCESS), *later)

    def imports(self, lesson: str, overlay: dict[str, bytes]) -> tuple[str, ...]:
        """The files of `overlay` the lesson's tests import (tests/NN/test_X.py imports X.py),
        as paths in a grading copy."""
        tested = {PurePosixPath(name).name.removeprefix("test_") for name in self.kit.test_files(lesson)}
        return tuple(f"exercises/{lesson}/{name}" for name in sorted(overlay) if name in tested)

    def view(self, home: Path) -> isolation.View | None:
        """What a run in `home` sees behind the namespaces; None with --trusted."""
        if self.trusted:
            return None
        return isolation.View.for_grading(
            kit=self.root.resolve(),
            copy=home / "kit",
            home=home,
            hidden=(*self.hidden, self.scratch),
            disk=self.limits.disk,
            processes=self.limits.processes,
        )

    def check_isolation(self) -> None:
        """Say which boundary the runs get; refuse to grade when the namespaces cannot be made,
        unless told --trusted."""
        if self.trusted:
            print(f"isolation: {ISOLATION_NONE}", file=sys.stderr)
            return
        home = self.scratch / "probe"
        (home / "kit").mkdir(parents=True)
        why = isolation.probe(self.view(home))
        remove_tree(home)
        if why:
            raise KitError(
                f"kata grade runs every student's code behind Linux namespaces (user, mount, PID, "
                f"network), and they cannot be made here: {why}. Unprivileged user namespaces may be "
                "switched off (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or a "
                "container's seccomp profile). Work you trust can be graded without that boundary: "
                "kata grade --trusted (docs/INSTRUCTORS.md)"
            )
        print(f"isolation: {isolation.DESCRIPTION}", file=sys.stderr)

    def baseline(self) -> None:
        """Run every lesson's untouched stub. A lesson whose stub's run collects nothing, passes a
        test or is flagged as tampering stops the grading: the kit is wrong, not a student."""
        runs: list[tuple[Job, RunResult]] = []
        jobs = [self.job(f"(stub)/{lesson.name}", lesson.name, {}, run_key(lesson.name, {})) for lesson in self.lessons]
        sandbox.run_jobs(jobs, parallel=self.jobs, limits=self.limits, on_done=lambda job, run: runs.append((job, run)))
        for job, run in runs:
            lesson, key = job.tag
            if not run.collected or run.collect_errors:
                errors = "; ".join(e.message.strip().splitlines()[-1] for e in run.collect_errors)
                raise KitError(
                    f"lesson {lesson}: its tests could not be collected in a grading copy "
                    f"({errors or run.ended or 'no tests'}):\n{run.output[-2000:]}"
                )
            passed = [t.nodeid for t in run.tests if t.outcome is Outcome.PASSED]
            if passed:  # a student who left the lesson alone would score these
                raise KitError(
                    f"lesson {lesson}: the kit's exercises/{lesson} passes {len(passed)} test(s) "
                    f"({passed[0]}, ...): grading needs the untouched stubs there "
                    f"(`kata reset {lesson}` puts them back, keeping a backup)"
                )
            if run.tampering:
                raise KitError(
                    f"lesson {lesson}: the tamper checks flag the untouched stub: " + "; ".join(run.tampering)
                )
            self.expected[lesson] = run.collected
            self.skipped[lesson] = {t.nodeid for t in run.tests if t.outcome is Outcome.SKIPPED}
            self.verdicts[key] = self.verdict(job, run)
            remove_tree(job.home)

    def find_fallbacks(self) -> None:
        """With the checks apart (not --in-process): run every lesson's own answer, to learn which of its tests cannot run with
        the code in another process (they drive the code's objects, or watch its calls by
        means that stay in one process): those, and only those, students get checked in their
        own process."""
        runs: list[tuple[Job, RunResult]] = []
        sessions = (Session(CODE_PROCESS), Session(STUDENTS_PROCESS, Found.CANNOT_CROSS))
        answer = self.kit.answer_overlay
        jobs = [
            self.job(f"(answer)/{lesson.name}", lesson.name, answer(lesson.name), "", sessions)
            for lesson in self.lessons
        ]
        sandbox.run_jobs(jobs, parallel=self.jobs, limits=self.limits, on_done=lambda job, run: runs.append((job, run)))
        for job, run in runs:
            # Where the kit's own answer or data broke the protocol, its tests would all fall back, unseen.
            refused = [t.nodeid for t in run.tests if t.failure is not None and t.failure.exception == "Refused"]
            ended = f"the code's process ended (status {run.code_returncode}) while the kit's answer's tests called it"
            if run.code_returncode is not None or refused:
                why = f"the code's process could not read what {refused[0]} sent it" if refused else ended
                raise KitError(f"lesson {job.tag[0]}: {why}:\n{run.output[-2000:]}")
            if run.review:  # the source check would flag every student who writes it as the kit does
                flagged = "; ".join(run.review)
                raise KitError(
                    f"lesson {job.tag[0]}: the kit's answer is flagged by the check of its source: {flagged}"
                )
            # The answer passes every test in its own process (`kata verify`): any it does not
            # pass here cannot be checked from another process (it reads memory addresses, or
            # patches or reads torch's state in the tests' process), nor any it passed only there.
            self.fallbacks[job.tag[0]] = frozenset(
                t.nodeid for t in run.tests if t.inside or t.outcome not in (Outcome.PASSED, Outcome.SKIPPED)
            )
            remove_tree(job.home)
        if measured := [run.overhead for _, run in runs if run.overhead is not None]:
            self.overhead = (min(one for one, _ in measured), min(each for _, each in measured))
        self.find_processes()

    def find_processes(self) -> None:
        """Of each lesson's fallbacks, those the kit's answer passes with the checks apart
        against a code process that may make processes, where nothing is timed or recorded:
        they run so for every student, and only the rest in the student's process."""
        runs: list[tuple[Job, RunResult]] = []
        sessions = {
            lesson: (Session(CODE_PROCESS), Session(CODE_MAKING_PROCESSES, tests))
            for lesson, tests in self.fallbacks.items()
            if tests
        }
        answer = self.kit.answer_overlay
        jobs = [
            self.job(f"(answer, processes)/{lesson}", lesson, answer(lesson), "", sessions[lesson])
            for lesson in sessions
        ]
        sandbox.run_jobs(jobs, parallel=self.jobs, limits=self.limits, on_done=lambda job, run: runs.append((job, run)))
        for job, run in runs:
            lesson = job.tag[0]
            passed = frozenset(
                t.nodeid
                for t in run.tests
                if t.nodeid in self.fallbacks[lesson] and t.outcome is Outcome.PASSED and not t.inside
            )
            self.processes[lesson] = passed
            self.fallbacks[lesson] -= passed
            remove_tree(job.home)

    def verdict(self, job: Job, run: RunResult) -> LessonVerdict:
        lesson = job.tag[0]
        return judge(
            lesson,
            run,
            self.limits,
            expected=self.expected.get(lesson, []),
            skipped=self.skipped.get(lesson, set()),
            rewritten=self.kit.changed(job.workdir, lesson),
        )

    def max_points(self) -> float:
        return sum(t.max_points for tests in self.expected.values() for t in tests)


class Schedule:
    """The students' runs: which to start, who waits on each, and whose lessons are all done."""

    def __init__(self, grading: Grading, students: list[Student], progress: Progress) -> None:
        self.grading, self.students, self.progress = grading, students, progress
        self.waiting: dict[str, list[tuple[Student, str]]] = {}  # run key -> (student, lesson) waiting on it
        self.done: dict[str, dict[str, LessonVerdict]] = {s.name: {} for s in students}  # student -> lesson -> verdict
        self.failed: list[str] = []  # students who could not be graded at all

    def jobs(self) -> Iterator[Job]:
        """The runs to start, lazily: a lesson already graded (the stub, or the same files handed in
        by a student before) is assigned at once."""
        grading = self.grading
        for student in self.students:
            if student.problem:
                records.write_failed(grading.out, student, grading.max_points(), grading.stamp)
                self.failed.append(student.name)
                self.progress.skip(len(grading.lessons))
                self.progress.failed(student.name, student.problem)
                continue
            for lesson in grading.lessons:
                overlay, key = grading.submission(student, lesson.name)
                if key in grading.verdicts:
                    self._assign(student, lesson.name, grading.verdicts[key])
                elif key in self.waiting:
                    self.waiting[key].append((student, lesson.name))
                else:
                    self.waiting[key] = [(student, lesson.name)]
                    yield grading.job(f"{student.name}/{lesson.name}", lesson.name, overlay, key)

    def on_done(self, job: Job, run: RunResult) -> None:
        verdict = self.grading.verdicts[job.tag[1]] = self.grading.verdict(job, run)
        remove_tree(job.home)
        for student, lesson in self.waiting.pop(job.tag[1]):
            self._assign(student, lesson, verdict)

    def _assign(self, student: Student, lesson: str, verdict: LessonVerdict) -> None:
        self.done[student.name][lesson] = verdict
        self.progress.advance()
        if len(self.done[student.name]) == len(self.grading.lessons):
            grading = self.grading
            record = records.write_student(
                grading.out, student, grading.lessons, self.done.pop(student.name), grading.stamp
            )
            flags = f"; {len(record['flags'])} flagged" if record["flags"] else ""
            self.progress.step(student.name, f"{record['points']:g}/{record['max_points']:g} points{flags}")
