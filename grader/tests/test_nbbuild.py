"""grader.notebooks.build: a lesson as an nbgrader source notebook, checked without running a kernel."""

from __future__ import annotations

import pytest

from grader.authoring.exercises import BEGIN, END
from grader.lessons import all_lessons
from grader.notebooks.build import BEGIN_HIDDEN, HELPERS_NOTE, Points, lesson_notebook, split_module
from grader.tests.kits import ROOT

HEAD = '''\
"""Lesson 99: a demo.

Some text.

Check your work with:  pytest exercises/99_demo
"""

import math

LIMIT = 3


'''

SOURCE = (
    HEAD
    + '''\
class Counter:
    """Counts."""

    def __init__(self, start: int) -> None:
        super().__init__()
        # TODO: keep start.
        ### BEGIN SOLUTION
        self.count = start
        ### END SOLUTION

    def tick(self) -> int:
        """One more."""
        # TODO: count.
        ### BEGIN SOLUTION
        self.count += 1
        return self.count
        ### END SOLUTION


### BEGIN SOLUTION
def _check(x: float) -> None:
    """Refuse negative numbers."""
    if x < 0:
        raise ValueError(x)
### END SOLUTION


def root(x: float) -> float:
    """The square root of x."""
    # TODO: math.sqrt.
    ### BEGIN SOLUTION
    _check(x)
    return math.sqrt(x)
    ### END SOLUTION
'''
)


def test_cells_are_the_source_cut_at_its_defs_with_helpers_in_a_cell_of_their_own():
    cells = split_module(SOURCE)
    assert cells.doc.startswith("Lesson 99: a demo.")
    assert cells.setup == "import math\nLIMIT = 3"
    assert [name for name, _ in cells.solutions] == ["Counter", "helpers-1", "root"]
    counter, helpers, root = (text for _, text in cells.solutions)
    assert counter.endswith(f"        return self.count\n        {END}")  # the def's region closes in its cell
    assert helpers == "\n".join(
        [HELPERS_NOTE, BEGIN, *SOURCE.split(BEGIN)[3].split(END)[0].strip("\n").splitlines(), END]
    )
    assert root.startswith("def root(") and root.endswith(END)


def test_nbgraders_clearing_leaves_cells_that_compile_and_raise_where_the_answer_was(tmp_path):
    import nbformat
    from nbgrader.preprocessors import ClearSolutions

    cells = split_module(SOURCE)
    nb = nbformat.v4.new_notebook()
    for name, text in cells.solutions:
        meta = {"nbgrader": {"grade": False, "grade_id": name, "locked": False, "schema_version": 3, "solution": True}}
        nb.cells.append(nbformat.v4.new_code_cell(text, metadata=meta))
    nb, _ = ClearSolutions().preprocess(nb, {})
    counter, helpers, root = (cell.source for cell in nb.cells)
    assert "self.count" not in counter and counter.count("raise NotImplementedError()") == 2
    assert '"""One more."""\n        # TODO: count.\n        # YOUR CODE HERE' in counter
    assert helpers.startswith(HELPERS_NOTE) and "_check" not in helpers
    namespace: dict = {}
    exec(compile(cells.setup + "\n" + root, "<cell>", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["root"](4.0)  # the student's version is a TODO, as the stub is


@pytest.fixture(scope="module")
def notebooks():
    from grader.notebooks.course import lesson_points

    lessons = all_lessons(ROOT)
    points = lesson_points(ROOT, [lesson.name for lesson in lessons])
    return {lesson.name: (lesson_notebook(lesson, points[lesson.name]), points[lesson.name]) for lesson in lessons}


def test_every_lesson_makes_a_valid_notebook_without_test_code(notebooks):
    assert len(notebooks) >= 10
    for name, (nb, points) in notebooks.items():
        grades = {
            c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
        }
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
