"""What a pytest run of a lesson's tests produced: one model, from the plugin to every report.

The plugin records each test as a `TestResult` when pytest makes its report, with the failure
as data (`Failure`: its kind, the exception's type, its own lines, file:line), never to be
parsed back out of text. A run's results travel as JSON, once: the plugin writes them (a
file for ``--kata-report``, or a pipe under ``kata grade``), and `RunResult.from_json` reads them
back, whether the run was a subprocess (grader.runs) or a forked, sandboxed child
(grader.grading.sandbox). `summarize` turns a run into a lesson's standing (`LessonSummary`),
which ``kata status``, ``kata report``, ``kata grade`` and the notebook grade cells show.

Pure data: no torch, no pytest.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field


class Outcome(str, enum.Enum):
    """How one test ended. The first phase (setup, call, teardown) that did not pass decides."""

    PASSED = "passed"
    FAILED = "failed"  # its call failed
    ERROR = "error"  # its setup or teardown failed, or (class grading) it never reported
    SKIPPED = "skipped"  # counts on neither side (a CUDA test on a machine without a GPU)
    TODO = "todo"  # it reached an untouched stub
    BROKEN = "broken"  # the module under test could not be imported
    TIMEOUT = "timeout"  # stopped by the per-test time limit, or it reached a function an earlier one stopped

    def __str__(self) -> str:
        return self.value


class Kind(str, enum.Enum):
    """Why a test failed, where the kit can tell; an ordinary wrong answer has no kind."""

    TODO = "todo"
    BROKEN = "broken"
    TIMEOUT = "timeout"
    CUDA = "cuda"  # asked for a CUDA device on a machine without one
    MEMORY = "memory"  # MemoryError: the run's memory limit, or the machine's
    FILE_SIZE = "file-size"  # a write went past the file-size limit (EFBIG)
    TAMPERED = "tampered"  # class grading: the run tampered with what the tests rely on

    def __str__(self) -> str:
        return self.value


class State(str, enum.Enum):
    """A lesson's standing."""

    DONE = "done"  # every test that counts passed
    IN_PROGRESS = "in progress"
    NOT_STARTED = "not started"  # every test waits on a TODO
    BROKEN = "broken"  # the learner's module does not import
    ERROR = "error"  # nothing could be graded (no tests collected, pytest did not finish)
    TAMPERED = "tampered"  # class grading: scored 0 and flagged
    STOPPED = "stopped"  # a forked run ended early (a limit, a crash, an exit); what passed before counts

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Failure:
    """Why a test did not pass, recorded when its report was made."""

    kind: Kind | None  # None: an ordinary failure (a wrong answer, an exception)
    exception: str  # the exception's type name, "" where there was none
    summary: str  # the exception's own lines (pytest's "E" lines), or the kit's message
    where: str | None = None  # "exercises/07_stable/stable.py:52": the learner's line, where known

    def to_json(self) -> dict:
        return {
            "kind": self.kind and self.kind.value,
            "exception": self.exception,
            "summary": self.summary,
            "where": self.where,
        }

    @classmethod
    def from_json(cls, data: dict) -> Failure:
        kind = data.get("kind")
        return cls(
            Kind(kind) if kind else None,
            str(data.get("exception", "")),
            str(data.get("summary", "")),
            data.get("where"),
        )


@dataclass(frozen=True)
class TestInfo:
    """A test as collection announced it: its id, its weight and whether learners see it."""

    __test__ = False  # not a test class, for pytest

    nodeid: str
    max_points: float = 1.0
    public: bool = False

    def to_json(self) -> dict:
        return {"nodeid": self.nodeid, "max_points": self.max_points, "public": self.public}

    @classmethod
    def from_json(cls, data: dict) -> TestInfo:
        return cls(str(data["nodeid"]), float(data.get("max_points", 1.0)), bool(data.get("public", False)))


@dataclass(frozen=True)
class TestResult:
    """One test's final result."""

    __test__ = False

    nodeid: str
    outcome: Outcome
    max_points: float = 1.0
    public: bool = False
    message: str = ""  # the whole report text of a test that did not pass ("" on a pass)
    failure: Failure | None = None
    speed: tuple[dict, ...] = ()  # the ratios a speed test measured
    seconds: float = 0.0  # setup, call and teardown
    # Checked in the student's own process, where its checks could be reached: under
    # `kata grade --remote`, a test that cannot run with the code in another process.
    inside: bool = False
    # Its check rests on what the code's process recorded of the code (its ops, a scenario's
    # result), which that process can switch off: the tests' process saw it take such a record.
    recorded: bool = False
    # Passed, on such a record, in a lesson whose source read found something (grader.testing.
    # source): its points wait for a person (grader.grading.verdict).
    held: bool = False

    @property
    def points(self) -> float:
        """The points it earned (none yet while they are held for a person)."""
        return self.max_points if self.outcome is Outcome.PASSED and not self.held else 0.0

    @property
    def counts(self) -> bool:
        """Whether it counts at all (a skipped test counts on neither side)."""
        return self.outcome is not Outcome.SKIPPED

    @property
    def where(self) -> str | None:
        return self.failure.where if self.failure else None

    def to_json(self) -> dict:
        return {
            "nodeid": self.nodeid,
            "outcome": self.outcome.value,
            "max_points": self.max_points,
            "public": self.public,
            "message": self.message,
            "failure": self.failure and self.failure.to_json(),
            "speed": list(self.speed),
            "seconds": self.seconds,
            **({"inside": True} if self.inside else {}),
            **({"recorded": True} if self.recorded else {}),
            **({"held": True} if self.held else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> TestResult:
        failure = data.get("failure")
        return cls(
            str(data["nodeid"]),
            Outcome(data["outcome"]),
            float(data.get("max_points", 1.0)),
            bool(data.get("public", False)),
            str(data.get("message") or ""),
            Failure.from_json(failure) if failure else None,
            tuple(data.get("speed") or ()),
            float(data.get("seconds", 0.0)),
            data.get("inside") is True,
            data.get("recorded") is True,
            data.get("held") is True,
        )


@dataclass(frozen=True)
class CollectError:
    nodeid: str
    message: str

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CollectError:
        return cls(str(data.get("nodeid", "")), str(data.get("message", "")))


@dataclass
class RunResult:
    """What one pytest session of a lesson's tests left behind, and how its process ended.

    The plugin fills collected, collect_errors, tests and exitstatus; whoever ran the process
    (grader.runs, grader.grading.sandbox) fills the rest. exitstatus is None when the session
    did not end normally (it was killed, or the code under test ended the process); `tests`
    then holds the tests that finished before that.
    """

    collected: list[TestInfo] | None = None  # None: the run never finished collecting
    collect_errors: list[CollectError] = field(default_factory=list)
    tests: list[TestResult] = field(default_factory=list)  # the finished ones, in the order they ran
    exitstatus: int | None = None  # pytest's
    returncode: int | None = None  # the process's: an exit status, or minus the signal that ended it
    stopped: bool = False  # stopped at the run's wall-clock limit
    ended: str | None = None  # class grading: why the run did not finish normally, in words
    # class grading, --remote: how the code's process ended (as `returncode`), where it ended while its tests ran
    code_returncode: int | None = None
    code_overran: bool = False  # ... because the tests' process stopped it: a call ran past its limit
    tampering: list[str] = field(default_factory=list)  # class grading: what the guard or the channel saw
    review: list[str] = field(
        default_factory=list
    )  # class grading, --remote: what a person should read (grader.grading.verdict)
    # class grading, --remote: the protocol's cost of a timed call its tests' process measured
    # (seconds of the code's CPU: on one input, and for each more), where it measured one
    overhead: tuple[float, float] | None = None
    output: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    max_rss_mib: float = 0.0

    def count(self, *outcomes: Outcome) -> int:
        return sum(t.outcome in outcomes for t in self.tests)

    def by_id(self) -> dict[str, TestResult]:
        return {t.nodeid: t for t in self.tests}

    # What the plugin writes: the part of a run its own process knows.
    def to_json(self) -> dict:
        return {
            "exitstatus": self.exitstatus,
            "collect_errors": [e.to_json() for e in self.collect_errors],
            "collected": None if self.collected is None else [t.to_json() for t in self.collected],
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, data: dict) -> RunResult:
        collected = data.get("collected")
        return cls(
            collected=None if collected is None else [TestInfo.from_json(t) for t in collected],
            collect_errors=[CollectError.from_json(e) for e in data.get("collect_errors", [])],
            tests=[TestResult.from_json(t) for t in data.get("tests", [])],
            exitstatus=data.get("exitstatus"),
        )


@dataclass
class LessonSummary:
    """One lesson's standing. Skipped tests count in neither `passed` nor `total`."""

    lesson: str
    state: State
    passed: int = 0
    total: int = 0
    points: float = 0.0
    max_points: float = 0.0
    first_todo: str | None = None  # "exercises/03_broadcast/broadcast.py:40"
    problem: str | None = None  # why the lesson could not be graded, or what stopped it, one line
    held: float = 0.0  # points of passed tests held for a person (TestResult.held), not in `points`

    @property
    def done(self) -> bool:
        return self.state is State.DONE

    def to_json(self) -> dict:
        return {
            "lesson": self.lesson,
            "state": self.state.value,
            "passed": self.passed,
            "total": self.total,
            "points": self.points,
            "max_points": self.max_points,
            "first_todo": self.first_todo,
            "problem": self.problem,
            **({"held": self.held} if self.held else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> LessonSummary:
        return cls(**{**data, "state": State(data["state"])})


def headline(message: str) -> str:
    """A message's first non-blank line, stripped."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


def summarize(lesson: str, run: RunResult) -> LessonSummary:
    """A lesson's standing from its run: points and counts from the tests that count."""
    if run.exitstatus is None and run.ended is None:
        last = run.output.strip().splitlines()[-1:] or ["no output"]
        return LessonSummary(lesson, State.ERROR, problem=f"pytest did not finish: {last[0]}")
    counted = [t for t in run.tests if t.counts]
    if run.collect_errors and not counted:
        return LessonSummary(lesson, State.ERROR, problem=headline(run.collect_errors[0].message))
    passed = [t for t in counted if t.outcome is Outcome.PASSED]
    todos = [t for t in counted if t.outcome is Outcome.TODO]
    broken = [t for t in counted if t.outcome is Outcome.BROKEN]
    summary = LessonSummary(
        lesson,
        State.IN_PROGRESS,
        passed=len(passed),
        total=len(counted),
        points=sum(t.points for t in passed),
        max_points=sum(t.max_points for t in counted),
        held=sum(t.max_points for t in passed if t.held),
        first_todo=next((t.where for t in todos if t.where), None),
    )
    if broken:
        summary.state, summary.problem = State.BROKEN, headline(broken[0].message)
    elif counted and len(passed) == len(counted):
        summary.state = State.DONE
    elif not counted:
        summary.state, summary.problem = State.ERROR, "no tests were collected"
    elif len(todos) == len(counted):
        summary.state = State.NOT_STARTED
    if run.ended:  # (a forked run) what passed before counts; the tests it never reported count as failed
        reported = {t.nodeid for t in run.tests}
        unreported = [t for t in run.collected or [] if t.nodeid not in reported]
        summary.total += len(unreported)
        summary.max_points += sum(t.max_points for t in unreported)
        summary.state, summary.problem = State.STOPPED, f"the run {run.ended}"
    return summary
