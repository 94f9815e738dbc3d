"""grader.testing's `below` (a table a test file defines after its tests) and `pitfall_of`
(a pitfall named only when the learner's result is exactly what it gives)."""

from __future__ import annotations

import pytest
import torch

from grader.testing import Pitfall, below, pitfall_of


def test_a_table_defined_below_its_tests_parametrizes_them(pytester: pytest.Pytester):
    pytester.makepyfile(test_cases="""
        import pytest
        from grader.testing import below

        @pytest.mark.parametrize("a, b", below("CASES"))
        def test_adds_one(a, b):
            assert a + 1 == b

        CASES = [(1, 2), (2, 3), (0, 1)]
    """)
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
