"""`kata mutate`: cosmic-ray's mutants of a lesson's answer, run against its tests."""

from __future__ import annotations

import sys

import pytest

from grader.authoring import mutate
from grader.lessons import KitError, Lesson

# Tests that check scale only at x = k = 2, where x * k, x + k and x ** k all give 4.
WEAK_TESTS = '''\
import pytest


@pytest.mark.public
def test_add(lesson):
    assert lesson.add(2, 3) == 5
    assert lesson.add(-2, 3) == 1


@pytest.mark.public
def test_scale(lesson):
    assert lesson.scale(2) == 4
'''


def run_mutate(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.run(sys.executable, "-m", "grader", "mutate", *args)


def test_mutants_are_made_from_the_answer_with_where_they_are(quick_kit):
    mutants = mutate.mutants_of(Lesson(quick_kit.path, "98_demo"))
    shown = {(m.function, m.line, m.mutated) for m in mutants}
    assert ("add", "return a + b", "return a - b") in shown
    assert ("scale", "def scale(x, k=2):", "def scale(x, k= 3):") in shown
    assert all(m.code != (quick_kit.path / "solutions/98_demo/demo.py").read_text() for m in mutants)


def test_survivors_are_listed_and_an_equivalent_needs_a_reason(quick_kit):
    tests = quick_kit.path / "tests/99_other"
    (tests / "test_demo.py").write_text(WEAK_TESTS)
    (tests / mutate.EQUIVALENTS).write_text(
        '[[mutant]]\nline = "return x * k"\nmutant = "return x ** k"\nwhy = "the tests only try 2 and 2"\n\n'
        '[[mutant]]\nline = "return x * k"\nmutant = "return x @ k"\nwhy = "no such mutant"\n')
    result = run_mutate(quick_kit, "99_other", "-v")
    assert result.ret == 1, result.stdout.str()  # a stale record fails the run, whatever the score
    result.stdout.fnmatch_lines_random([
        "lesson *mutants *killed *equivalent *survived *untested *score",
        "99_other *24 *22 *1 *1 *0 *95.8%",
        "*99_other/demo.py:16 (scale) ReplaceBinaryOperator_Mul_Add#*: SURVIVED",
        "*(scale) ReplaceBinaryOperator_Mul_Pow#*: equivalent: the tests only try 2 and 2",
        "*(add) ReplaceBinaryOperator_Add_Sub#*: killed by test_add",
        "*stale record in tests/99_other/equivalent_mutants.toml: no mutant turns 'return x * k' into 'return x @ k'*",
    ])
    (tests / mutate.EQUIVALENTS).write_text('[[mutant]]\nline = "return x * k"\nmutant = "return x ** k"\nwhy = ""\n')
    with pytest.raises(KitError, match="non-empty why"):
        mutate.equivalents(Lesson(quick_kit.path, "99_other"))
