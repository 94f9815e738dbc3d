"""Run one pytest session in a subprocess and read its outcomes from the harness's JSON report.

Every tool that needs test results (verify, status, report) goes through `run_pytest`, so
outcomes are always read from the report (``--kata-report``), never parsed from terminal text,
and a lesson that hangs, crashes or cannot even be collected still yields a result.
"""

from __future__ import annotations

import json
import os
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

    exitstatus is None when pytest wrote no report (it was killed, or crashed before the end).
    tests: the harness's entries, {"nodeid", "outcome", "message", "points", "public", "speed"},
    outcome one of passed, failed, error, skipped, todo, broken, timeout.
    """

    exitstatus: int | None = None
    tests: list[dict] = field(default_factory=list)
    collect_errors: list[dict] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0

    def count(self, *outcomes: str) -> int:
        return sum(t["outcome"] in outcomes for t in self.tests)


def run_pytest(root: Path, args: list[str], *, timeout: float = RUN_TIMEOUT) -> PytestRun:
    """Run ``python -m pytest ARGS`` in `root` (quietly, no cache) and return its outcomes."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "kata", "PYTHONDONTWRITEBYTECODE": "1"}
    run = PytestRun()
    with tempfile.TemporaryDirectory(prefix="kata-run-") as tmp:
        report = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider", f"--kata-report={report}"]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
            run.output = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            run.output = f"pytest did not finish in {timeout:.0f} s"
        run.seconds = time.perf_counter() - start
        if report.is_file():
            data = json.loads(report.read_text(encoding="utf-8"))
            run.exitstatus = data["exitstatus"]
            run.tests = data["tests"]
            run.collect_errors = data["collect_errors"]
    return run
