"""Measurements a test makes (speed ratios) that the harness attaches to its report.

Kept apart from grader.testing so that the harness can read them without importing torch.
"""

from __future__ import annotations

_measured: list[dict] = []


def record(**measurement) -> None:
    _measured.append(measurement)


def drain() -> list[dict]:
    """The measurements made since the last call (the harness calls this after each test)."""
    out = list(_measured)
    _measured.clear()
    return out
