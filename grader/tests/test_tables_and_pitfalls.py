"""grader.testing's `below` (a table a test file defines after its tests), `pitfall_of`
(a pitfall named only when the learner's result is exactly what it gives) and `pitfall_saying`
(a pitfall named from what the learner's error says)."""

from __future__ import annotations

import re

import pytest
import torch

from grader.testing import Pitfall, below, pitfall_of
from grader.testing.pitfalls import ErrorPitfall, pitfall_raising, pitfall_saying, pitfalls_of


def test_a_table_defined_below_its_tests_parametrizes_them(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_cases="""
        import pytest
        from grader.testing import below

        @pytest.mark.parametrize("a, b", below("CASES"))
        def test_adds_one(a, b):
            assert a + 1 == b

        CASES = [(1, 2), (2, 3), (0, 1)]
    """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error").assert_outcomes(passed=3)


def test_a_table_that_is_not_there_is_named():
    table = below("NOWHERE")
    with pytest.raises(NameError, match="no table 'NOWHERE'"):
        len(table)


OVERFLOW = Pitfall(lambda t: t.exp() / t.exp().sum(), "exp overflows", shows=lambda t: bool(t.exp().isinf().any()))
RAISES = Pitfall(lambda t: 1 / 0, "never told")


def test_the_pitfall_is_named_when_the_result_is_what_it_gives():
    t = torch.tensor([1000.0, 0.0])
    assert pitfall_of(t.exp() / t.exp().sum(), torch.softmax(t, 0), [RAISES, OVERFLOW], t) == "exp overflows"


def test_no_pitfall_where_the_inputs_cannot_show_it_or_the_right_answer_gives_it_too():
    small = torch.tensor([1.0, 0.0])
    assert pitfall_of(small.exp() / small.exp().sum(), torch.softmax(small, 0), [OVERFLOW], small) is None
    big = torch.tensor([1000.0, 0.0])
    assert pitfall_of(torch.softmax(big, 0), torch.softmax(big, 0), [OVERFLOW], big) is None


def test_a_judge_of_its_own_decides_instead_of_equality():
    t = torch.tensor([1.0, 2.0])
    doubled = Pitfall(lambda t: 2 * t, "doubled")
    nearly = 2 * t + 0.01  # not the pitfall's result, but far closer to it than to the right one

    def closer(got, wrong, right):
        return bool((got - wrong).abs().sum() < (got - right).abs().sum())

    assert pitfall_of(nearly, 3 * t, [doubled], t) is None
    assert pitfall_of(nearly, 3 * t, [doubled], t, explains=closer) == "doubled"


def test_an_error_is_the_pitfalls_when_its_code_raises_the_very_same():
    empty_dim = Pitfall(lambda t: t - t.amax(1), "amax over an empty dim")
    other = Pitfall(lambda t: t.view(-1, 7), "a view")
    t = torch.ones(2, 0)
    try:
        t - t.amax(1)
    except Exception as error:  # noqa: BLE001 (the learner's error, whatever it is)
        learners = error
    assert pitfall_raising(learners, [other, empty_dim], t) == "amax over an empty dim"
    assert pitfall_raising(ValueError("something else"), [other, empty_dim], t) is None


def test_every_pitfall_that_fits_is_listed_so_a_test_can_ask_for_one_alone():
    t = torch.tensor([1.0, 2.0])
    doubled, twice = Pitfall(lambda t: 2 * t, "doubled"), Pitfall(lambda t: t + t, "added to itself")
    assert pitfalls_of(2 * t, 3 * t, [doubled, twice, RAISES], t) == ["doubled", "added to itself"]
    assert pitfalls_of(3 * t, 3 * t, [doubled, twice], t) == []


def test_an_error_is_the_pitfalls_when_it_says_what_the_pitfall_says_and_the_inputs_can_show_it():
    def negative(error, t):  # the message's own number decides
        index = int(re.search(r"index (-\d+)", str(error))[1])
        return f"{index} counts from the end" if bool((t == index).any()) else None

    pitfalls = [
        ErrorPitfall(r"view size is not compatible", "a view", shows=lambda t: not t.is_contiguous()),
        ErrorPitfall(r"index -\d+ is out of bounds", negative),
    ]
    assert (
        pitfall_saying(RuntimeError("view size is not compatible with ..."), pitfalls, torch.ones(2, 3).t()) == "a view"
    )
    assert pitfall_saying(RuntimeError("view size is not compatible with ..."), pitfalls, torch.ones(2, 3)) is None
    error = IndexError("index -1 is out of bounds for dimension 1 with size 3")
    assert pitfall_saying(error, pitfalls, torch.tensor([0, -1])) == "-1 counts from the end"
    assert pitfall_saying(error, pitfalls, torch.tensor([0, 1])) is None
