"""The code process: the code under test, behind the boundary, answering the tests' process's calls.

A session with a code process (grader.grading.job.SessionKind) forks it from the tests' process, which
stays outside the boundary. The two share a socket, for calls and their answers, and memory,
which a timed call's tensors cross in (grader.remote.shared). The code process sees none of
the tests' process: it enters the run's namespaces, where it sees no test file and no hint,
takes the run's limits, and serves calls (grader.remote.server).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from dataclasses import dataclass, replace

from grader import forking
from grader.grading import seccomp
from grader.grading.confinement import clean_environment, enter_boundary
from grader.grading.isolation import Unavailable
from grader.grading.job import WORKER_TASKS, Job, Limits
from grader.remote import shared
from grader.remote.server import Server


@dataclass(frozen=True)
class CodeProcess:
    """A forked code process, as the tests' process knows it."""

    pid: int
    connection: str  # the plugin's --kata-remote-fd for it: "SOCKET:MEMORY:PID[:processes]"

    @classmethod
    def fork(cls, job: Job, limits: Limits, makes_processes: bool, keep_from_code: list[int]) -> CodeProcess:
        """Fork the code process (`makes_processes`: allowed to make them). `keep_from_code`:
        descriptors of this process it must not hold."""
        tests_end, code_end = socket.socketpair()
        memory = shared.create()
        pid = os.fork()
        if pid == 0:
            for fd in (*keep_from_code, tests_end.detach()):
                os.close(fd)
            forking.end_child(lambda: _serve(job, limits, code_end, memory, makes_processes))
        code_end.close()
        return cls(pid, f"{tests_end.detach()}:{memory}:{pid}" + (":processes" if makes_processes else ""))

    def how_it_ended(self) -> int | None:
        """How the code process ended (an exit status, or minus the signal), waiting a second
        for it; None where it lives on. Asked only where it closed its end of the connection
        while its tests still called it, or the tests' process stopped it."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        return None


def _serve(job: Job, limits: Limits, connection: socket.socket, memory: int, makes_processes: bool) -> int:
    # The code process sees no test file and no hint: the scenarios it runs come as source
    # from the tests' process (grader.testing.scenario.source_of).
    view = job.view and replace(job.view, hidden=(*job.view.hidden, job.view.copy / "tests"))
    if makes_processes:  # its processes share the run's memory: each gets its part (no cgroup counts them together)
        view = view and replace(view, processes=min(view.processes, WORKER_TASKS))
        # (and the memory it shares with the tests' process, which it maps once and children inherit)
        limits = replace(limits, memory=limits.memory // WORKER_TASKS + shared.SIZE)
    if not enter_boundary(job, limits, view):
        return 71
    try:  # its CPU time, and its ops, must all be its own processes' (grader.grading.seccomp)
        if not makes_processes:  # (else nothing is timed or recorded there: it keeps only its CPU)
            seccomp.no_processes()
    except Unavailable as error:
        if job.view is not None:  # (--trusted: no boundary was asked for)
            print(
                f"kata grade: the code's process could not be kept from making processes: {error}",
                file=sys.stderr,
                flush=True,
            )
            return 71
    clean_environment(job)
    Server(connection, memory).serve()
    return 0
