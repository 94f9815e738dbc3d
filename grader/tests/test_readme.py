"""What README.md promises, checked against the real kit: its sample outputs are what the real
commands print (up to the terminal's width of separator lines), and each version it names has
one home it must equal (constraints.txt, pyproject.toml)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib

import pytest

from grader.authoring.release import student_readme
from grader.grading.gradescope import TORCH_CPU_INDEX
from grader.lessons import all_lessons
from grader.stubs import has_todo_raise
from grader.tests.kits import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def code_block(containing: str) -> list[str]:
    """The lines of the README's fenced block that holds `containing`."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)
    [block] = [b for b in blocks if containing in b]
    return block.splitlines()


def marked(name: str) -> str:
    """The command between <!-- name --> and <!-- /name --> (what .ci/run runs)."""
    block = README.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]
    [command] = [line for line in block.strip().splitlines() if not line.startswith("```")]
    return command


def same_width(line: str) -> str:
    """A separator line (``==== TODO ====``, ``____ test_x ____``) at any terminal width."""
    return re.sub(r"^([=_-])\1+( .* )?\1+$", lambda m: f"{m[1]}{m[2] or ''}{m[1]}", line)


def assert_printed(sample: list[str], output: str) -> None:
    """`sample` is a run of consecutive lines of `output`."""
    want = [same_width(line) for line in sample]
    got = [same_width(line) for line in output.splitlines()]
    starts = [i for i in range(len(got)) if got[i : i + len(want)] == want]
    assert starts, (
        "the README's sample is not what the command prints:\n" + "\n".join(sample) + "\n--- printed:\n" + output
    )


def pytest_in_kit(*args: str) -> str:
    """A learner's `pytest ARGS` in the kit, on an 80-column terminal with no CUDA device."""
    env = {**os.environ, "COLUMNS": "80", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout + done.stderr


# --- Quick start ---------------------------------------------------------------------------------


def test_the_learn_command_starts_at_the_first_lesson_where_kata_next_starts():
    # kata next on a fresh kit picks the first lesson: grader/tests/test_status.py.
    run = marked("learn-command").rsplit(" && ", 1)[1]
    assert run == f"pytest exercises/{all_lessons(ROOT)[0].name}"


def test_the_python_version_is_the_one_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    [said] = re.findall(r"You need Python (\d+\.\d+) or newer", README)
    assert declared == f">={said}"
    assert f"You need Python {said} or newer" in student_readme(["01_basics"])  # a student release's README


def test_every_torch_version_named_is_the_one_in_constraints():
    [pinned] = re.findall(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(encoding="utf-8"), flags=re.MULTILINE)
    named = re.findall(r"torch==(\d[\w.+]*)", README)
    assert len(named) >= 2 and set(named) == {pinned}, named  # the constraint and the CPU wheel line
    assert f"pip install torch=={pinned} --index-url {TORCH_CPU_INDEX}" in README  # where setup.sh gets it too


# --- The feedback loop ---------------------------------------------------------------------------


def test_the_todo_sample_is_what_the_learn_command_prints():
    lesson = all_lessons(ROOT)[0].name
    assert_printed(code_block("= TODO ="), pytest_in_kit(f"exercises/{lesson}"))


def test_the_wrong_answer_sample_is_what_the_pitfall_prints():
    # Lesson 07's known-wrong version with one maximum for the whole tensor, in place of the learner's code.
    mutant = "tests/07_stable/mutants/global_max_shift.py"
    output = pytest_in_kit("solutions/07_stable", f"--mutant={mutant}", "-k", "test_softmax_matches_torch")
    assert_printed(code_block("test_softmax_matches_torch"), output)


def test_the_speed_message_quoted_is_what_lesson_03s_speed_test_says(monkeypatch):
    from grader.testing import speed

    [quoted] = re.findall(r'\("(it took [^"]*)"\)', README)
    quoted = " ".join(quoted.split())
    test_file = (ROOT / "tests/03_broadcast/test_broadcast.py").read_text(encoding="utf-8")
    # The arguments of lesson 03's speed test, as its file gives them.
    at_least, what = re.search(
        r'at_least=(\d+), what="([^"]*)",\s*baseline_name="a loop over the rows of x"', test_file
    ).groups()
    monkeypatch.setattr(speed, "speed_ratio", lambda *args, **kwargs: 1 / 2.5)
    with pytest.raises(AssertionError) as failed:
        speed.assert_speed(
            lambda: None, lambda: None, at_least=int(at_least), what=what, baseline_name="a loop over the rows of x"
        )
    assert quoted in str(failed.value)


def test_each_lesson_file_has_its_lesson_in_the_docstring_and_a_todo_in_each_stub():
    for lesson in all_lessons(ROOT):
        for path in sorted(lesson.dir("exercises").glob("[!_]*.py")):
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
            assert ast.get_docstring(tree), f"{path} has no docstring"
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and has_todo_raise(node):
                    assert "# TODO" in ast.get_source_segment(source, node), f"{path}: {node.name} has no TODO comment"


def test_every_lesson_has_three_hint_levels():
    assert {lesson.name: len(lesson.hints()) for lesson in all_lessons(ROOT)} == {
        lesson.name: 3 for lesson in all_lessons(ROOT)
    }


# --- The kata command ----------------------------------------------------------------------------


def test_kata_is_python_m_grader():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"kata": "grader.cli:main"}
    assert "from grader.cli import main" in (ROOT / "grader/__main__.py").read_text(encoding="utf-8")
