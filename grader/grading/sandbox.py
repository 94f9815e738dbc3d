"""Run lessons' tests on untrusted code: a forked child per run, under limits the parent enforces.

Importing torch costs more than most lessons' tests (docs/PERFORMANCE.md). So the parent
imports torch, pytest, hypothesis and the kit's helpers once (`preload`), with torch at one
thread before any op (no OpenMP pool exists to be broken by fork), and forks a child per
(student, lesson) run, each keeping one CPU (`_pin`). The child (grader.grading.runner), before
it runs any pytest:

- starts a session of its own (its process group is killed as a whole when the run ends, so
  DataLoader workers and anything else it started go too; processes that escape the group are
  re-parented to the parent, a "child subreaper", which kills them);
- closes every inherited file descriptor but the results channel (grader.grading.pipe writes
  it, grader.grading.protocol says how) and sends its output to a log file; stdin is /dev/null;
- runs the job's sessions (grader.grading.sessions), each process that runs the student's code
  behind an OS boundary (grader.grading.isolation): namespaces of its own, in which it sees
  the system, Python and its grading copy read-only, a private /tmp and HOME, and nothing of
  the class, the results, the kit's answers or the other runs; no network; its processes all
  end with it (not with --trusted, which grades without it);
- and each takes resource limits (grader.grading.confinement): CPU seconds, address space
  (RLIMIT_AS: what the preloaded parent has plus the budget), the size of any file it writes,
  no core files; a minimal environment (HOME and TMPDIR in the run's own folder), the grading
  copy as its working directory, and a sys.path with none of the kit's folders (`import
  solutions` fails).

The parent reads the channel as the child writes it, stops a run at its wall-clock limit
(SIGKILL to the group), and hands what it saw on as a grader.results.RunResult: only tests the
channel reported count, so a run that hangs, crashes, exits early or runs out of memory keeps
what passed before, and `ended` says why the rest did not run.
"""

from __future__ import annotations

import os
import selectors
import signal
import stat
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from grader import forking, signals
from grader.grading import cgroup
from grader.grading.job import Job, Limits  # (kata verify and kata status make their runs with these names from here)
from grader.grading.protocol import Reader
from grader.remote import shared
from grader.results import RunResult
from grader.runs import kill_group

DRAIN_SECONDS = 2.0  # how long to read the channel after the child ended


def why_ended(run: RunResult, limits: Limits, out_of_memory: bool = False) -> str | None:
    """Why the run did not finish normally, in words, or None when it did. Under --remote, the
    run's tests finish in the tests' process, and what ends the code process ends only its
    answers: the run then ended as that process did (`code_returncode`). `out_of_memory`: its
    cgroup says the kernel killed a process of it for memory."""
    returncode = run.code_returncode if run.code_returncode is not None else run.returncode
    signum = -returncode if returncode is not None and returncode < 0 else None
    if run.stopped:
        return f"stopped after {limits.wall:g} s, the time limit for a lesson (something loops or waits)"
    if run.code_overran:
        return "stopped: a call of its code ran past its time limit with the alarm that ends it switched off or blocked"
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and run.cpu_seconds >= limits.cpu):
        return f"used up its {limits.cpu:g} s of CPU time and was stopped"
    if signum == signal.SIGXFSZ:
        return f"wrote more than {limits.file_size >> 20} MiB to one file (printed too much?) and was stopped"
    if run.exitstatus is not None and run.code_returncode is None:
        return None
    if signum is not None:
        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        why = (
            " (out of memory: its processes together reached the run's limit)"
            if out_of_memory
            else " (out of memory?)"
            if signum == signal.SIGKILL
            else ""
        )
        return f"crashed: killed by {name}{why}"
    if run.collected is None:
        return f"ended (exit status {returncode}) before its tests were collected"
    return (
        f"ended (exit status {returncode}) before its tests finished: "
        "the code under test called os._exit, sys.exit or the like"
    )


def preload() -> None:
    """Import what every run needs, once, in the parent, in the environment runs are graded in.
    Ctrl-C meanwhile ends the process at once, as grader.cli ends an interrupted command (a new
    line, exit 130): call this before making anything that would need cleaning up."""
    with signals.ending_at_once(lambda: print(file=sys.stderr, flush=True), 130):
        forking.preload(grading=True)
    # What a run's process runs: its sessions, the pipe, the code process's server (pytest, torch).
    import grader.grading.runner  # noqa: F401 (imported ahead, for every forked run)


def run_jobs(jobs: Iterable[Job], *, parallel: int, limits: Limits, on_done: Callable[[Job, RunResult], None]) -> None:
    """Run `jobs` (a lazy iterable is fine), `parallel` at a time; call on_done(job, run) as each
    ends, `run` holding what its channel reported and how its process ended (`ended`: why it
    did not finish normally, None when it did).

    If this is interrupted (Ctrl-C), every run still going is killed before the exception goes on.
    """
    _become_subreaper()
    pending = iter(jobs)
    running: dict[int, _Run] = {}
    cpus = _cpus()
    selector = selectors.DefaultSelector()
    # A child's exit wakes the loop at once (SIGCHLD writes to this pipe), not at the next poll.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    selector.register(wake_read, selectors.EVENT_READ, None)
    previous_fd = signal.set_wakeup_fd(wake_write)
    previous_handler = signal.signal(signal.SIGCHLD, _on_child)
    try:
        while True:
            while len(running) < parallel and (job := next(pending, None)) is not None:
                taken = [r.cpu for r in running.values()]
                run = _Run.start(job, limits, _pin(cpus, taken))
                running[run.pid] = run
                selector.register(run.fd, selectors.EVENT_READ, run)
            if not running:
                return
            for key, _ in selector.select(timeout=0.5):
                if key.data is None:
                    _drain(wake_read)
                elif not key.data.read():  # end of file: every writer has gone
                    selector.unregister(key.fd)
                    key.data.close()
            _reap(running)
            now = time.monotonic()
            for run in list(running.values()):
                if run.status is None and now > run.deadline:
                    run.stopped = True
                    kill_group(run.pid)
                elif run.status is not None and (run.eof or now > run.drain_until):
                    if not run.eof:
                        selector.unregister(run.fd)
                        run.close()
                    del running[run.pid]
                    _kill_orphans(set(running))
                    on_done(run.job, run.finish(limits))
    finally:
        signal.signal(signal.SIGCHLD, previous_handler)
        signal.set_wakeup_fd(previous_fd)
        for run in running.values():
            kill_group(run.pid)
        for run in running.values():
            try:
                os.waitpid(run.pid, 0)
            except ChildProcessError:
                pass
            run.close()
            cgroup.remove(run.cgroup)
        selector.close()
        os.close(wake_read)
        os.close(wake_write)


def _cpus() -> list[int]:
    """The CPUs this process may run on, or none where the system cannot say (not Linux)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


def _pin(cpus: list[int], taken: list[int | None]) -> int | None:
    """The CPU a new run keeps, all of its processes (seccomp keeps those behind the boundary
    from leaving it): one no run in progress has, else the least shared. With --jobs at most
    the number of CPUs, a run that makes threads or processes to hog the machine slows only
    itself. None where there is a single CPU, or none known."""
    if len(cpus) < 2:
        return None
    return min(cpus, key=lambda cpu: (sum(t == cpu for t in taken), cpu))


def _on_child(signum, frame) -> None:
    """SIGCHLD's handler: nothing to do; the signal's byte on the wake-up pipe is the point."""


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


class _Run:
    """One child as the parent sees it: its channel's reader, its deadline, how it ended."""

    def __init__(self, job: Job, pid: int, fd: int, limits: Limits, cpu: int | None = None) -> None:
        self.job, self.pid, self.fd = job, pid, fd
        self.cgroup = limits.cgroup  # removed once it ended (`finish`)
        self.cpu = cpu  # the one its processes keep (`_pin`)
        self.reader = Reader()
        self.stopped = False  # at the wall-clock limit, by the parent
        self.returncode: int | None = None
        self.cpu_seconds = self.max_rss_mib = self.seconds = 0.0
        self.started = time.monotonic()
        self.deadline = self.started + limits.wall
        self.drain_until = float("inf")
        self.status: int | None = None  # from wait4, once the child has ended
        self.eof = False
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.fd)

    @classmethod
    def start(cls, job: Job, limits: Limits, cpu: int | None = None) -> "_Run":
        job.home.mkdir(parents=True, exist_ok=True)
        (job.home / "tmp").mkdir(exist_ok=True)
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        if limits.cgroups is not None:  # the run's code processes, bounded together (and the shared memory)
            limits = replace(
                limits,
                cgroup=limits.cgroups.make(
                    f"kata-{os.getpid()}-{time.monotonic_ns()}", limits.memory + shared.SIZE, limits.processes
                ),
            )
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            from grader.grading.runner import run_child  # (imported by `preload`: nothing to pay here)

            run_child(job, limits, write_fd, cpu)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        return cls(job, pid, read_fd, limits, cpu)

    def read(self) -> bool:
        """Take what the channel has; False at end of file."""
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return True
        if not data:
            self.eof = True
            return False
        self.reader.take(data)
        return True

    def ended(self, status: int, rusage) -> None:
        self.status = status
        self.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_seconds = rusage.ru_utime + rusage.ru_stime
        self.max_rss_mib = rusage.ru_maxrss / 1024
        self.seconds = time.monotonic() - self.started
        kill_group(self.pid)  # whatever it started goes with it; then the channel reaches its end
        self.drain_until = time.monotonic() + DRAIN_SECONDS

    def finish(self, limits: Limits) -> RunResult:
        run = self.reader.result()
        run.returncode, run.stopped, run.seconds = self.returncode, self.stopped, self.seconds
        run.cpu_seconds, run.max_rss_mib = self.cpu_seconds, self.max_rss_mib
        run.output = read_cut(self.job.home / "output.txt", limits.output)
        run.ended = why_ended(run, limits, cgroup.ran_out(self.cgroup))
        cgroup.remove(self.cgroup)
        return run


def _reap(running: dict[int, _Run]) -> None:
    """Collect every child that has ended (ours, or orphans re-parented to us)."""
    while True:
        try:
            pid, status, rusage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in running:
            running[pid].ended(status, rusage)


def _become_subreaper() -> None:
    """Orphaned descendants (a daemon a student's code started) become our children, to be killed."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass


def _kill_orphans(keep: set[int]) -> None:
    """Kill our children that are not runs in progress: processes that escaped a run's group."""
    me = os.getpid()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        pid = int(entry.name)
        if ppid == me and pid not in keep:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def read_cut(path: Path, limit: int) -> str:
    """The file's text, its middle cut out (with a note) when it is longer than `limit` bytes."""
    try:  # a regular file, not a link or a FIFO put in its place (--trusted runs can write there)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return ""
        size = os.fstat(fd).st_size
        with os.fdopen(fd, "rb") as f:
            if size <= limit:
                data = f.read()
            else:
                head = f.read(limit // 2)
                f.seek(size - limit // 2)
                data = head + f"\n[... {size - limit} bytes of output cut ...]\n".encode() + f.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")
