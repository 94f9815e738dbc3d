"""grader.notebooks: a grade cell's module from the executed cells, its score and its report
(grade_cell); the code `kata nbgrader autograde` grades and what its grade cells show (autograde)."""

from __future__ import annotations

import copy
import json

import pytest

from grader.notebooks import grade_cell as notebook
from grader.notebooks.grade_cell import Module, build_module, grade, reason, score
from grader.results import CollectError, Failure, Kind, Outcome, RunResult, TestInfo, TestResult
from grader.tests.kits import SOLUTION, STUB


def test_the_module_keeps_definitions_and_leaves_experiments_out():
    cells = [
        (1, "import math\nprint('hello')\nx = math.sqrt(2)\nEPS = math.ulp(1.0)\nSIZES = (1, 2)"),
        (2, "from __future__ import annotations\n\n@staticmethod\ndef f(a):\n    return a + EPS\n\nf(1)"),
        (3, "def g(:\n    pass"),  # a syntax error: left out, with a note
        (5, "class C:\n    pass\nfor i in range(3):\n    pass\ndef f(a):  # the second f wins\n    return 2 * a"),
    ]
    module = build_module(cells)
    lines = module.text.splitlines()
    assert lines[0] == "from __future__ import annotations"  # first, or the module does not compile
    assert "print('hello')" not in module.text and "x = math.sqrt(2)" not in module.text
    assert "f(1)" not in lines and "for i in range(3):" not in module.text
    assert "EPS = math.ulp(1.0)" in lines and "SIZES = (1, 2)" in lines  # constants stay
    namespace: dict = {}
    exec(compile(module.text, "<module>", "exec"), namespace)
    assert namespace["f"](3) == 6 and "g" not in namespace
    assert module.notes == ["cell [3] is left out: SyntaxError at its line 1: invalid syntax"]
    assert module.where(lines.index("@staticmethod") + 1) == "cell [2], line 3"
    assert module.where(lines.index("    return 2 * a") + 1) == "cell [5], line 6"


def _failed(summary: str, outcome: Outcome = Outcome.FAILED, kind: Kind | None = None) -> TestResult:
    report = "tests/07_stable/test_stable.py:40: in test_hidden\n    assert_close(lesson.stable_softmax(secret_input), expected)\n"
    return TestResult("t", outcome, message=report + summary, failure=Failure(kind, "AssertionError", summary))


def test_a_reason_is_the_error_never_the_test_code():
    summary = "AssertionError: stable_softmax(x) for x of shape (2, 2):\nMismatched elements: 2 / 4"
    assert reason(_failed(summary)) == summary
    many = "".join(f"line {i}\n" for i in range(10))
    assert reason(_failed(many)).splitlines()[-1] == "..."
    todo = "TODO: add (cell [3], line 4) is not implemented yet"
    assert reason(_failed(todo, Outcome.TODO, Kind.TODO)) == "add (cell [3], line 4) is not implemented yet"
    assert (
        reason(_failed("demo.py has no 'add', which the tests use.\n  Keep every name"))
        == "demo.py has no 'add', which the tests use.\n  Keep every name"
    )
    skipped = TestResult("t", Outcome.SKIPPED, message="no bf16 here")
    assert reason(skipped) == "no bf16 here"


def _run(outcomes: dict[str, str], **kwargs) -> RunResult:
    collected = [
        TestInfo(f"tests/98_demo/test_demo.py::{name}", points, public)
        for name, points, public in (("a", 1.0, True), ("b", 2.0, False), ("c", 3.0, False), ("d", 4.0, False))
    ]
    tests = [
        TestResult(
            f"tests/98_demo/test_demo.py::{name}",
            Outcome(outcome),
            message="no bf16 here" if outcome == "skipped" else "boom",
            failure=None if outcome in ("passed", "skipped") else Failure(None, "RuntimeError", "boom"),
        )
        for name, outcome in outcomes.items()
    ]
    return RunResult(exitstatus=kwargs.pop("exitstatus", 1), collected=collected, tests=tests, **kwargs)


def test_scores_weigh_tests_by_points_and_leave_skipped_ones_out():
    run = _run({"a": "passed", "b": "passed", "c": "failed", "d": "skipped"})
    module = Module(text="")
    assert score(run, "public", 5, module, "98_demo")[0] == 5.0
    value, lines = score(run, "hidden", 10, module, "98_demo")
    assert value == 4.0  # 2 of the 5 points that ran (d skipped), scaled to the cell's 10
    assert lines[0] == "98_demo, hidden tests: 1 of 3 passed, 4 of 10 points"
    assert lines[1:] == ["PASS  b", "FAIL  c: boom", "SKIP  d: no bf16 here"]
    value, _ = score(_run({"a": "passed", "b": "passed", "c": "passed", "d": "failed"}), "all", 1, module, "98_demo")
    assert value == 0.6 and isinstance(value, float)  # 6 of 10, rounded; a plain float


def test_tests_that_never_ran_are_failures_that_say_why():
    ended = _run({"a": "passed"}, exitstatus=None, returncode=0)  # os._exit(0) during test b
    value, lines = score(ended, "all", 10, Module(text=""), "98_demo")
    assert value == 1.0
    assert (
        lines[2]
        == "FAIL  b: the test process ended during this test (exit code 0): does your code call os._exit or sys.exit?"
    )
    assert lines[3] == "FAIL  c: not run (the test process had stopped)"
    stopped = _run({"a": "passed", "b": "timeout"}, exitstatus=2, stopped=True, seconds=45.2)
    _, lines = score(stopped, "all", 10, Module(text=""), "98_demo")
    assert lines[3].startswith("TIME  c: still running when the time for the whole lesson (45 s) was spent")
    _, lines = score(
        RunResult(collect_errors=[CollectError("x", "ImportError: no torch")]), "hidden", 10, Module(text=""), "98_demo"
    )
    assert lines == ["FAIL  the hidden tests of 98_demo did not run:\n      ImportError: no torch"]


@pytest.fixture
def graded_kit(quick_kit, monkeypatch):
    monkeypatch.setenv("KATA_ROOT", str(quick_kit.path))
    notebook._CACHE.clear()
    return quick_kit


def _cells(source: str) -> list[tuple[int, str]]:
    body = source.split('"""A demo lesson."""\n', 1)[1]
    return [(1, "import math"), (2, body), (3, "print(add(1, 2))")]


def test_grade_runs_the_lessons_tests_on_the_cells(graded_kit, capsys):
    assert grade("98_demo", "public", points=4, cells=_cells(SOLUTION)) == 4.0
    assert grade("98_demo", "hidden", points=2, cells=_cells(SOLUTION)) == 2.0
    out, err = capsys.readouterr()
    assert "98_demo, public tests: 2 of 2 passed, 4 of 4 points\nPASS  test_add\nPASS  test_add_negative" in out
    assert "98_demo, hidden tests: 1 of 1 passed, 2 of 2 points\nPASS  test_scale" in out
    assert err == ""
    assert grade("98_demo", points=3, cells=_cells(STUB)) == 0.0
    out, err = capsys.readouterr()
    assert "TODO  test_add: add (cell [2], line 6) is not implemented yet" in out and err == ""


def test_grade_never_raises_and_never_writes_stderr(graded_kit, capsys, monkeypatch):
    assert grade("98_demo", "secret", points=1, cells=[]) == 0.0
    assert grade("97_missing", points=1, cells=_cells(SOLUTION)) == 0.0
    assert grade("98_demo", points=1) == 0.0  # not in a kernel: no cells to read
    monkeypatch.setattr(notebook, "run_tests", lambda *a: 1 / 0)
    assert grade("98_demo", points=1, cells=_cells(SOLUTION)) == 0.0
    out, err = capsys.readouterr()
    assert err == ""
    assert "FAIL  grade(): tests must be one of all, public, hidden, not 'secret'" in out
    assert "FAIL  no tests for lesson 97_missing in" in out and "set KATA_ROOT" in out
    assert "call it from a notebook cell" in out
    assert "the grader itself failed (ZeroDivisionError: division by zero); tell your instructor" in out


# --- kata nbgrader autograde: the notebook's code, and what its grade cells show -----------------


def _notebook():
    from grader.notebooks.build import _meta

    v4 = pytest.importorskip("nbformat").v4
    return v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Lesson"),
            v4.new_code_cell("import math\nprint('setup')\nscale = math.sqrt(2)\nLIMIT = 3"),
            v4.new_code_cell(
                "helper = make()\n\ndef add(a, b):\n    return a + b", metadata=_meta("add", solution=True)
            ),
            v4.new_code_cell("add(1, 2)\n\ndef mine():\n    return 1"),
            v4.new_code_cell(
                'grade("98_demo", "hidden", points=4)', metadata=_meta("t", grade=True, locked=True, points=4)
            ),
        ]
    )


def test_the_graded_code_is_the_answer_cells_whole_and_the_definitions_of_the_others():
    from grader.notebooks.autograde import graded_code

    module = graded_code(_notebook())
    lines = module.text.splitlines()
    assert "print('setup')" not in lines and "scale = math.sqrt(2)" not in lines  # not an answer cell
    assert "LIMIT = 3" in lines and "import math" in lines and "def mine():" in lines
    assert "helper = make()" in lines  # an answer cell, as written: what it computes, it needs
    assert "add(1, 2)" not in lines and 'grade("98_demo", "hidden", points=4)' not in module.text  # never runs
    assert module.where(lines.index("def add(a, b):") + 1) == "the add cell, line 3"
    assert module.where(lines.index("def mine():") + 1) == "code cell 3, line 3"


def _record(*tests: tuple[str, str, float, bool, str | None], **lesson) -> dict:
    return {
        "tests": [
            {
                "name": f"98_demo: {name}",
                "lesson": "98_demo",
                "status": status,
                "points": points if status == "pass" else 0.0,
                "max_points": points,
                "public": False,
                "message": message,
                **({"held": True} if held else {}),
            }
            for name, status, points, held, message in tests
        ],
        "lessons": [{"lesson": "98_demo", **lesson}],
        "flags": [
            "98_demo: read the code: test_a: the source reaches past what its answer needs (demo.py:3 import os)"
        ],
    }


def test_a_grade_cell_shows_kata_grades_verdicts_grouped_and_scores_what_it_counts():
    from grader.notebooks.autograde import graded_code
    from grader.notebooks.cells import cell_output

    module = graded_code(_notebook())
    todo = "TODO: add (exercises/98_demo/demo.py:6) is not implemented yet"
    record = _record(
        ("test_a", "pass", 1.0, True, None),
        ("test_b", "fail", 1.0, False, todo),
        ("test_c", "fail", 1.0, False, todo),
        ("test_d", "pass", 1.0, False, None),
        ("test_e", "skip", 2.0, False, "needs CUDA"),
    )
    value, text = cell_output(record, "98_demo", "hidden", 8.0, module, "demo.py")
    assert value == 2.0  # 1 of the 4 points that count (test_a is held, test_e skipped), scaled to 8
    assert text.splitlines() == [
        "98_demo, hidden tests: 2 of 5 passed, 2 of 8 points",
        "The code is flagged for your instructor to read: test_a: the source reaches past what its answer needs (demo.py:3 import os)",
        "HELD  test_a: it passed; its points wait for your instructor to read the code",
        "TODO  test_b: add (the add cell, line 3) is not implemented yet",
        "      (the same in 1 more test: test_c)",
        "PASS  test_d",
        "SKIP  test_e: needs CUDA",
    ]


def test_a_grade_cell_is_filled_only_for_the_code_that_was_graded(tmp_path):
    from grader.notebooks.autograde import digest, graded_code, kit_grades

    nb, shown = _notebook(), {"value": 3.0, "text": "98_demo, hidden tests: ...\n"}
    results = tmp_path / "cells.json"
    KitGrades = kit_grades()
    for code, expected in ((digest(graded_code(nb)), "3.0"), ("another", "0.0")):
        results.write_text(json.dumps({"alice": {"digest": code, "cells": {"t": shown}}}))
        done, _ = KitGrades(results=str(results)).preprocess(copy.deepcopy(nb), {"nbgrader": {"student": "alice"}})
        outputs = done.cells[-1].outputs
        assert [o.output_type for o in outputs] == ["stream", "execute_result"]
        assert outputs[1].data["text/plain"] == expected
    assert outputs[0].text == "FAIL  not graded: this notebook's code is not the code the kit graded\n"


def test_a_grade_cells_call_names_its_lesson_tests_and_points():
    from grader.notebooks.cells import grade_call

    source = '# The hidden tests\n### BEGIN HIDDEN TESTS\ngrade("07_stable", "hidden", points=58)\n### END HIDDEN TESTS'
    assert grade_call(source) == ("07_stable", "hidden", 58.0)
    assert grade_call('from x import grade\n\ngrade("02_modules", points=9)') == ("02_modules", "all", 9.0)
    assert grade_call("print(1)") is None


def test_a_cell_is_read_as_python_reads_it_and_one_it_cannot_read_is_left_out_with_a_note():
    """Lines end where Python ends them (a form feed or \\x1e is not a line break: code after one
    in a comment stays a comment); a definition is taken without what shares its line; a cell
    that parses only without its IPython commands is taken without them; a cell Python cannot
    read at all is left out, whatever it holds."""
    cells = [
        (
            "cell [1]",
            "import os; os.system('echo hi')\nEPS = 0  # tolerance\x1edef hidden():\n\x0c\ndef f():\n    return EPS\n",
            False,
        ),
        ("cell [2]", "%load_ext autoreload\n!pip list\nimport math\n", False),
        ("cell [3]", 123, False),
        ("cell [4]", "x = '\ud800'", True),
        ("cell [5]", "X = " + "1 + " * 100_000 + "1", False),
    ]
    module = notebook.module_of(cells)
    lines = module.text.splitlines()
    assert "import os" in lines and "os.system" not in module.text and "hidden" not in module.text
    assert module.where(lines.index("def f():") + 1) == "cell [1], line 4"  # the form feed's line counts once
    assert "import math" in lines
    assert module.notes == [
        "cell [2]: its IPython commands (% and ! lines) are left out",
        "cell [3] is left out: Python cannot read it (TypeError)",
        "cell [4] is left out: Python cannot read it (UnicodeEncodeError)",
        "cell [5] is left out: Python cannot read it (RecursionError)",
    ]


def test_a_message_names_the_cells_of_the_graded_file_in_time_linear_in_its_length():
    from grader.notebooks.cells import _in_cells

    module = notebook.module_of([("the f cell", "def f():\n    return 1\n", True)])
    text = 'File "/tmp/x/exercises/07_stable/stable.py", line 3, in f; (exercises/07_stable/stable.py:3)'
    assert _in_cells(text, module, "stable.py") == "the f cell, line 2, in f; (the f cell, line 2)"
    digits = "stable.py:" + "1" * 5000  # more digits than int() takes: left as they are
    assert _in_cells(digits, module, "stable.py").startswith("line 111111111 of the graded code")
    slashes = "/" * 9_000 + " stable.py:2 " + "/" * 9_000  # a regex that backtracks over it takes seconds
    assert "the f cell, line 1" in _in_cells(slashes, module, "stable.py")
