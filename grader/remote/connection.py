"""The tests' process's end of the connection to the code process (S, grader.remote.server).

A `Connection` sends one request at a time and reads its answer, raising S's error here
(grader.remote.errors). It starts S (`spawn`) or takes one class grading forked, stops S when
a call runs past its time limit with the alarm that stops it switched off, and notes work a
call left to another thread. What the answers mean is the stand-in's (grader.remote.stand_in);
timed calls are grader.remote.timed's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from torch.utils._python_dispatch import _disable_current_modes

from grader import running
from grader.remote import TIMEOUT_MARGIN, cputime, server, shared, wire
from grader.remote.code_clock import CodeClock
from grader.remote.errors import Gone, raise_error

THREADS_NOTED = 20_000  # ns of CPU in S's other threads during a call that earn a note (a thread's start alone: 70 us)


class Connection:
    """One S: requests go out one at a time, and each gets its answer."""

    def __init__(
        self, sock: socket.socket, memory: int, root: int | None, process: subprocess.Popen | None = None
    ) -> None:
        self.sock = sock
        self.shared = shared.Shared(memory)  # where timed calls' tensors go
        self.root = root  # the process S is, or runs under: timed calls count its and its children's CPU time
        self.kit: Path | None = None  # the kit whose answers timed results are checked against (None: the tests' root)
        self.process = process  # S, when this process started it
        self.to_free: list[int] = []
        self.roots: tuple[Path, ...] = ()  # the folders of the learner's files: what an error's frames may name
        self.files_read: dict[str, Path] = {}  # those an error's frames named, read (grader.remote.errors)
        self.deadline: float | None = None  # time.monotonic() by which the test must end (set per test)
        self.gone: str | None = None
        self.closed_by_s = False  # S's end of the connection closed while a call waited: S ended, as a rule
        # Seconds past a call's limit (`left`) that S may take to answer before it is stopped: less
        # than the margin S's limit leaves before the test's own, so the test still ends with its line.
        self.grace = TIMEOUT_MARGIN / 2
        self.overran = False  # S was stopped so
        self.go_frame = wire.encode({"op": "go"})
        self.read: set[Path] = set()  # the code's files read for what reaches past them (grader.remote.loading)
        self.watched: list[int] | None = None  # S's processes, whose threads `threads_watched` reads
        self.threaded: set[str] = set()  # the functions noted for work in another thread
        self.compared: set[str] = set()  # the functions a timed call of which had its ops compared with a call's
        # S may make processes (the tests that need them: grader.grading.sandbox): its children's
        # CPU time and ops may go unseen, so nothing is timed or recorded there.
        self.processes = False
        # Seconds of S's CPU a timed call costs the protocol: on one input, and for each more
        # (grader.remote.timed.calibrate), measured where the session's tests time calls (`timing`).
        self.overhead: tuple[float, float] | None = None
        self.timing = True
        self.ahead = None  # the next timed call's inputs, written already (grader.remote.timed)
        # A loop's number (grader.plugin.loops) whose stand-in S is to put in place of the function
        # its call stopped by the limit was running, told with the next request: no request of its
        # own, which would fall past the stopped test's time limit.
        self.loop: int | None = None
        self.clock = CodeClock()  # what speed tests read (grader.testing.speed)

    @classmethod
    def spawn(cls, cwd: Path) -> Connection:
        """An S of its own: a fresh Python process serving a socket pair (a learner-side or
        `kata verify` run with --kata-remote; class grading forks a sandboxed one instead)."""
        here, there = socket.socketpair()
        memory = shared.create()
        process = subprocess.Popen(
            [sys.executable, "-m", server.__name__, str(there.fileno()), str(memory)],
            pass_fds=[there.fileno(), memory],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
        there.close()
        return cls(here, memory, process.pid, process)

    def wait_ready(self) -> None:
        """Wait for S to answer: a spawned S imports torch first (seconds), which no test's time
        limit should pay for."""
        self.request({"op": "ready"})

    def close(self) -> None:
        self.sock.close()
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def watching(self) -> bool:
        """Whether what the code does is watched for a person to read (`threads_watched`, timed
        calls' ops): under class grading, where notes are read (not in a learner's run, which
        started S itself), and not where S may make processes (a DataLoader's), whose work
        goes unseen."""
        return self.root is not None and self.process is None and not self.processes

    @contextlib.contextmanager
    def threads_watched(self, what: str):
        """Around a call of the code's: where S's processes spent CPU in threads the call started
        (a worker thread, which the checks watching the thread serving the call do not see:
        asyncio.to_thread, a pool made for it), a note for a person. A thread started earlier
        (torch's own, which may wake at any time) is left out: one the code starts at import is
        in what the source read flags (threading, asyncio, concurrent). Only while `watching`."""
        if not self.watching:
            yield
            return
        if self.watched is None:
            self.watched = cputime.processes(self.root)  # S, and the process it runs under: read once
        known = cputime.threads(self.watched)  # those alive before the call: what they spend is left out
        before = cputime.beside(self.watched, known)
        yield
        spent = cputime.beside(self.watched, known) - before
        if spent > THREADS_NOTED and what not in self.threaded:  # once a function: its first call that did
            self.threaded.add(what)
            running.note_review(
                f"{what} spent {spent / 1e6:.2g} ms of CPU in another thread during a call, out of the sight "
                "of the checks that watch the thread it was called in"
            )

    def request(self, message: dict, payload: bytes | None = None) -> dict:
        """Send `message` (or its `payload`, encoded already) and return S's answer."""
        __tracebackhide__ = True
        if self.gone:
            raise Gone(self.gone)
        self.ahead = None  # S's time from here on is not only a timed call's
        if self.to_free:
            message = {**message, "free": self.to_free}
            payload, self.to_free = None, []
        if self.loop is not None and "op" in message:
            message = {**message, "stand_in": self.loop}
            payload, self.loop = None, None
        # S stops a call at its limit with an alarm; code that switched the alarm off or blocks it
        # in C does not stop, and would hold every later test: stopped here, it answers no more.
        self.sock.settimeout(None if self.deadline is None else self.left() + self.grace)
        try:
            with _disable_current_modes():  # moving data runs ops that are not the learner's
                if payload is None:
                    wire.send(self.sock, message)
                else:
                    self.sock.sendall(wire._LENGTH.pack(len(payload)) + payload)
                payload = wire.receive_payload(self.sock)
                reply = None if payload is None else wire.decode(payload)
        except TimeoutError:
            self.stop()
            raise Gone(self.gone) from None
        except (wire.Broken, OSError) as exc:
            reply, why = None, str(exc)
        else:
            why = "it closed the connection"
            self.closed_by_s = payload is None
        if type(reply) is not dict:
            raise Gone(self.broke(why))
        if "error" in reply:
            raise_error(reply, self.roots, self.files_read)
        return reply

    def stop(self) -> None:
        """Stop S, and every process under it (its PID namespace's init among them), for good."""
        self.overran = True
        self.gone = (
            "The code under test ran past its time limit with the alarm that stops it switched off or "
            "blocked; its process was stopped, and can answer no more calls."
        )
        if self.root is not None:
            for pid in reversed(cputime.processes(self.root)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def stand_in(self, key: int) -> None:
        """Have S replace the function its call stopped by the time limit was running by a stand-in
        that raises loop `key` at once (grader.stand_ins.stand_in), before the next request."""
        self.loop = key

    def broke(self, why: str) -> str:
        """S ended or broke the protocol (`why`): no more calls go to it. What to tell."""
        self.gone = (
            f"The process running the code under test ended or broke the protocol ({why}); the "
            "code called os._exit or sys.exit, crashed, or wrote to the tests' channel."
        )
        return self.gone

    def left(self) -> float | None:
        """Seconds a call in S may take: what its test has left."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.05)

    def free(self, handle: int) -> None:
        self.to_free.append(handle)
