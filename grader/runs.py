"""Run one pytest session in a subprocess and read its outcomes from the harness's JSON report.

Every tool that needs test results (verify, status, report) goes through `run_pytest`, so
outcomes are always read from the report (``--kata-report``), never parsed from terminal text,
and a lesson that hangs, crashes or cannot even be collected still yields a result.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RUN_TIMEOUT = 900  # seconds for one pytest session; pytest-timeout bounds each test well before


@dataclass
class PytestRun:
    """What one pytest session left behind.

    exitstatus is None when the session did not end normally (it was killed, or the code under
    test ended the process); `tests` then holds the tests that finished before that.
    tests: the harness's entries, {"nodeid", "outcome", "message", "points", "public", "speed"},
    outcome one of passed, failed, error, skipped, todo, broken, timeout.
    collected: {"nodeid", "points", "public"} of every test the session meant to run.
    """

    exitstatus: int | None = None
    tests: list[dict] = field(default_factory=list)
    collect_errors: list[dict] = field(default_factory=list)
    collected: list[dict] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    returncode: int | None = None  # of the pytest process; negative: killed by that signal

    def count(self, *outcomes: str) -> int:
        return sum(t["outcome"] in outcomes for t in self.tests)


def run_pytest(root: Path, args: list[str], *, timeout: float = RUN_TIMEOUT) -> PytestRun:
    """Run ``python -m pytest ARGS`` in `root` (quietly, no cache) and return its outcomes.

    After `timeout` seconds pytest is interrupted (SIGINT, as Ctrl-C: it still writes what it
    ran), and killed with its whole process group if it has not stopped 10 s later.
    """
    env = {**os.environ, "HYPOTHESIS_PROFILE": "kata", "PYTHONDONTWRITEBYTECODE": "1"}
    run = PytestRun()
    with tempfile.TemporaryDirectory(prefix="kata-run-") as tmp:
        report = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider", f"--kata-report={report}"]
        start = time.perf_counter()
        with open(Path(tmp) / "output.txt", "w+", encoding="utf-8", errors="replace") as out:
            # A file, not a pipe: a process that floods its output cannot block on a full pipe.
            proc = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                run.returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                run.timed_out = True
                run.returncode = _stop(proc)
            finally:
                _kill_group(proc)  # stray children (DataLoader workers, a learner's own processes)
            out.seek(0)
            run.output = out.read()
        if run.timed_out:
            run.output += f"\npytest did not finish in {timeout:.0f} s and was stopped"
        run.seconds = time.perf_counter() - start
        if report.is_file():
            data = json.loads(report.read_text(encoding="utf-8"))
            run.exitstatus = data["exitstatus"]
            run.tests = data["tests"]
            run.collect_errors = data["collect_errors"]
            run.collected = data.get("collected", [])
    return run


def _stop(proc: subprocess.Popen, grace: float = 10.0) -> int:
    """Interrupt pytest as Ctrl-C would (it then reports what it ran), then kill it if it must."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGINT)
        else:  # Windows: no process groups or SIGINT for a child
            proc.kill()
        return proc.wait(timeout=grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        _kill_group(proc)
        return proc.wait()


def _kill_group(proc: subprocess.Popen) -> None:
    if not hasattr(os, "killpg"):
        if proc.poll() is None:
            proc.kill()
        return
    kill_group(proc.pid)


def kill_group(pid: int) -> None:
    """SIGKILL the process group a child leads (it was started in a session of its own), and the
    child itself, should it have left that group. POSIX only."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
