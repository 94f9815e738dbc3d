"""Measurements a test makes (speed ratios) that the plugin attaches to its result.

Kept apart from grader.testing so that the plugin can read them without importing torch.
"""

from __future__ import annotations

_measured: list[dict] = []


def record(**measurement) -> None:
    _measured.append(measurement)


def drain() -> list[dict]:
    """The measurements made since the last call (the plugin calls this after each test)."""
    out = list(_measured)
    _measured.clear()
    return out
