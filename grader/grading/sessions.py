"""A run's sessions, run in turn by one function: `run_sessions`.

A job lists its sessions (grader.grading.job.Session), each a kind and its tests. The first
runs in the run's own process, every test no later session names; its results go on the run's
channel (grader.grading.pipe), except those of the tests a later session runs, which it holds
back. Each later session runs in a child forked before the first session starts, from the
state every run starts from; the child waits for the names of the tests held for it, runs
them, and reports on a pipe of its own, read as the parent reads a run's (grader.grading.
protocol: it trusts nothing). Its results take the held ones' places on the run's channel,
in the order of the list.

How a session runs comes from its kind's settings alone (`SessionKind`): with a code process
(grader.grading.codeprocess), this process is the tests' process, outside the boundary, under
the run's limits; else this process enters the boundary and is the student's own.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Callable

import pytest

from grader import forking
from grader.grading.codeprocess import CodeProcess
from grader.grading.confinement import clean_environment, enter_boundary, set_limits
from grader.grading.job import Found, Job, Limits, Session, SessionKind
from grader.grading.pipe import PipeWriter
from grader.grading.protocol import Reader
from grader.results import Outcome, TestResult
from grader.running import TestNotes


def run_sessions(job: Job, limits: Limits, channel_fd: int) -> int:
    """Run the job's sessions, reporting on `channel_fd`; the first session's exit status."""
    first, *later = job.sessions
    children: list[_Child] = []
    for session in later:  # each forked now, from the state every run starts from
        children.append(_Child.fork(job, limits, session, close=[channel_fd, *_descriptors(children)]))
    # The run's end is held back too wherever this process has more to send after its session.
    writer = PipeWriter(
        channel_fd,
        _held_back(later) if first.kind.code_process or later else None,
        guarded=job.guarded and not first.kind.code_process,
    )
    code = None
    if first.kind.code_process:
        code = CodeProcess.fork(
            job, limits, first.kind.makes_processes, keep_from_code=[channel_fd, *_descriptors(children)]
        )
    overhead = ["--kata-overhead", "{:.9f}:{:.9f}".format(*job.overhead)] if code and job.overhead else []
    named = _named(later)
    status = _session(job, limits, first.kind, writer, code, *overhead, plugins=[_Defer(named)] if named else [])
    ended = writer.code_process  # as the plugin told it (grader.plugin.hooks.pytest_kata_code_process_ended)
    if code and job.overhead is None and ended.overhead is not None:
        writer.overhead(*ended.overhead)
    for i, child in enumerate(children):
        writer.send(*child.results([r for r in writer.held if _runs_again(later, r) == i]))
    if code and (ended.gone or ended.overran) and (returncode := code.how_it_ended()) is not None:
        writer.code_ended(returncode, overran=ended.overran)
    writer.finish()
    return status


def _named(later: list[Session]) -> frozenset[str]:
    """The tests the later sessions name: the first session skips them."""
    return frozenset().union(*(s.tests for s in later if isinstance(s.tests, frozenset)))


def _held_back(later: list[Session]) -> Callable[[TestResult, TestNotes], bool]:
    """Which of the first session's results it holds back, for a later session to replace: the
    tests a later session names, and where one takes them, those the tests' process found used
    something of the code that cannot cross (the test's notes, as the remote plugin kept them)."""
    named = _named(later)
    cannot_cross = any(s.tests is Found.CANNOT_CROSS for s in later)
    return lambda result, notes: result.nodeid in named or (cannot_cross and notes.unremotable)


def _runs_again(later: list[Session], held: TestResult) -> int:
    """Which of the later sessions runs a held test again: the first that names it, else the
    one that takes the tests that cannot cross."""
    named = [i for i, s in enumerate(later) if isinstance(s.tests, frozenset) and held.nodeid in s.tests]
    return named[0] if named else next(i for i, s in enumerate(later) if s.tests is Found.CANNOT_CROSS)


def _descriptors(children: list[_Child]) -> list[int]:
    """The ends of their pipes this process holds: no later child or code process may."""
    return [fd for child in children for fd in (child.ask, child.answer)]


def _session(
    job: Job,
    limits: Limits,
    kind: SessionKind,
    writer: PipeWriter,
    code: CodeProcess | None,
    *options: str,
    plugins: list,
) -> int:
    """One pytest session in this process, set up as its kind says: as the tests' process of
    `code`, or behind the boundary with the code; its exit status (71: the boundary could not be
    made)."""
    if code is not None:
        # The run's limits on memory and CPU hold here too, each process its own budget: what the
        # code process sends is data, but data can ask for memory (a result expanded to any size,
        # copied by a check) or time. Not the limit on a file's size: the log this process writes
        # to is the one the code process fills.
        set_limits(limits, file_size=False)
        # The connection's descriptor is the plugin's from here: it closes it at the session's
        # end, and the code process ends.
        options = ("--kata-remote-fd", code.connection, "--kata-reference", str(job.remote), *options)
    elif not enter_boundary(job, limits):
        return 71
    clean_environment(job)
    timeout = [f"--timeout={limits.test_timeout:g}"] if limits.test_timeout else []
    return pytest.main([*job.args, *timeout, *options, *forking.PRELOADED], plugins=[writer, *plugins])


@dataclass(frozen=True)
class _Child:
    """A later session's child, forked at the run's start, waiting for the names of its tests."""

    session: Session
    pid: int
    ask: int  # this process -> the child: the names of its tests
    answer: int  # the child's results channel

    @classmethod
    def fork(cls, job: Job, limits: Limits, session: Session, close: list[int]) -> _Child:
        """`close`: descriptors of this process the child must not hold."""
        ask_read, ask_write = os.pipe()
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            for fd in (ask_write, answer_read, *close):
                os.close(fd)
            forking.end_child(lambda: _run_later(job, limits, session.kind, ask_read, answer_write))
        os.close(ask_read)
        os.close(answer_write)
        return cls(session, pid, ask_write, answer_read)

    def results(self, held: list[TestResult]) -> tuple[list[TestResult], list[str]]:
        """The `held` tests' results from the child, which runs them again, each marked `inside`
        where it ran them in the student's process; a test that did not report keeps its held
        result, made an error that says why. And what it tampered with, in the student's process."""
        with os.fdopen(self.ask, "w") as names:
            json.dump([r.nodeid for r in held], names)
        reader = Reader()
        while data := os.read(self.answer, 1 << 16):  # to its end: when the session's last process has gone
            reader.take(data)
        os.close(self.answer)
        os.waitpid(self.pid, 0)
        if not held:
            return [], []
        run = reader.result()
        done = run.by_id()
        kind = self.session.kind
        inside = not kind.code_process
        why = f"the run {kind.where} {run.ended or 'ended before it reported'}"
        results = [
            replace(
                done.get(r.nodeid) or replace(r, outcome=Outcome.ERROR, message=why, failure=None),
                max_points=r.max_points,
                public=r.public,
                inside=inside,
            )
            for r in held
        ]
        return results, [f"{kind.where}: {problem}" for problem in run.tampering] if inside else []


def _run_later(job: Job, limits: Limits, kind: SessionKind, ask: int, channel_fd: int) -> int:
    """A later session, in its child: the tests named on `ask`, none of the others."""
    with os.fdopen(ask) as names:
        nodeids = set(json.load(names))
    if not nodeids:
        return 0
    code = (
        CodeProcess.fork(job, limits, kind.makes_processes, keep_from_code=[channel_fd]) if kind.code_process else None
    )
    writer = PipeWriter(channel_fd, guarded=job.guarded and not kind.code_process)
    return _session(job, limits, kind, writer, code, plugins=[_Only(nodeids)])


class _Defer:
    """A pytest plugin: the tests of `nodeids` are skipped here, to run in a later session."""

    def __init__(self, nodeids: frozenset[str]) -> None:
        self.nodeids = nodeids

    def pytest_collection_modifyitems(self, config, items) -> None:
        for item in items:
            if item.nodeid in self.nodeids:
                item.add_marker(
                    pytest.mark.skip(
                        reason="runs in a session of its own: its code needs processes, or "
                        "cannot be called from another process"
                    )
                )


class _Only:
    """A pytest plugin: only the tests of `nodeids` run; the rest are deselected."""

    def __init__(self, nodeids: set[str]) -> None:
        self.nodeids = nodeids

    def pytest_collection_modifyitems(self, config, items) -> None:
        deselected = [item for item in items if item.nodeid not in self.nodeids]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = [item for item in items if item.nodeid in self.nodeids]
