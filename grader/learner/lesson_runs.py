"""A lesson's test run for ``kata watch``: a child process in a process group of its own.

A run starts fresh (``python -m pytest exercises/NN_topic ...``) or, once the watcher has
imported what runs need (`Warm`), forked from it. Its output goes straight to the terminal.
`stop_tests` stops the whole group, DataLoader workers included: nothing is left running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader import forking
from grader.lessons import Lesson
from grader.runs import pytest_args

STOP_GRACE_S = 5.0  # how long stopped tests get to exit before they are killed
STOP_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


def lesson_args(lesson: Lesson, tree: str = "exercises") -> list[str]:
    """pytest's arguments for a lesson's tests against `tree`, as the watcher runs them."""
    return pytest_args(f"{tree}/{lesson.name}")


def pytest_command(lesson: Lesson) -> list[str]:
    return [sys.executable, "-m", "pytest", *lesson_args(lesson)]


def start_tests(root: Path, lesson: Lesson, warm: Warm | None = None) -> subprocess.Popen | Forked:
    """Start the lesson's tests, output to our terminal, in a process group of their own:
    forked from `warm` once it is ready, else a fresh process."""
    sys.stdout.flush()  # our lines first, then the child's
    sys.stderr.flush()
    if warm is not None and warm.ready:
        return warm.fork(root, lesson_args(lesson))
    if os.name == "posix":
        return subprocess.Popen(pytest_command(lesson), cwd=root, start_new_session=True)
    return subprocess.Popen(pytest_command(lesson), cwd=root, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)


def run_tests(root: Path, lesson: Lesson, warm: Warm | None = None) -> int:
    """Run the lesson's tests to their end; pytest's exit status. Never leaves them running."""
    child = start_tests(root, lesson, warm)
    try:
        return child.wait()
    finally:
        stop_tests(child)


class Warm:
    """This process, once it has imported what runs need: each run is a child forked from it."""

    def __init__(self, threads: int | None) -> None:
        self.threads = threads  # torch's, as a fresh process has it (the warm-up set one); None: not warm

    @property
    def ready(self) -> bool:
        return self.threads is not None

    @classmethod
    def start(cls) -> Warm:
        """Import what runs need, here and now; not warm where os.fork is missing or the imports fail."""
        if not hasattr(os, "fork"):
            return cls(None)
        try:
            return cls(forking.preload(grading=False))
        except Exception:  # noqa: BLE001 - only a speed-up: fresh processes will show what is wrong
            return cls(None)

    def fork(self, root: Path, args: list[str]) -> Forked:
        # A stop sent to the child before it has set its own handlers (a second `r` read at
        # once) waits until it has: the watcher's would raise KeyboardInterrupt in it.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        pid = os.fork()
        if pid:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            return Forked(pid)
        forking.end_child(lambda: self._run(root, args, mask))

    def _run(self, root: Path, args: list[str], mask) -> int:
        """In the child: `python -m pytest ARGS` from the kit's root, in a session of its own."""
        os.setsid()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)  # the watcher's turn them into Ctrl-C
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.chdir(root)
        import pytest
        import torch

        torch.set_num_threads(self.threads)
        return pytest.main([*args, *forking.PRELOADED])


class Forked:
    """A forked run, with what stop_tests needs of subprocess.Popen: pid, poll, wait."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None and self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        deadline = time.monotonic() + (timeout or 0)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pytest (pid {self.pid})", timeout)
            time.sleep(0.05)
        return self.returncode


def stop_tests(child: subprocess.Popen | Forked) -> None:
    """Stop the child's process group if it is still running (Ctrl-C, a save, a key) and reap
    it; then kill what is left of its group (a worker process that outlived it)."""
    if child.poll() is not None:
        return
    _signal_group(child, signal.SIGTERM)
    try:
        child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        _signal_group(child, getattr(signal, "SIGKILL", signal.SIGTERM))
        child.wait()
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):  # (none left: the usual case)
            os.killpg(child.pid, signal.SIGKILL)


def _signal_group(child: subprocess.Popen | Forked, signum: int) -> None:
    if os.name != "posix":
        child.terminate()
        return
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:  # it exited meanwhile, or (forked an instant ago) has no group of its own yet
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signum)
