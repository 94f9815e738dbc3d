"""Fixtures for the tooling's own tests."""

from __future__ import annotations

import pytest

# Imported before any test runs: pytester's tests put sys.modules back as it was after each test,
# so a torch first imported inside one of them would be dropped, and torch's C extension cannot
# be imported a second time in one process (whichever test imports it next fails).
import torch  # noqa: F401 (imported once, for the reason above)

from grader.tests.kits import QUICK_TESTS, ROOT, write_lesson


@pytest.fixture
def kit(pytester: pytest.Pytester) -> pytest.Pytester:
    """A kit with the real config and conftest and two demo lessons, 98_demo and 99_other."""
    for name in ("pyproject.toml", "conftest.py"):
        (pytester.path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    for tree in ("exercises", "solutions"):
        (pytester.path / tree).mkdir()
        (pytester.path / tree / "__init__.py").write_text("")
    write_lesson(pytester.path, "98_demo")
    write_lesson(pytester.path, "99_other")
    return pytester


@pytest.fixture
def quick_kit(kit: pytest.Pytester) -> pytest.Pytester:
    """The kit with the demo lessons' quick tests only (no torch import: a run takes ~1 s)."""
    for name in ("98_demo", "99_other"):
        (kit.path / "tests" / name / "test_demo.py").write_text(QUICK_TESTS, encoding="utf-8")
    return kit


# Hostile submissions are data for test_classgrade.py, not tests (one has a conftest.py of its own).
collect_ignore = ["hostile"]
