"""A run's own process, forked by the parent (grader.grading.sandbox), up to its sessions.

It keeps the CPU the parent gave it, starts a session of its own (its process group is killed
as a whole when the run ends), closes every inherited file descriptor but the results channel
and sends its output to a log file, with stdin /dev/null. Where a file the lesson's tests import
does not compile, it reports every test so at once, with no session. Else it runs the job's
sessions (grader.grading.sessions).

The parent imports this module, and pytest with it, in `sandbox.preload`: each run pays
nothing for it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from grader import forking
from grader.grading.job import Job, Limits
from grader.grading.pipe import PipeWriter
from grader.grading.sessions import run_sessions
from grader.plugin.target import Target
from grader.results import Failure, Kind, Outcome, TestResult


def run_child(job: Job, limits: Limits, channel_fd: int, cpu: int | None = None) -> None:
    """Set up the run's process and run its sessions. Ends the process; never returns."""
    forking.end_child(lambda: _set_up_and_run(job, limits, channel_fd, cpu))


def _set_up_and_run(job: Job, limits: Limits, channel_fd: int, cpu: int | None = None) -> int:
    if cpu is not None:  # every process of the run inherits it; those behind the boundary cannot leave it
        os.sched_setaffinity(0, {cpu})
    os.setsid()
    signal.set_wakeup_fd(-1)  # the parent's, as are these handlers
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    out = os.open(job.home / "output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.closerange(3, channel_fd)
    os.closerange(channel_fd + 1, 1 << 16)
    if job.expected and (broken := _not_compiling(job)) is not None:
        return _report_unimportable(job, *broken, channel_fd)
    return run_sessions(job, limits, channel_fd)


def _not_compiling(job: Job) -> tuple[Path, SyntaxError] | None:
    """The first of the files the tests import that does not compile, and its error. Compiling
    runs nothing of the file; importing it compiles it the same way first."""
    for name in job.imports:
        path = job.workdir / name
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:  # IndentationError and TabError too
            return path, exc
        except Exception:  # noqa: BLE001 (null bytes, a parser out of its depth: left to the run)
            continue
    return None


def _report_unimportable(job: Job, path: Path, error: SyntaxError, channel_fd: int) -> int:
    """Every test of the run failed as the tests fail where the module under test cannot be
    imported (grader.plugin.target), with no pytest session, no code process and no wait."""
    message, where = Target(root=job.workdir.resolve(), tree="exercises").describe_import_error(error, path)
    failure = Failure(Kind.BROKEN, "NotImportable", message, where)
    print(f"{message}\nNo test ran: every test imports {path.name}.", flush=True)
    writer = PipeWriter(channel_fd, guarded=False)
    writer.announce(list(job.expected))
    writer.send(
        [TestResult(t.nodeid, Outcome.BROKEN, t.max_points, t.public, message, failure) for t in job.expected], []
    )
    writer.exitstatus = 1  # pytest's: tests failed
    writer.finish()
    return 1
