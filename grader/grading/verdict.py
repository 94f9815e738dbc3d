"""A lesson's result from what its sandboxed run reported, for every student who handed in the
same files.

Only the tests the run reported count as they were reported. A collected test that never
reported did not pass: it was skipped (when the untouched stub's run skipped it on this
machine, a CUDA test without a GPU), or is an error that says why the run ended. A run that
tampered (grader.grading.guard, the results channel, or a grading copy whose own files were
rewritten) scores 0 on every test and is flagged for a person to look at; a run that ended
early keeps what passed before and is flagged too. Memory and file-size limits that tests ran
into are told by the kind of their failure, as the plugin recorded it.

A test whose check rests on what the code's process recorded (its ops, a scenario's result: that
process runs the code, which can switch its recorders off) counts only where the source read
found nothing (the run's review notes). Otherwise it is held: it passed, and its points wait for
a person, who reads the code the lesson is flagged for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from grader.grading.job import Limits
from grader.results import Failure, Kind, LessonSummary, Outcome, RunResult, State, TestInfo, TestResult, summarize


@dataclass
class LessonVerdict:
    """A lesson's result: what every student who handed in the same files gets."""

    run: RunResult  # the tests as graded: every collected test, reported or not
    summary: LessonSummary

    def timings(self) -> dict[str, float]:
        """What the run cost, for the student's record."""
        return {
            "seconds": round(self.run.seconds, 2),
            "cpu_seconds": round(self.run.cpu_seconds, 2),
            "test_seconds": round(sum(t.seconds for t in self.run.tests), 2),
            "max_rss_mib": round(self.run.max_rss_mib, 1),
        }


def judge(
    lesson: str, run: RunResult, limits: Limits, *, expected: list[TestInfo], skipped: set[str], rewritten: list[str]
) -> LessonVerdict:
    """The verdict on `run`. expected: the lesson's tests with their points, as its untouched
    stub's run collected them (empty for that run itself); skipped: the tests its stub's run
    skipped; rewritten: the copy's own files the run changed."""
    # The lesson's tests and their points are the untouched stub's run's, not what this run says
    # it collected: a run that announces tests of its own (or other points) does not raise its
    # maximum. Only the stubs' own runs, which make `expected`, are graded on their collection.
    collected = expected or run.collected or []
    tampering = run.tampering + (
        ["changed the grading copy's own files: " + ", ".join(rewritten[:5])] if rewritten else []
    )
    known = {t.nodeid for t in collected}
    foreign = [t.nodeid for t in (run.collected or []) if t.nodeid not in known]
    if expected and foreign:
        tampering.append(f"reported {len(foreign)} test(s) the lesson does not have: " + ", ".join(foreign[:3]))
    reported = run.by_id()
    tests = []
    for test in collected:
        result = reported.get(test.nodeid)
        if result is not None:
            result = replace(result, max_points=test.max_points, public=test.public)
        if test.nodeid in skipped:  # never counts, run or not, whatever the run says of it
            result = _unreported(test, Outcome.SKIPPED, "skipped on this machine")
        elif result is None:
            result = _unreported(
                test, Outcome.ERROR, f"no result: the run {run.ended}" if run.ended else "no result was reported"
            )
        if tampering and test.nodeid not in skipped:  # a test this machine skips counts for no one
            message = "not graded: tampering detected (" + "; ".join(tampering[:3]) + ")"
            result = replace(
                result, outcome=Outcome.ERROR, message=message, failure=Failure(Kind.TAMPERED, "", message)
            )
        elif run.review and result.recorded and result.outcome is Outcome.PASSED:
            result = replace(result, held=True)  # it passed on the word of code whose source is flagged
        tests.append(result)
    graded = replace(run, collected=collected, tests=tests, tampering=tampering)
    summary = summarize(lesson, graded)
    out_of_memory = _ran_into(tests, Kind.MEMORY)
    if tampering:
        summary.state, summary.problem = State.TAMPERED, "tampering detected: " + "; ".join(tampering[:3])
    elif run.ended:  # (summarize made it STOPPED, and said why)
        if out_of_memory:
            summary.problem += f"; it ran out of memory (limit {limits.memory >> 20} MiB)"
    elif out_of_memory:
        summary.problem = f"ran out of memory (limit {limits.memory >> 20} MiB)"
    elif _ran_into(tests, Kind.FILE_SIZE):
        summary.problem = (
            f"wrote more than {limits.file_size >> 20} MiB to one file (printed too much?); the write failed"
        )
    return LessonVerdict(graded, summary)


def _unreported(test: TestInfo, outcome: Outcome, message: str) -> TestResult:
    return TestResult(test.nodeid, outcome, test.max_points, test.public, message)


def _ran_into(tests: list[TestResult], kind: Kind) -> bool:
    return any(t.failure is not None and t.failure.kind is kind for t in tests)
