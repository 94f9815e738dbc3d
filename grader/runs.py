"""One pytest session of a lesson's tests in a subprocess, its results read back as a RunResult.

Every tool that runs tests in a fresh process (status, report, the notebook grade cells, verify
where the system cannot fork) goes through `run_pytest`, so results always come from the
plugin's own report (``--kata-report``), never from terminal text, and a lesson that hangs,
crashes or cannot even be collected still yields a result. `pytest_args` is how every run of
the kit calls pytest, forked or not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.results import RunResult

RUN_TIMEOUT = 900  # seconds for one pytest session; pytest-timeout bounds each test well before


def pytest_args(*args: str) -> list[str]:
    """pytest's arguments for a kit run: `args`, quiet, and no cache written into the kit."""
    return [*args, "-q", "-p", "no:cacheprovider"]


def run_pytest(root: Path, args: list[str], *, timeout: float = RUN_TIMEOUT) -> RunResult:
    """Run ``python -m pytest ARGS`` in `root` (as `pytest_args` has it) and return its results.

    After `timeout` seconds pytest is interrupted (SIGINT, as Ctrl-C: it still writes what it
    ran), and killed with its whole process group if it has not stopped 10 s later.
    """
    env = {**os.environ, "HYPOTHESIS_PROFILE": "kata", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory(prefix="kata-run-") as tmp:
        report = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "pytest", *pytest_args(*args, f"--kata-report={report}")]
        start = time.perf_counter()
        stopped = False
        with open(Path(tmp) / "output.txt", "w+", encoding="utf-8", errors="replace") as out:
            # A file, not a pipe: a process that floods its output cannot block on a full pipe.
            proc = subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                stopped = True
                returncode = _stop(proc)
            finally:
                _kill_group(proc)  # stray children (DataLoader workers, a learner's own processes)
            out.seek(0)
            output = out.read()
        if stopped:
            output += f"\npytest did not finish in {timeout:.0f} s and was stopped"
        run = RunResult.from_json(json.loads(report.read_text(encoding="utf-8"))) if report.is_file() else RunResult()
    run.returncode, run.stopped, run.output, run.seconds = returncode, stopped, output, time.perf_counter() - start
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
