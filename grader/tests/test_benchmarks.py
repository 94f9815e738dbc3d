"""The benchmark scripts' command lines (their figures are in docs/PERFORMANCE.md, not tested here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.tests.kits import ROOT


@pytest.mark.parametrize("script", ["feedback.py", "speed_reliability.py", "watch.py"])
def test_an_unknown_lesson_is_an_error_that_lists_the_lessons(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "99"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no lesson '99'; the lessons are: 01_basics" in done.stderr
