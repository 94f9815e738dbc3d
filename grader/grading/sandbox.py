"""Run a lesson's tests on untrusted code: a forked child per run, under limits the parent enforces.

Importing torch costs more than most lessons' tests (docs/PERFORMANCE.md). So the parent
imports torch, pytest, hypothesis and the kit's helpers once (`preload`), with torch at one
thread before any op (no OpenMP pool exists to be broken by fork), and forks a child per
(student, lesson) run.
The child, before it runs any pytest:

- starts a session of its own (its process group is killed as a whole when the run ends, so
  DataLoader workers and anything else it started go too; processes that escape the group are
  re-parented to the parent, a "child subreaper", which kills them);
- closes every inherited file descriptor but the results channel (grader.grading.pipe writes
  it, grader.grading.protocol says how) and sends its output to a log file; stdin is /dev/null;
- goes behind an OS boundary (grader.grading.isolation): namespaces of its own, in which it
  sees the system, Python and its grading copy read-only, a private /tmp and HOME, and nothing
  of the class, the results, the kit's answers or the other runs; no network; its processes
  all end with it (not with --trusted, which grades without it);
- takes resource limits: CPU seconds, address space (RLIMIT_AS: what the preloaded parent has
  plus the budget), the size of any file it writes, no core files;
- gets a minimal environment (HOME and TMPDIR in the run's own folder), the grading copy as its
  working directory, and a sys.path with none of the kit's folders (`import solutions` fails).

The parent reads the channel as the child writes it, stops a run at its wall-clock limit
(SIGKILL to the group), and hands what it saw on as a grader.results.RunResult: only tests the
channel reported count, so a run that hangs, crashes, exits early or runs out of memory keeps
what passed before, and `ended` says why the rest did not run.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import signal
import stat
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from grader import forking, signals
from grader.grading import cgroup, seccomp
from grader.grading.isolation import Unavailable, View, enter
from grader.grading.protocol import Reader
from grader.remote import shared
from grader.results import Failure, Kind, Outcome, RunResult, TestInfo, TestResult
from grader.runs import RUN_TIMEOUT, kill_group

if TYPE_CHECKING:  # (annotations only)
    from grader.plugin.hooks import CodeProcessEnd
    from grader.running import TestNotes

DRAIN_SECONDS = 2.0  # how long to read the channel after the child ended


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
MEMORY_SHARED = (f"memory: the limit is each process's; where the code may make processes (a DataLoader's "
                 f"workers), at most {WORKER_TASKS} processes and threads, each with 1/{WORKER_TASKS} of it")


def memory_note(limits: Limits) -> str:
    """How a run's memory is limited, for summary.txt."""
    if limits.cgroups is None:
        return MEMORY_SHARED + "; no cgroup: tmpfs and memfd pages do not count"
    return (f"memory: each run's code processes together, by {limits.cgroups.describe()}; and each process's, "
            f"where the code may make processes at most {WORKER_TASKS}, each with 1/{WORKER_TASKS} of it")


@dataclass
class Job:
    name: str  # "alice/07_stable": how messages name it
    workdir: Path  # the grading copy, the run's working directory
    args: list[str]  # pytest's arguments
    home: Path  # the run's own folder: HOME, TMPDIR and the log live here
    tag: object = None  # the caller's
    view: View | None = None  # what the run sees behind the namespaces; None: no boundary (--trusted)
    # The kit whose tests, checks included, run outside the boundary, the code under test behind
    # it (grader.remote); None: all of the run behind it.
    remote: Path | None = None
    # Under `remote`, the tests that may run again in the code's own process when they cannot
    # run with it in another (None: any such test).
    fallback: frozenset[str] | None = frozenset()
    # Under `remote`, the tests that run with their checks apart against a code process of their
    # own that may make processes (a DataLoader's workers), where nothing is timed or recorded.
    processes: frozenset[str] = frozenset()
    # Under `remote`, the protocol's cost of a timed call (seconds of S's CPU: on one input, for
    # each more), measured already on a code process that held the kit's answer; None: measured
    # in this run, before the code under test is loaded, and reported.
    overhead: tuple[float, float] | None = None
    # The lesson's tests (its stub's run collected them) and the learner's files they import,
    # relative to `workdir`: where one of these does not compile, no test can import it, and
    # each test is reported so at once, with the message the tests give, none of them run.
    expected: tuple[TestInfo, ...] = ()
    imports: tuple[str, ...] = ()
    # Whether the run's tamper checks run (grader.grading.guard): not for code that is the
    # learner's own, on their own machine (``kata status``), where they cost a third of a run.
    guarded: bool = True


def why_ended(run: RunResult, limits: Limits, out_of_memory: bool = False) -> str | None:
    """Why the run did not finish normally, in words, or None when it did. Under --remote, the
    run's tests finish in their own process, and what ends the code's process ends only its
    answers: the run then ended as that process did (`code_returncode`). `out_of_memory`: its
    cgroup says the kernel killed a process of it for memory."""
    returncode = run.code_returncode if run.code_returncode is not None else run.returncode
    signum = -returncode if returncode is not None and returncode < 0 else None
    if run.stopped:
        return f"stopped after {limits.wall:g} s, the time limit for a lesson (something loops or waits)"
    if run.code_overran:
        return ("stopped: a call of its code ran past its time limit with the alarm that ends it switched off "
                "or blocked")
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and run.cpu_seconds >= limits.cpu):
        return f"used up its {limits.cpu:g} s of CPU time and was stopped"
    if signum == signal.SIGXFSZ:
        return f"wrote more than {limits.file_size >> 20} MiB to one file (printed too much?) and was stopped"
    if run.exitstatus is not None and run.code_returncode is None:
        return None
    if signum is not None:
        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        why = (" (out of memory: its processes together reached the run's limit)" if out_of_memory
               else " (out of memory?)" if signum == signal.SIGKILL else "")
        return f"crashed: killed by {name}{why}"
    if run.collected is None:
        return f"ended (exit status {returncode}) before its tests were collected"
    return (f"ended (exit status {returncode}) before its tests finished: "
            "the code under test called os._exit, sys.exit or the like")


# --- the parent -----------------------------------------------------------------------------


def preload() -> None:
    """Import what every run needs, once, in the parent, in the environment runs are graded in.
    Ctrl-C meanwhile ends the process at once, as grader.cli ends an interrupted command (a new
    line, exit 130): call this before making anything that would need cleaning up."""
    with signals.ending_at_once(lambda: print(file=sys.stderr, flush=True), 130):
        forking.preload(grading=True)
    import grader.grading.pipe  # noqa: F401
    import grader.remote.server  # noqa: F401  (what a run behind the boundary serves calls with, under --remote)


def run_jobs(jobs: Iterable[Job], *, parallel: int, limits: Limits,
             on_done: Callable[[Job, RunResult], None]) -> None:
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
            limits = replace(limits, cgroup=limits.cgroups.make(f"kata-{os.getpid()}-{time.monotonic_ns()}",
                                                                limits.memory + shared.SIZE, limits.processes))
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _child(job, limits, write_fd, cpu)
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


# --- the child ------------------------------------------------------------------------------


def _child(job: Job, limits: Limits, channel_fd: int, cpu: int | None = None) -> None:
    """Set up the run's process and run pytest in it. Ends the process; never returns."""
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
    if job.remote is not None:
        return _tests_here_code_there(job, limits, channel_fd)
    if not _behind_boundary(job, limits):
        return 71
    _environment(job)
    from grader.grading import pipe

    return _pytest(job, limits, pipe.PipeWriter(channel_fd, guarded=job.guarded))


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
    from grader.grading import pipe
    from grader.plugin.target import Target

    message, where = Target(root=job.workdir.resolve(), tree="exercises").describe_import_error(error, path)
    failure = Failure(Kind.BROKEN, "NotImportable", message, where)
    print(f"{message}\nNo test ran: every test imports {path.name}.", flush=True)
    writer = pipe.PipeWriter(channel_fd, guarded=False)
    writer.announce(list(job.expected))
    writer.send([TestResult(t.nodeid, Outcome.BROKEN, t.max_points, t.public, message, failure) for t in job.expected], [])
    writer.exitstatus = 1  # pytest's: tests failed
    writer.finish()
    return 1


def _tests_here_code_there(job: Job, limits: Limits, channel_fd: int) -> int:
    """The tests, with their checks and the results channel, in this process, outside the
    boundary; the code under test in a child behind it (grader.remote.server), answering over a
    socket, its timed calls' tensors in memory the two share. It sees none of this process.

    The tests whose code needs processes (`job.processes`) run afterwards the same way, in
    another child, against a code process of their own that may make them. The tests that
    cannot run so at all (`job.fallback` names those allowed) run in a third, in-process with
    the code, behind the boundary. Both are forked first, from the state every run starts
    from, and wait for the names of their tests."""
    # (none in-process where the lesson names no test allowed to fall back: nothing would be held for it)
    inside = _waiting(lambda ask, answer: _run_inside(job, limits, ask, answer), channel_fd) \
        if job.fallback is None or job.fallback else None
    apart = _waiting(lambda ask, answer: _run_apart(job, limits, ask, answer), channel_fd, *(inside or ())[1:]) \
        if job.processes else None
    held_open = [fd for child in (inside, apart) if child for fd in child[1:]]
    connection, code = _code_there(job, limits, processes=False, keep_from_code=[channel_fd, *held_open])
    # The run's limits on memory and CPU hold here too, each process its own budget: what S sends
    # is data, but data can ask for memory (a result expanded to any size, copied by a check) or
    # time. Not the limit on a file's size: the log this process writes to is the one S fills.
    _set_limits(limits, file_size=False)
    _environment(job)
    from grader.grading import pipe

    # Held back, to be run in the others: the lesson's tests that cannot run remotely (skipped
    # here), or, where none are named (the kit's own answer's run), any that turned out so.
    deferred = (job.fallback or frozenset()) | job.processes
    writer = pipe.PipeWriter(channel_fd, hold=(lambda result, notes: result.nodeid in deferred) if job.fallback is not None
                             else _cannot_run_remotely, guarded=False)
    # The connection's descriptor is the plugin's from here: it closes it at the session's end, and S ends.
    overhead = ["--kata-overhead", "{:.9f}:{:.9f}".format(*job.overhead)] if job.overhead else []
    status = _pytest(job, limits, writer, "--kata-remote-fd", connection, "--kata-reference", str(job.remote),
                     *overhead, plugins=[_Defer(deferred)])
    ended = writer.code_process  # as the plugin told it (grader.plugin.hooks.pytest_kata_code_process_ended)
    if job.overhead is None and ended.overhead is not None:
        writer.overhead(*ended.overhead)
    if apart is not None:
        writer.send(*_checked_by(apart, [r for r in writer.held if r.nodeid in job.processes], inside=False))
    if inside is not None:
        writer.send(*_checked_by(inside, [r for r in writer.held if r.nodeid not in job.processes], inside=True))
    if (returncode := _how_the_code_ended(code, ended)) is not None:
        writer.code_ended(returncode, overran=ended.overran)
    writer.finish()
    return status


def _waiting(run, *close: int) -> tuple[int, int, int]:
    """A child forked now that waits for the names of the tests it is to run, runs them with
    `run(ask, answer)` and writes their results to `answer`: (its pid, the end to ask it on,
    the end to read its results from). `close`: descriptors of this process it must not hold."""
    ask_read, ask_write = os.pipe()  # this process -> the child: the tests to run
    answer_read, answer_write = os.pipe()  # the child's results channel
    child = os.fork()
    if child == 0:
        for fd in (ask_write, answer_read, *close):
            os.close(fd)
        forking.end_child(lambda: run(ask_read, answer_write))
    os.close(ask_read)
    os.close(answer_write)
    return child, ask_write, answer_read


def _code_there(job: Job, limits: Limits, processes: bool, keep_from_code: list[int]) -> tuple[str, int]:
    """S, the code's process, forked behind the boundary (`processes`: allowed to make them):
    the plugin's --kata-remote-fd for it, and its pid. `keep_from_code`: descriptors it must not hold."""
    import socket

    from grader.remote import shared

    here, there = socket.socketpair()
    memory = shared.create()
    code = os.fork()
    if code == 0:
        for fd in (*keep_from_code, here.detach()):
            os.close(fd)
        forking.end_child(lambda: _serve(job, limits, there, memory, processes))
    there.close()
    return f"{here.detach()}:{memory}:{code}" + (":processes" if processes else ""), code


def _how_the_code_ended(code: int, ended: CodeProcessEnd) -> int | None:
    """How the code's process ended (an exit status, or minus the signal), where it closed its
    end of the connection while its tests still called it, or this process stopped it; None
    where it did not, or lives on."""
    if not (ended.gone or ended.overran):
        return None
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        pid, status = os.waitpid(code, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    return None


def _cannot_run_remotely(result: TestResult, notes: TestNotes) -> bool:
    """Whether a test used something of the code that cannot cross, as this process's client
    noted (grader.remote.errors.Unremotable: S cannot raise it here, its errors cross as
    built-in types only), whatever the test made of it."""
    return notes.unremotable


def _checked_by(child: tuple[int, int, int], held: list[TestResult], inside: bool) -> tuple[list[TestResult], list[str]]:
    """The `held` tests' results from a waiting `child` (`_waiting`), read as the parent reads
    a run's (grader.grading.protocol: it trusts nothing), each marked `inside` where the child
    ran them in the student's process; a test that did not report keeps its held result. And
    what it tampered with."""
    pid, ask, answer = child
    with os.fdopen(ask, "w") as names:
        json.dump([r.nodeid for r in held], names)
    reader = Reader()
    while data := os.read(answer, 1 << 16):  # to its end: when the run's last process has gone
        reader.take(data)
    os.close(answer)
    os.waitpid(pid, 0)
    if not held:
        return [], []
    run = reader.result()
    done = run.by_id()
    where = "in the student's process" if inside else "with the code in a process that may make processes"
    why = f"the run {where} {run.ended or 'ended before it reported'}"
    results = [replace(done.get(r.nodeid) or replace(r, outcome=Outcome.ERROR, message=why, failure=None),
                       max_points=r.max_points, public=r.public, inside=inside) for r in held]
    return results, [f"in the student's process: {problem}" for problem in run.tampering] if inside else []


def _run_apart(job: Job, limits: Limits, ask: int, channel_fd: int) -> int:
    """The tests named on `ask`, outside the boundary, against a code process behind it that
    may make processes: the tests' process times and records nothing there (grader.remote.timed,
    grader.remote.call_context)."""
    with os.fdopen(ask) as names:
        nodeids = set(json.load(names))
    if not nodeids:
        return 0
    connection, _ = _code_there(job, limits, processes=True, keep_from_code=[channel_fd])
    _set_limits(limits, file_size=False)
    _environment(job)
    from grader.grading import pipe

    return _pytest(job, limits, pipe.PipeWriter(channel_fd, guarded=False), "--kata-remote-fd", connection,
                   "--kata-reference", str(job.remote), plugins=[_Only(nodeids)])


def _run_inside(job: Job, limits: Limits, ask: int, channel_fd: int) -> int:
    with os.fdopen(ask) as names:
        nodeids = set(json.load(names))
    if not nodeids:
        return 0
    if not _behind_boundary(job, limits):
        return 71
    _environment(job)
    from grader.grading import pipe

    return _pytest(job, limits, pipe.PipeWriter(channel_fd), plugins=[_Only(nodeids)])


class _Defer:
    """A pytest plugin: the tests of `nodeids` are skipped here, to run in the fallback."""

    def __init__(self, nodeids: frozenset[str]) -> None:
        self.nodeids = nodeids

    def pytest_collection_modifyitems(self, config, items) -> None:
        import pytest

        for item in items:
            if item.nodeid in self.nodeids:
                item.add_marker(pytest.mark.skip(reason="runs in a session of its own: its code needs processes, or "
                                                        "cannot be called from another process"))


class _Only:
    """A pytest plugin: only the tests of `nodeids` run; the rest are deselected."""

    def __init__(self, nodeids: set[str]) -> None:
        self.nodeids = nodeids

    def pytest_collection_modifyitems(self, config, items) -> None:
        deselected = [item for item in items if item.nodeid not in self.nodeids]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = [item for item in items if item.nodeid in self.nodeids]


def _serve(job: Job, limits: Limits, there, memory: int, processes: bool) -> int:
    # The code's process sees no test file and no hint: the scenarios it runs come as source
    # from the tests' process (grader.testing.scenario.source_of).
    view = job.view and replace(job.view, hidden=(*job.view.hidden, job.view.copy / "tests"))
    if processes:  # its processes share the run's memory: each gets its part (no cgroup counts them together)
        view = view and replace(view, processes=min(view.processes, WORKER_TASKS))
        # (and the memory S shares with the tests' process, which S maps once and children inherit)
        limits = replace(limits, memory=limits.memory // WORKER_TASKS + shared.SIZE)
    if not _behind_boundary(job, limits, view):
        return 71
    try:  # its CPU time, and its ops, must all be its own processes' (grader.grading.seccomp)
        if not processes:  # (else nothing is timed or recorded there: it keeps only its CPU)
            seccomp.no_processes()
    except Unavailable as error:
        if job.view is not None:  # (--trusted: no boundary was asked for)
            print(f"kata grade: the code's process could not be kept from making processes: {error}",
                  file=sys.stderr, flush=True)
            return 71
    _environment(job)
    from grader.remote.server import Server

    Server(there, memory).serve()
    return 0


def _behind_boundary(job: Job, limits: Limits, view: View | None = None) -> bool:
    """Enter the run's namespaces (unless --trusted), seeing `view` (the job's, by default),
    and take its limits; False, said on the log, when the namespaces could not be made."""
    view = view or job.view
    if view is not None:
        try:  # (before the namespaces: a process in a user namespace of its own can no longer move itself)
            cgroup.enter(limits.cgroup)
        except OSError as error:
            print(f"kata grade: the run's cgroup could not be entered: {error}", file=sys.stderr, flush=True)
            return False
        try:
            enter(view)  # from here on, the run's own namespaces: pid 2, no capabilities
        except Unavailable as error:
            print(f"kata grade: the run's namespaces could not be made: {error}", file=sys.stderr, flush=True)
            return False
        try:  # the run's CPU, kept (`_pin`): whatever it starts slows only itself
            seccomp.pinned()
        except Unavailable:
            pass  # (no filter for this machine: it keeps its CPU unless it asks for others)
    _set_limits(limits)
    return True


def _environment(job: Job) -> None:
    """A minimal environment, the grading copy as the working directory, none of the kit's
    folders on sys.path (`import solutions` fails)."""
    home = str(job.home)
    os.environ.clear()
    os.environ.update({
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": os.path.join(home, "tmp"),
        "LANG": "C.UTF-8", "HYPOTHESIS_PROFILE": "grading", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        # Scanning every installed package for pytest plugins costs time in every run: name the two needed.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    })
    import tempfile

    import hypothesis.configuration

    tempfile.tempdir = None  # found again from TMPDIR
    # Hypothesis keeps a cache of the constants in the sources it reads: in the run's own home,
    # not in the grader's working folder, which it picked when the parent imported it.
    hypothesis.configuration.set_hypothesis_home_dir(os.path.join(home, ".hypothesis"))
    os.chdir(job.workdir)
    kit = Path(__file__).resolve().parents[2]
    sys.path[:] = [str(job.workdir)] + [p for p in sys.path if p and Path(p).resolve() != kit]
    sys.path_importer_cache.clear()
    sys.dont_write_bytecode = True


def _pytest(job: Job, limits: Limits, writer, *extra: str, plugins: list = ()) -> int:
    import pytest

    timeout = [f"--timeout={limits.test_timeout:g}"] if limits.test_timeout else []
    return pytest.main([*job.args, *timeout, *extra, *forking.PRELOADED], plugins=[writer, *plugins])


def _set_limits(limits: Limits, file_size: bool = True) -> None:
    cpu = max(1, int(limits.cpu))
    wanted = [(resource.RLIMIT_CPU, (cpu, cpu + 2)), (resource.RLIMIT_CORE, (0, 0))]
    if file_size:
        wanted.append((resource.RLIMIT_FSIZE, (limits.file_size,) * 2))
    try:  # the budget comes on top of what the preloaded parent already maps (torch, above all)
        with open("/proc/self/statm") as f:
            address_space = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        wanted.append((resource.RLIMIT_AS, (address_space + limits.memory,) * 2))
    except (OSError, ValueError):
        pass
    for which, value in wanted:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass  # a limit the system does not let us set: the parent's wall clock still holds
