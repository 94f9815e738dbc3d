"""What one forked run is: its job, the sessions its tests run in, and the limits it runs under.

A run is one (student, lesson), or one lesson of ``kata verify`` or ``kata status``. Its tests
run in one or more pytest sessions, each of one kind (`SessionKind`): the kind says where the code
under test runs and what that allows. Two processes take part where the code runs apart:

- the **code process** runs the learner's code, behind the OS boundary (grader.grading.isolation),
  and answers calls (grader.remote.server);
- the **tests' process** runs pytest and every check, outside the boundary, calling the code
  process over a socket (grader.remote.connection).

grader.grading.sessions runs a job's sessions; grader.grading.sandbox runs the jobs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from grader.grading import cgroup
from grader.grading.isolation import View
from grader.results import TestInfo
from grader.runs import RUN_TIMEOUT


@dataclass(frozen=True)
class Limits:
    """What one lesson run may use (the defaults are kata grade's). Memory is counted beyond what
    the preloaded parent holds."""

    wall: float = 180.0  # seconds, the whole lesson
    cpu: float = 180.0  # CPU seconds of the run's main process
    memory: int = 4 << 30  # bytes of address space
    file_size: int = 256 << 20  # bytes any one file it writes may reach (its output included)
    output: int = 64 << 10  # bytes of its output kept (the middle is cut, with a note)
    test_timeout: float | None = 15.0  # seconds per test (pytest-timeout), well under `wall`; None: the kit's own
    processes: int = 256  # processes and threads at once (behind the namespaces: grader.grading.isolation)
    disk: int = 512 << 20  # bytes each of its private tmpfs folders (/tmp, HOME, /dev/shm) may hold
    # Where this machine lets the grader make cgroups (grader.grading.cgroup; None: nowhere, or
    # --trusted), and the one made for the run in hand: its code processes are bounded together.
    cgroups: cgroup.Groups | None = None
    cgroup: tuple[Path, ...] = ()

    @classmethod
    def ungraded(cls, wall: float = RUN_TIMEOUT) -> Limits:
        """As generous as a learner's own run, for ``kata verify`` and ``kata status``: `wall`
        seconds of clock and of CPU, the kit's own per-test timeout (pyproject.toml), no memory
        limit a lesson could meet (DataLoader workers count separately), the output kept."""
        return cls(wall=wall, cpu=wall, memory=16 << 30, output=1 << 20, test_timeout=None)


# A code process that may make processes (a DataLoader's workers: lesson 06's tests make up to
# 4, with threads of their own: 16 tasks at once, measured) has at most this many processes and
# threads at once, each with this share of the run's memory, so that together they hold no more
# than the run may: the memory limit is each process's (RLIMIT_AS), and no cgroup is made that
# would count them together. (At 16, the cap itself made 06's loaders time out under load.)
WORKER_TASKS = 32
MEMORY_SHARED = (
    f"memory: the limit is each process's; where the code may make processes (a DataLoader's "
    f"workers), at most {WORKER_TASKS} processes and threads, each with 1/{WORKER_TASKS} of it"
)


def memory_note(limits: Limits) -> str:
    """How a run's memory is limited, for summary.txt."""
    if limits.cgroups is None:
        return MEMORY_SHARED + "; no cgroup: tmpfs and memfd pages do not count"
    return (
        f"memory: each run's code processes together, by {limits.cgroups.describe()}; and each process's, "
        f"where the code may make processes at most {WORKER_TASKS}, each with 1/{WORKER_TASKS} of it"
    )


@dataclass(frozen=True)
class SessionKind:
    """One kind of session: where the code under test runs, and so what the session may do."""

    where: str  # how a message names where the session's tests ran
    # The code in a code process behind the boundary, the tests in a tests' process outside it;
    # else both in the student's own process, behind the boundary, with the tamper checks
    # (grader.grading.guard), and the tests' results marked `inside`.
    code_process: bool
    # That code process may make processes (a DataLoader's workers): their CPU time and ops may
    # go unseen, so the tests' process times nothing there and records none of its ops.
    makes_processes: bool = False


# The kinds of session, a table: grader.grading.sessions reads their settings, never their names.
CODE_PROCESS = SessionKind("with the code in a process of its own", code_process=True)
CODE_MAKING_PROCESSES = SessionKind(
    "with the code in a process that may make processes", code_process=True, makes_processes=True
)
STUDENTS_PROCESS = SessionKind("in the student's process", code_process=False)


class Found(enum.Enum):
    """A session's tests where they are not named before the run, but found as it goes."""

    REST = "every test no other session names"  # the first session's
    # The tests whose code the first session's tests' process could not call (they drive an
    # object of the code, or get a result that is not data): the kit's answer's run, which
    # finds each lesson's fallbacks (grader.grading.schedule), runs them again in a later one.
    CANNOT_CROSS = "every test the first session could not run with the code in another process"


@dataclass(frozen=True)
class Session:
    """One pytest session of a run: its kind and its tests. A run's first session runs `Found.REST`
    in the run's own process; each later one runs what it names (or `Found.CANNOT_CROSS`) in a
    child of its own, and the first session's results of those tests are replaced by its."""

    kind: SessionKind
    tests: frozenset[str] | Found = Found.REST


ALL_IN_THE_STUDENTS_PROCESS = (Session(STUDENTS_PROCESS),)  # --in-process, kata verify, kata status


@dataclass
class Job:
    name: str  # "alice/07_stable": how messages name it
    workdir: Path  # the grading copy, the run's working directory
    args: list[str]  # pytest's arguments
    home: Path  # the run's own folder: HOME, TMPDIR and the log live here
    tag: object = None  # the caller's
    view: View | None = None  # what the run sees behind the namespaces; None: no boundary (--trusted)
    # The kit whose tests, checks included, run in a tests' process (grader.remote): what a
    # session with a code process needs; None where no session has one.
    remote: Path | None = None
    sessions: tuple[Session, ...] = ALL_IN_THE_STUDENTS_PROCESS
    # With a code process, the protocol's cost of a timed call (seconds of the code process's
    # CPU: on one input, for each more), measured already on a code process that held the kit's
    # answer; None: measured in this run, before the code under test is loaded, and reported.
    overhead: tuple[float, float] | None = None
    # The lesson's tests (its stub's run collected them) and the learner's files they import,
    # relative to `workdir`: where one of these does not compile, no test can import it, and
    # each test is reported so at once, with the message the tests give, none of them run.
    expected: tuple[TestInfo, ...] = ()
    imports: tuple[str, ...] = ()
    # Whether the run's tamper checks run (grader.grading.guard): not for code that is the
    # learner's own, on their own machine (``kata status``), where they cost a third of a run.
    guarded: bool = True
