"""grader.notebooks.build: a lesson as an nbgrader source notebook, checked without running a kernel."""

from __future__ import annotations

import pytest

from grader.lessons import KitError, all_lessons
from grader.notebooks.build import BEGIN, BEGIN_HIDDEN, END, Points, clear_solutions, lesson_notebook, split_module
from grader.tests.kits import ROOT

HEAD = '''\
"""Lesson 99: a demo.

Some text.

Check your work with:  pytest exercises/99_demo
"""

import math

LIMIT = 3


'''

STUB = HEAD + '''\
class Counter:
    """Counts."""

    def __init__(self, start: int) -> None:
        super().__init__()
        # TODO: keep start.
        raise NotImplementedError

    def tick(self) -> int:
        """One more."""
        # TODO: count.
        raise NotImplementedError


def root(x: float) -> float:
    """The square root of x."""
    # TODO: math.sqrt.
    raise NotImplementedError
'''

ANSWER = HEAD + '''\
class Counter:
    """Counts."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.count = start

    def tick(self) -> int:
        """One more."""
        self.count += 1
        return self.count


def _check(x: float) -> None:
    """Refuse negative numbers."""
    if x < 0:
        raise ValueError(x)


def root(x: float) -> float:
    """The square root of x."""
    # The checked value, then the root.
    _check(x)
    return math.sqrt(x)


def _unused():
    return LIMIT
'''


def test_cells_keep_the_stubs_text_and_put_the_answer_in_regions():
    cells = split_module(STUB, ANSWER)
    assert cells.doc.startswith("Lesson 99: a demo.")
    assert cells.setup == "import math\nLIMIT = 3"
    assert [name for name, _ in cells.solutions] == ["Counter", "root"]
    counter = dict(cells.solutions)["Counter"]
    assert f"        super().__init__()\n        # TODO: keep start.\n        {BEGIN}\n        self.count = start\n        {END}" in counter
    cleared = clear_solutions(counter)
    assert "self.count" not in cleared and cleared.count("raise NotImplementedError()") == 2
    assert '"""One more."""\n        # TODO: count.\n        # YOUR CODE HERE' in cleared
    root_cell = dict(cells.solutions)["root"]
    # A helper of the answer's: its signature and docstring in the cell of the def it precedes.
    assert root_cell.startswith(f'def _check(x: float) -> None:\n    """Refuse negative numbers."""\n    {BEGIN}\n')
    assert f"    {BEGIN}\n    # The checked value, then the root.\n    _check(x)" in root_cell  # comments come along
    assert root_cell.rstrip().endswith(f"def _unused():\n    {BEGIN}\n    return LIMIT\n    {END}")  # trailing helpers last
    namespace: dict = {}
    exec(compile(cells.setup + "\n" + clear_solutions(root_cell), "<cell>", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["root"](4.0)  # the student's version is a TODO, as the stub is


def test_a_stub_whose_code_differs_from_the_answers_start_is_refused():
    answer = ANSWER.replace("        super().__init__()\n        self.count", "        self.count")
    with pytest.raises(KitError, match="Counter|__init__"):
        split_module(STUB, answer)
    with pytest.raises(KitError, match="the reference lacks root"):
        split_module(STUB, ANSWER.replace("def root(", "def square_root("))


@pytest.fixture(scope="module")
def notebooks():
    from grader.notebooks.course import lesson_points

    lessons = all_lessons(ROOT)
    points = lesson_points(ROOT, [lesson.name for lesson in lessons])
    return {lesson.name: (lesson_notebook(lesson, points[lesson.name]), points[lesson.name]) for lesson in lessons}


def test_every_lesson_makes_a_valid_notebook_without_test_code(notebooks):
    assert len(notebooks) >= 10
    for name, (nb, points) in notebooks.items():
        grades = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
        assert grades[f"{name}-public-tests"].metadata["nbgrader"]["points"] == points.public > 0
        assert grades[f"{name}-hidden-tests"].metadata["nbgrader"]["points"] == points.hidden > 0
        assert f'grade("{name}", "public", points={points.public:g})' in grades[f"{name}-public-tests"].source
        hidden = grades[f"{name}-hidden-tests"].source
        assert hidden.index(BEGIN_HIDDEN) < hidden.index(f'grade("{name}", "hidden"')
        text = "\n".join(c.source for c in nb.cells)
        assert "def test_" not in text and "lesson." not in text, name
        assert nb.cells[0].source.startswith("# Lesson ") and "Check your work with:" not in nb.cells[0].source


def test_points_are_the_tests_points_markers(kit):
    from grader.notebooks.course import lesson_points

    # The demo lesson: test_add and test_add_negative are public, test_scale is worth 2 and
    # test_scale_speed 1, both hidden.
    assert lesson_points(kit.path, ["98_demo"])["98_demo"] == Points(public=2.0, hidden=3.0)
