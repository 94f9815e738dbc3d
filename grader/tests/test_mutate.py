"""`kata mutate`: cosmic-ray's mutants of a lesson's answer, run against its tests."""

from __future__ import annotations

import sys

import pytest

from grader.authoring import mutate, mutants, mutation_table
from grader.lessons import KitError, Lesson, all_lessons
from grader.tests.kits import ROOT

# Tests that check scale only at x = k = 2, where x * k, x + k and x ** k all give 4.
WEAK_TESTS = """\
import pytest


@pytest.mark.public
def test_add(lesson):
    assert lesson.add(2, 3) == 5
    assert lesson.add(-2, 3) == 1


@pytest.mark.public
def test_scale(lesson):
    assert lesson.scale(2) == 4
"""


def run_mutate(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.run(sys.executable, "-m", "grader", "mutate", *args)


def test_mutants_are_made_from_the_answer_with_where_they_are(quick_kit):
    made = mutants.mutants_of(Lesson(quick_kit.path, "98_demo"))
    shown = {(m.function, m.line, m.mutated) for m in made}
    assert ("add", "return a + b", "return a - b") in shown
    assert ("scale", "def scale(x, k=2):", "def scale(x, k= 3):") in shown
    assert all(m.code != (quick_kit.path / "solutions/98_demo/demo.py").read_text() for m in made)


def test_survivors_are_listed_and_an_equivalent_needs_a_reason(quick_kit):
    tests = quick_kit.path / "tests/99_other"
    (tests / "test_demo.py").write_text(WEAK_TESTS)
    (tests / mutate.EQUIVALENTS).write_text(
        '[[mutant]]\nline = "return x * k"\nmutant = "return x ** k"\nwhy = "the tests only try 2 and 2"\n\n'
        '[[mutant]]\nline = "return x * k"\nmutant = "return x @ k"\nwhy = "no such mutant"\n'
    )
    result = run_mutate(quick_kit, "99_other", "-v")
    assert result.ret == 1, result.stdout.str()  # a stale record fails the run, whatever the score
    result.stdout.fnmatch_lines_random(
        [
            "lesson *mutants *killed *equivalent *survived *untested *score",
            "99_other *24 *22 *1 *1 *0 *95.8%",
            "*99_other/demo.py:16 (scale) ReplaceBinaryOperator_Mul_Add#*: SURVIVED",
            "*(scale) ReplaceBinaryOperator_Mul_Pow#*: equivalent: the tests only try 2 and 2",
            "*(add) ReplaceBinaryOperator_Add_Sub#*: killed by test_add",
            "*stale record in tests/99_other/equivalent_mutants.toml: no mutant turns 'return x * k' into 'return x @ k'*",
        ]
    )
    (tests / mutate.EQUIVALENTS).write_text('[[mutant]]\nline = "return x * k"\nmutant = "return x ** k"\nwhy = ""\n')
    with pytest.raises(KitError, match="non-empty why"):
        mutate.equivalents(Lesson(quick_kit.path, "99_other"))


def test_a_default_no_test_leaves_out_survives_and_the_docs_row_is_written_with_its_fingerprint(quick_kit):
    lesson = Lesson(quick_kit.path, "99_other")
    (lesson.dir("solutions") / "demo.py").write_text(
        'def greet(name, greeting="hello"):\n    return f"{greeting}{name}"\n'
    )
    tests = lesson.tests_dir / "test_demo.py"
    tests.write_text('def test_greet(lesson):\n    assert lesson.greet("x", greeting="hi") == "hix"\n')
    docs = quick_kit.path / mutation_table.DOCS
    docs.parent.mkdir()
    docs.write_text(
        "# Figures\n\n```\nlesson  mutants\n98_demo  1  1  0  0  0  100.0%  2026-01-01  abc\n```\n\nMore.\n"
    )
    result = run_mutate(quick_kit, "99_other", "--write-docs")
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*99_other/demo.py:1 (greet) kata/UnsetDefault#0: SURVIVED",
            '*- def greet(name, greeting="hello"):',
            "*+ def greet(name, greeting=object()):",
        ]
    )
    rows = mutation_table.documented(quick_kit.path)
    assert rows["99_other"][:7] == ["99_other", "1", "0", "0", "1", "0", "0.0%"]
    assert rows["99_other"][8] == mutation_table.fingerprint(lesson)
    assert rows["98_demo"] == ["98_demo", "1", "1", "0", "0", "0", "100.0%", "2026-01-01", "abc"]  # not measured: kept
    assert docs.read_text().startswith("# Figures\n\n```\nlesson ") and docs.read_text().endswith("```\n\nMore.\n")

    tests.write_text(tests.read_text() + '    assert lesson.greet("x") == "hellox"\n')
    assert mutation_table.fingerprint(lesson) != rows["99_other"][8]  # the tests changed: the row is stale
    before = mutation_table.fingerprint(lesson)
    lesson.hints_file.write_text(lesson.hints_file.read_text() + "More.\n")
    assert mutation_table.fingerprint(lesson) == before  # the hints decide nothing
    (lesson.tests_dir / "transcript.md").write_text("# What a learner reads\n")
    assert mutation_table.fingerprint(lesson) == before  # nor does what the mutants print


def test_every_row_of_docs_mutation_md_was_measured_on_the_files_as_they_are():
    rows = mutation_table.documented(ROOT)
    stale = [
        lesson for lesson in all_lessons(ROOT) if rows.get(lesson.name, [""])[-1] != mutation_table.fingerprint(lesson)
    ]
    if stale:
        numbers = " ".join(lesson.name.split("_")[0] for lesson in stale)
        pytest.fail(
            f"{mutation_table.DOCS.as_posix()}'s rows for {', '.join(lesson.name for lesson in stale)} were measured "
            f"on other versions of their files (or are missing). Measure them again:\n"
            f"    python -m grader mutate -j 2 --write-docs {numbers}",
            pytrace=False,
        )
