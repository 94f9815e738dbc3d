"""grader.authoring.exercises: the stubs are made from each lesson's one source."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.authoring.exercises import stale, stub_of
from grader.lessons import KitError, all_lessons, get_lesson
from grader.tests.kits import ROOT, SOLUTION, STUB


def test_the_demo_source_makes_the_demo_stub():
    assert stub_of(SOLUTION) == STUB


def test_a_region_in_a_method_becomes_the_raise_and_a_helper_region_goes():
    source = """\
import math


### BEGIN SOLUTION
def _helper(x):
    return x
### END SOLUTION


class Counter:
    def __init__(self, start):
        super().__init__()
        # TODO: keep start.
            ### BEGIN SOLUTION
        self.count = _helper(start)
        ### END SOLUTION

    def keep(self):
        return self.count
"""
    stub = stub_of(source)
    assert "_helper" not in stub and "self.count = " not in stub
    assert "import math\n\n\nclass Counter:" in stub  # the helpers' blank lines go with them
    assert (
        "        # TODO: keep start.\n            raise NotImplementedError\n\n    def keep" in stub
    )  # the marker's indent
    assert "        return self.count" in stub  # code outside a region stays


@pytest.mark.parametrize(
    "source, where",
    [
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "src.py:2: ### BEGIN SOLUTION is never closed"),
        ("def f():\n    return 1\n    ### END SOLUTION\n", "src.py:3: ### END SOLUTION without"),
        (
            "### BEGIN SOLUTION\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n",
            "src.py:2: ### BEGIN SOLUTION inside the region opened at line 1",
        ),
        ("def f():\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n", "src.py:2: an empty answer region"),
        ("x = 1  ### BEGIN SOLUTION\n", "src.py:1: a marker must stand alone"),
    ],
)
def test_a_malformed_region_is_named_by_file_and_line(source, where):
    with pytest.raises(KitError, match=where):
        stub_of(source, "src.py")


def test_every_lessons_stubs_are_what_its_source_makes():
    for lesson in all_lessons(ROOT):
        assert stale(lesson) == [], lesson.name


def test_kata_exercises_writes_stale_stubs_and_check_says_which(kit):
    stub = kit.path / "exercises/98_demo/demo.py"
    stub.write_text(STUB.replace("# TODO: multiply.", "# TODO: an old text."))
    check = [sys.executable, "-m", "grader", "exercises", "--check"]
    result = subprocess.run(check, cwd=kit.path, capture_output=True, text=True)
    assert result.returncode == 1
    assert "exercises/98_demo/demo.py is not what solutions/98_demo/demo.py makes" in result.stdout
    subprocess.run([sys.executable, "-m", "grader", "exercises", "98_demo"], cwd=kit.path, check=True)
    assert stub.read_text() == STUB
    assert stale(get_lesson(kit.path, "98_demo")) == []
