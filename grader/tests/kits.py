"""A tiny kit built in a temporary folder: the real pyproject.toml and conftest.py, and demo
lessons whose tests take well under a second. Shared by every test of the tooling."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STUB = '''\
"""A demo lesson."""


def add(a, b):
    """Return a + b."""
    # TODO: add the two numbers.
    raise NotImplementedError


def scale(x, k=2):
    """Return x * k."""
    # TODO: multiply.
    raise NotImplementedError
'''

SOLUTION = '''\
"""A demo lesson."""


def add(a, b):
    """Return a + b."""
    # TODO: add the two numbers.
    ### BEGIN SOLUTION
    return a + b
    ### END SOLUTION


def scale(x, k=2):
    """Return x * k."""
    # TODO: multiply.
    ### BEGIN SOLUTION
    return x * k
    ### END SOLUTION
'''  # the lesson's one source: STUB is what `kata exercises` makes of it

TESTS = """\
import pytest


@pytest.mark.public
def test_add(lesson):
    assert lesson.add(2, 3) == 5


@pytest.mark.public
def test_add_negative(lesson):
    assert lesson.add(-2, 3) == 1


@pytest.mark.points(2)
def test_scale(lesson):
    assert lesson.scale(3) == 6
    assert lesson.scale(3, k=3) == 9


@pytest.mark.speed
def test_scale_speed(lesson):
    from grader.testing import assert_speed

    assert_speed(lambda: sum(range(20000)), lambda: lesson.scale(3), at_least=1.0,
                 what="scale(3)", baseline_name="sum(range(20000))")
"""

HINTS = "# Hints\n\n## Level 1\nThink.\n\n## Level 2\nUse `+`.\n\n## Level 3\nReturn the sum.\n"


def write_lesson(root: Path, name: str, stub=STUB, solution=SOLUTION, tests=TESTS, stem="demo") -> None:
    files = {
        f"exercises/{name}/{stem}.py": stub,
        f"solutions/{name}/{stem}.py": solution,
        f"tests/{name}/test_{stem}.py": tests,
        f"tests/{name}/hints.md": HINTS,
        f"tests/{name}/mutants/add_subtracts.py": '"""Subtracts instead of adding."""\n\n\ndef add(a, b):\n    return a - b\n',
        f"exercises/{name}/__init__.py": "",
        f"solutions/{name}/__init__.py": "",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# The demo tests without the speed test (which imports torch: ~5 s a run): 3 tests, 2 public.
QUICK_TESTS = TESTS[: TESTS.index("@pytest.mark.speed")].rstrip() + "\n"
