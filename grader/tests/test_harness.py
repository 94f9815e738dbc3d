"""The harness as a learner and CI meet it, run on a tiny kit built in a temporary folder."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from grader.results import Outcome, RunResult
from grader.tests.kits import QUICK_TESTS, SOLUTION, STUB, TESTS


def assert_outcomes(result: pytest.RunResult, **expected: int) -> None:
    """Like RunResult.assert_outcomes, but knows the kit's own outcomes (todo, broken)."""
    __tracebackhide__ = True
    got = result.parseoutcomes()
    got.pop("deselected", None)
    assert got == expected, result.stdout.str()


def run(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.runpytest_subprocess("-p", "no:cacheprovider", *args)


def test_untouched_stub_shows_todos_without_tracebacks(kit):
    result = run(kit, "exercises/98_demo", "-m", "not speed")
    assert result.ret == 1
    assert_outcomes(result, todo=3)
    result.stdout.fnmatch_lines(
        [
            "*= TODO =*",
            "TODO: add (exercises/98_demo/demo.py:7) is not implemented yet  (2 tests wait on it)",
            "TODO: scale (exercises/98_demo/demo.py:13) is not implemented yet  (1 test waits on it)",
            "Next: open exercises/98_demo/demo.py:7*",
            "Stuck? `kata hint 98_demo`*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "raise NotImplementedError" not in result.stdout.str().split("= TODO =")[0]


def test_solutions_pass_named_either_way(kit):
    assert_outcomes(run(kit, "solutions/98_demo"), passed=4)
    assert_outcomes(run(kit, "tests/98_demo", "--impl=solutions"), passed=4)


def test_impl_file_runs_the_tests_against_one_file_of_code(kit):
    # What a notebook grader does: the learner's cells written out to one file, outside the kit.
    work = kit.path.parent / "notebook_code.py"
    work.write_text(SOLUTION, encoding="utf-8")
    assert_outcomes(run(kit, "tests/98_demo", "-m", "not speed", f"--impl-file={work}"), passed=3)
    work.write_text(STUB, encoding="utf-8")
    result = run(kit, "tests/98_demo", "-m", "not speed", f"--impl-file={work}")
    assert_outcomes(result, todo=3)
    result.stdout.fnmatch_lines(["TODO: add (*notebook_code.py:7) is not implemented yet  (2 tests wait on it)"])
    work.write_text(SOLUTION.replace("return a + b", "return a +"), encoding="utf-8")
    result = run(kit, "tests/98_demo", "-m", "not speed", f"--impl-file={work}")
    result.stdout.fnmatch_lines(["*notebook_code.py:8: SyntaxError*"])


def test_the_summary_names_the_lesson_whatever_code_is_under_test(kit):
    # It once read the lesson off the TODO's path: `kata hint tmp` for code outside the kit.
    work = kit.path.parent / "notebook_code.py"
    work.write_text(STUB, encoding="utf-8")
    result = run(kit, "tests/98_demo", "-m", "not speed", f"--impl-file={work}")
    result.stdout.fnmatch_lines(["Stuck? `kata hint 98_demo` gives a hint*"])


def test_a_mutant_is_the_code_under_test_even_with_impl_file(kit):
    # The lesson fixture loads the mutant first; the TODO detection once looked at the tree or
    # the --impl-file instead, so a stub left in a mutant was a failure with a traceback.
    mutant = kit.path / "tests/98_demo/mutants/left_a_stub.py"
    mutant.write_text(
        '"""add left as a stub."""\n\n\ndef add(a, b):\n    # TODO: add.\n    raise NotImplementedError\n'
    )
    work = kit.path.parent / "notebook_code.py"
    work.write_text(SOLUTION, encoding="utf-8")
    for extra in ([], [f"--impl-file={work}"]):
        result = run(kit, "tests/98_demo", "-m", "not speed", f"--mutant={mutant}", *extra)
        assert_outcomes(result, todo=2, passed=1)
        result.stdout.fnmatch_lines(["TODO: add (tests/98_demo/mutants/left_a_stub.py:6) is not implemented yet*"])


def test_plain_pytest_runs_every_lesson_against_exercises(kit):
    result = run(kit, "-m", "not speed")
    assert_outcomes(result, todo=6)
    result.stdout.fnmatch_lines(["*exercises/98_demo/demo.py:7*", "*exercises/99_other/demo.py:7*"])


def test_selection_options_work(kit):
    assert_outcomes(run(kit, "solutions/98_demo", "-k", "negative"), passed=1)
    assert_outcomes(run(kit, "solutions/98_demo", "-m", "not speed"), passed=3)
    assert_outcomes(run(kit, "tests/98_demo/test_demo.py::test_scale", "--impl=solutions"), passed=1)
    result = run(kit, "exercises/98_demo", "-x")
    assert_outcomes(result, todo=1)


def test_a_lesson_that_passes_says_so_and_where_to_go_next(quick_kit):
    result = run(quick_kit, "solutions/98_demo")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "Every test of 98_demo passes (3 tests). Next: `pytest solutions/99_other`, "
            "or `kata next` for a lesson you left unfinished.",
        ]
    )
    # Its one test file named, as an editor does, is the whole lesson too.
    run(quick_kit, "solutions/98_demo/demo.py").stdout.fnmatch_lines(["Every test of 98_demo passes (3 tests).*"])
    run(quick_kit, "solutions/99_other").stdout.fnmatch_lines(
        [
            "Every test of 99_other passes (3 tests). It is the last lesson: `kata next` says whether one is left unfinished.",
        ]
    )
    run(quick_kit, "solutions").stdout.fnmatch_lines(
        ["All 6 tests of the 2 lessons run pass. `kata next` says where to go on."]
    )


@pytest.mark.parametrize(
    ("chosen", "passed"),
    [
        (["solutions/98_demo", "-k", "negative"], "The 1 test you chose passes"),
        (["solutions/98_demo", "-m", "public"], "The 2 tests you chose pass"),
        (["tests/98_demo/test_demo.py::test_add_negative", "--impl=solutions"], "The 1 test you chose passes"),
    ],
)
def test_part_of_a_lesson_that_passes_claims_only_what_ran(quick_kit, chosen, passed):
    result = run(quick_kit, *chosen)
    assert result.ret == 0
    out = result.stdout.str()
    assert "Every test of" not in out, out
    result.stdout.fnmatch_lines(
        [f"{passed}: part of 98_demo, not all of it. `pytest solutions/98_demo` runs every test."]
    )


def test_each_reason_for_a_skip_is_said_once_with_a_count(quick_kit):
    torch = pytest.importorskip("torch")
    (quick_kit.path / "tests/98_demo/test_demo.py").write_text(
        QUICK_TESTS
        + textwrap.dedent("""

        @pytest.mark.cuda
        def test_on_the_gpu(lesson):
            assert lesson.add(1, 1) == 2


        @pytest.mark.skip(reason="the data set is not in this kit")
        @pytest.mark.parametrize("n", [1, 2])
        def test_on_data(lesson, n):
            pass
        """),
        encoding="utf-8",
    )
    result = run(quick_kit, "solutions/98_demo")
    lines = ["2 tests skipped: the data set is not in this kit"]
    if not torch.cuda.is_available():
        lines.insert(0, "1 test skipped: it needs a CUDA device, which this machine does not have")
    result.stdout.fnmatch_lines([*lines, "Every test of 98_demo that can run here passes (*; * skipped, see above).*"])


def test_naming_the_lesson_file_runs_its_tests(kit):
    (kit.path / "tests/98_demo/conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef three():\n    return 3\n"
    )
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        TESTS + "\n\ndef test_conftest_fixture(lesson, three):\n    assert lesson.add(three, 0) == 3\n"
    )
    assert_outcomes(run(kit, "solutions/98_demo/demo.py"), passed=5)
    assert_outcomes(run(kit, "exercises/98_demo/demo.py", "-m", "not speed"), todo=4)


def test_running_inside_a_lesson_folder(kit, monkeypatch):
    monkeypatch.chdir(kit.path / "solutions" / "98_demo")
    assert_outcomes(run(kit), passed=4)
    monkeypatch.chdir(kit.path / "exercises" / "98_demo")
    assert_outcomes(run(kit, "-m", "not speed"), todo=3)


def test_syntax_error_is_one_line_and_other_lessons_still_run(kit):
    broken = STUB.replace("    raise NotImplementedError\n", "    return a +\n", 1)
    (kit.path / "exercises/98_demo/demo.py").write_text(broken)
    result = run(kit, "exercises", "-m", "not speed")
    assert result.ret == 1
    assert_outcomes(result, broken=3, todo=3)
    result.stdout.fnmatch_lines(
        [
            "*= could not import =*",
            "exercises/98_demo/demo.py:7: SyntaxError: * (the tests could not import exercises/98_demo/demo.py)",
            "    return a +",
            "*(3 tests could not run)",
            "TODO: add (exercises/99_other/demo.py:7) is not implemented yet*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_import_error_names_the_line(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text("import no_such_module_here\n" + STUB)
    result = run(kit, "exercises/98_demo", "-m", "not speed")
    result.stdout.fnmatch_lines(
        ["exercises/98_demo/demo.py:1: ModuleNotFoundError: No module named 'no_such_module_here'*"]
    )


def test_infinite_loop_is_stopped_with_a_message(kit):
    looping = STUB.replace("    raise NotImplementedError\n", "    while True:\n        pass\n", 1)
    (kit.path / "exercises/98_demo/demo.py").write_text(looping)
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative", "-o", "timeout=2")
    assert_outcomes(result, timeout=1)
    result.stdout.fnmatch_lines(
        [
            "TIMEOUT: test_add did not finish in 2.0 s; it was running add (exercises/98_demo/demo.py:?).",
            "*loop that never ends*",
        ]
    )


def test_not_implemented_from_outside_the_exercises_is_a_real_failure(kit):
    delegating = STUB.replace(
        "    raise NotImplementedError\n", "    import torch\n    return torch.nn.Module()(a)\n", 1
    )
    (kit.path / "exercises/98_demo/demo.py").write_text(delegating)
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative")
    assert_outcomes(result, failed=1)
    assert "TODO: add" not in result.stdout.str()


def test_the_failures_cross_from_pytest_xdist_workers_as_themselves(quick_kit):
    """The kit's own suite runs on every core (pytest-xdist): a failure a worker found reaches
    the main process as the kit's Failure, so the TODO section reads as in one process."""
    result = run(quick_kit, "-p", "xdist.plugin", "-n", "2", "exercises/98_demo")
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*= TODO =*", "TODO: add (exercises/98_demo/demo.py:7) is not implemented yet*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_torch_ops_not_implemented_error_on_the_learners_line_is_a_failure_not_a_todo(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(
        SOLUTION.replace("return a + b", "import torch\n    return torch.remainder(torch.tensor(1j), 2)")
    )
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*NotImplementedError*not implemented for 'ComplexFloat'*"])
    assert "TODO" not in result.stdout.str()


def test_a_skip_raised_by_the_learners_code_is_a_failure(kit):
    """Only the kit skips tests: a test skipped out of the learner's code would leave the maximum."""
    (kit.path / "exercises/98_demo/demo.py").write_text(
        SOLUTION.replace("return a + b", "import pytest\n    pytest.skip('later')")
    )
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_add was skipped by the code under test (add (exercises/98_demo/demo.py:9)*counts as failed*"]
    )


def test_a_missing_function_is_named(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(STUB.replace("def add(", "def plus("))
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(
        [
            "exercises/98_demo/demo.py has no 'add', which the tests use.",
            "*Keep every name and signature the stub came with*",
        ]
    )


def test_todo_in_a_fixture_is_still_a_todo(kit):
    tests = kit.path / "tests/98_demo/test_demo.py"
    tests.write_text(
        TESTS
        + textwrap.dedent("""

        @pytest.fixture
        def total(lesson):
            return lesson.add(1, 2)


        def test_total(total):
            assert total == 3
    """)
    )
    result = run(kit, "exercises/98_demo", "-k", "test_total")
    assert_outcomes(result, todo=1)
    result.stdout.fnmatch_lines(["TODO: add (exercises/98_demo/demo.py:7)*"])


def test_todo_in_a_dataloader_worker_is_still_a_todo(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(
        textwrap.dedent("""\
        import torch


        class Numbers(torch.utils.data.IterableDataset):
            def __iter__(self):
                # TODO: yield the numbers.
                raise NotImplementedError
    """)
    )
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import torch


        def test_two_workers(lesson):
            assert list(torch.utils.data.DataLoader(lesson.Numbers(), num_workers=2)) == []
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, todo=1)
    result.stdout.fnmatch_lines(
        [
            "TODO: __iter__ (exercises/98_demo/demo.py:7) is not implemented yet "
            "(it ran in a DataLoader worker process)*",
        ]
    )


def test_a_tests_own_message_is_shown_without_pytests_introspection(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return a + b", "return a - b"))
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        class Scaler:
            def get_scale(self):
                return 2.0


        def test_add(lesson):
            scaler = Scaler()
            assert scaler.get_scale() == lesson.add(2, 3), f"add(2, 3) gave {lesson.add(2, 3)}; expected 5"


        def test_bare(lesson):
            assert lesson.add(2, 3) == 5
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=2)
    out = result.stdout.str()
    assert "add(2, 3) gave -1; expected 5\n" in out and "where" not in out.split("test_bare")[0], out
    assert "test_demo.py:7: in test_add" not in out  # the kit's message alone
    result.stdout.fnmatch_lines(["*assert -1 == 5*"])  # a bare assert keeps the explanation: it is all there is


def test_each_failure_is_told_once_in_the_kits_words_without_the_tests_frames_or_chained_errors(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return x * k", "return x * (k + 1)"))
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import pytest


        def check(fn, x):  # a helper of the tests': none of its frames is the learner's
            return fn(x)


        @pytest.mark.parametrize("n", [2, 3, 40])
        def test_scale_sizes(lesson, n):
            got = lesson.scale(n)
            if got != 2 * n:
                pytest.fail(f"scale({n}) gave {got}; expected {2 * n} (of {list(range(n))})", pytrace=False)


        def test_while_handling(lesson):
            try:
                {}[lesson.add(1, 1)]
            except KeyError as exc:
                pytest.fail(f"the table has no {exc}", pytrace=False)


        def test_through_a_helper(lesson):
            check(lambda x: lesson.add(x, None), 1)


        def test_outside_the_learners_code(lesson):
            {}[lesson.add(1, 1)]


        def explained(call, what):  # the kit's words for an error of the learner's line
            try:
                return call()
            except TypeError as exc:
                raise AssertionError(f"{what} raised {exc}: add numbers only") from exc


        def test_explained(lesson):
            explained(lambda: lesson.add(2, None), "add(2, None)")


        def test_explained_again(lesson):
            explained(lambda: lesson.add(3, (None,)[0]), "add(3, (None,)[0])")
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=8)
    result.stdout.fnmatch_lines(
        [
            "*test_scale_sizes?2?*",
            "scale(2) gave 6; expected 4 (of [0, 1])",  # sizes differ, the failure is one
            "(The same failure, each on its own input, in 2 more tests: test_scale_sizes[3], test_scale_sizes[40].)",
            "*test_while_handling*",
            "the table has no 2",
            "*test_through_a_helper*",
            "exercises/98_demo/demo.py:8: in add",
            "    return a + b",
            "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
            "*test_outside_the_learners_code*",
            "KeyError: 2",
            "*test_explained*",
            "add(2, None) raised unsupported operand type(s) for +: 'int' and 'NoneType': add numbers only",
            "(The same failure, each on its own input, in 1 more test: test_explained_again.)",  # the same error at the same line
        ]
    )
    out = result.stdout.str().split("short test summary")[0]
    # A failure shown in full names the tests that share it; they get no section of their own.
    assert "_ test_scale_sizes[3] _" not in out and "_ test_explained_again _" not in out, out
    for leak in ("test_demo.py:", "During handling", "direct cause", "grader/"):
        assert leak not in out, out


def test_advice_two_different_failures_share_is_told_in_the_first_and_pointed_to_after(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return x * k", "return x * (k + 1)"))
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import pytest

        ADVICE = "This is scaling by k + 1: the factor is k itself, so scale(n) is n * k; check the factor, not the input."


        def test_scale_of_two(lesson):
            if lesson.scale(2) != 4:
                pytest.fail(f"scale(2) gave {lesson.scale(2)}; expected 4\\n{ADVICE}", pytrace=False)


        def test_scale_of_a_list(lesson):
            if lesson.scale([1]) != [1, 1]:
                pytest.fail(f"scale([1]) gave a list of {len(lesson.scale([1]))}; expected two\\n{ADVICE}", pytrace=False)
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_scale_of_two*",
            "scale(2) gave 6; expected 4",
            "This is scaling by k + 1:*",
            "*test_scale_of_a_list*",
            "scale([1]) gave a list of 3; expected two",
            '(As told under test_scale_of_two above: "This is scaling by k + 1: ...")',
        ]
    )
    assert result.stdout.str().count("check the factor, not the input.") == 1


def test_failures_whose_advice_names_another_dtype_are_told_apart(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return x * k", "return x * (k + 1)"))
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import pytest


        @pytest.mark.parametrize("dtype", ["float16", "float64"])
        def test_cast(lesson, dtype):
            pytest.fail(f"cast(x) for x of {dtype} returned float32:\\nThe result must keep the input's dtype: "
                        f"compute in float32 if you must, then cast back to {dtype} with .to(x.dtype) before returning.",
                        pytrace=False)


        @pytest.mark.parametrize("dtype", ["float16", "float64"])
        def test_sum(lesson, dtype):
            pytest.fail(f"sum(x) for x of {dtype} returned 3.0; expected 6.0:\\nSum over every element of x, "
                        "not over its first row alone: the reduction takes dim=None to mean every dimension.",
                        pytrace=False)
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=4)
    out = result.stdout.str().split("short test summary")[0]
    # "cast back to float16" and "cast back to float64" are two things to do: two sections
    assert "_ test_cast[float16] _" in out and "_ test_cast[float64] _" in out, out
    # where the dtype is only the input's, the failure is one
    assert "(The same failure, each on its own input, in 1 more test: test_sum[float64].)" in out, out


def test_a_property_tests_failure_names_its_example_without_the_lesson_module(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION.replace("return a + b", "return a + b + (a > 2)"))
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import pytest
        from hypothesis import given, strategies as st


        @given(st.integers(0, 9))
        def test_add(lesson, a):
            if lesson.add(a, 1) != a + 1:
                pytest.fail(f"add(a, 1) gave {lesson.add(a, 1)}", pytrace=False)
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["add(a, 1) gave 5", "The example that failed: 3"])
    assert "lesson=<module" not in result.stdout.str()


def test_a_property_tests_example_is_one_line_of_its_input_or_left_out_when_too_large_to_read():
    from grader.plugin.failures import _adds_to, _example

    note = (
        "Failing test case: test_logsumexp(\n    case=(tensor([ 2.1423e-01, -1.0000e+03], dtype=torch.float16), 0),\n)"
    )
    assert _example(note) == "The example that failed: (tensor([2.1423e-01, -1.0000e+03], dtype=torch.float16), 0)"
    note = "Falsifying example: test_x(\n    lesson=<module 'x' from '/a/x.py'>,\n    shapes=((2, 3), (3,)),\n    dim=-1,\n)"
    assert _example(note) == "The example that failed: shapes=((2, 3), (3,)), dim=-1"  # two: named
    note = (
        "Falsifying example: test_x(\n    # The test always failed when commented parts were varied together.\n"
        "    lesson=<module 'x' from '/a/x.py'>,\n    n=2,  # or any other generated value\n    dim=-1,\n)"
    )
    assert _example(note) == "The example that failed: n=2, dim=-1"  # hypothesis's comments left out
    wall = ",\n".join(["              [5.0000e+02, 5.0000e+02, 5.0000e+02, 5.0000e+02]"] * 12)
    assert _example(f"Failing test case: test_softmax(\n    case=(tensor([[\n{wall}]]), -1),\n)") == ""
    # an example whose every number the kit's message names already says nothing new
    assert not _adds_to("accumulate_gradients(..., micro_batches=3) for N=10", "The example that failed: (10, 3)")
    assert _adds_to("logsumexp(x, dim=0) for x of shape (2,):", "The example that failed: (tensor([0.25, -1000.]), 0)")


def test_an_error_in_the_learners_code_shows_their_frames_once_for_every_test_it_fails(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(
        textwrap.dedent("""\
        import torch


        class Numbers(torch.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(1 // 0))
    """)
    )
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import pytest
        import torch


        @pytest.mark.parametrize("workers", [1, 2, 2])
        def test_workers(lesson, workers):
            assert list(torch.utils.data.DataLoader(lesson.Numbers(), num_workers=workers)) == []


        def test_in_process(lesson):
            assert list(torch.utils.data.DataLoader(lesson.Numbers())) == []
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=4)
    result.stdout.fnmatch_lines(
        [
            "*test_workers?1?*",
            "in a DataLoader worker process:",
            "exercises/98_demo/demo.py:6: in __iter__",
            "    return iter(range(1 // 0))",
            "ZeroDivisionError: integer division or modulo by zero",
            "(The same failure, each on its own input, in 3 more tests: test_workers[2_0], test_workers[2_1], test_in_process.)",
        ]
    )
    out = result.stdout.str()
    assert "_ test_workers[2_0] _" not in out, out  # named above, no section of its own
    assert "site-packages" not in out and "Original Traceback" not in out, out  # no library frames
    assert "test_demo.py:" not in out.split("short test summary")[0], out  # nor the tests' frames
    alone = run(kit, "exercises/98_demo", "-k", "in_process")  # in this process: the learner's frames alone
    alone.stdout.fnmatch_lines(
        [
            "*test_in_process*",
            "exercises/98_demo/demo.py:6: in __iter__",
            "    return iter(range(1 // 0))",
            "ZeroDivisionError: integer division or modulo by zero",
        ]
    )
    assert "site-packages" not in alone.stdout.str(), alone.stdout.str()


def test_asking_for_cuda_without_a_gpu_says_how_to_fix_it(kit):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: .cuda() works here")
    (kit.path / "exercises/98_demo/demo.py").write_text(
        SOLUTION.replace("return a + b", "import torch\n    return (torch.tensor(a).cuda() + b).item()")
    )
    result = run(kit, "exercises/98_demo", "-k", "test_add and not negative")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(
        [
            "add (exercises/98_demo/demo.py:9) asked for a CUDA device, but this machine has none*",
            "*make new tensors on the input's device (device=x.device*",
        ]
    )


def test_hypothesis_tests_get_the_kata_profile_without_importing_it(kit):
    # A slow example must not trip hypothesis's default 200 ms deadline on a busy machine.
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import time

        from hypothesis import given, strategies as st


        @given(st.integers(0, 3))
        def test_slow_examples(lesson, n):
            time.sleep(0.25)
            assert lesson.add(n, 0) == n
    """)
    )
    result = run(kit, "solutions/98_demo")
    assert_outcomes(result, passed=1)


def test_a_stub_stops_a_hypothesis_test_at_its_first_example(kit):
    # Shrinking the input of a TODO is seconds of nothing: one example, then the TODO line.
    # (A stub with a first line of the learner's in it: an untouched one never runs the test.)
    (kit.path / "exercises/98_demo/demo.py").write_text(
        STUB.replace("    # TODO: add the two numbers.\n", "    total = a  # started, not finished\n", 1)
    )
    calls = kit.path / "calls.txt"
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent(f"""\
        from hypothesis import given, strategies as st


        @given(st.lists(st.integers(), min_size=3))
        def test_adds_any_numbers(lesson, xs):
            with open({str(calls)!r}, "a") as log:
                log.write("x")
            assert lesson.add(xs[0], xs[1]) == xs[0] + xs[1]
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, todo=1)
    result.stdout.fnmatch_lines(["TODO: add (exercises/98_demo/demo.py:7) is not implemented yet*"])
    assert "StubReached" not in result.stdout.str() and "Falsifying" not in result.stdout.str()
    assert calls.read_text() == "x"


def test_a_test_that_can_only_end_in_a_todo_is_not_run(kit):
    # Its setup (an optimizer: torch imports torch._dynamo, 1-2 s) would only delay a known TODO.
    ran = kit.path / "ran.txt"
    (kit.path / "exercises/98_demo/demo.py").write_text(
        STUB
        + textwrap.dedent("""\


        class Model:
            \"\"\"A model.\"\"\"

            def __init__(self, size):
                super().__init__()
                # TODO: store the size.
                raise NotImplementedError


        def started(x):
            y = x  # the learner's first line: the test runs, to the stub
            raise NotImplementedError
    """)
    )
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent(f"""\
        def setup_work(name):
            open({str(ran)!r}, "a").write(name + " ")


        def test_add_then_scale(lesson):
            setup_work("add_then_scale")
            assert lesson.scale(lesson.add(1, 2)) == 6


        def test_model(lesson):
            setup_work("model")
            assert lesson.Model(3)


        def helper(lesson):
            return lesson.add(1, 2)


        def test_through_a_helper(lesson):
            setup_work("helper")
            assert helper(lesson) == 3


        def test_started(lesson):
            setup_work("started")
            assert lesson.started(1) == 1


        def test_hands_it_to_a_builtin(lesson):
            setup_work("getattr")
            assert getattr(lesson, "add")(1, 2) == 3


        def test_add_and_a_torch_function(lesson):
            import torch

            setup_work("torch")
            assert lesson.add(1, 2) == torch.nn.functional.relu(torch.tensor(3))
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, todo=6)
    result.stdout.fnmatch_lines(
        [
            "TODO: add (exercises/98_demo/demo.py:7) is not implemented yet  (4 tests wait on it)",
            "TODO: Model.__init__ (exercises/98_demo/demo.py:22) is not implemented yet  (1 test waits on it)",
            "TODO: started (exercises/98_demo/demo.py:27) is not implemented yet  (1 test waits on it)",
        ]
    )
    # Run: the test that hands `lesson` to something not of its file, and the one whose stub has
    # code in it. A helper of the file is read as the test is (a scenario is such a helper).
    assert sorted(ran.read_text().split()) == ["getattr", "started"]


def test_a_real_not_implemented_error_in_a_hypothesis_test_is_a_failure(kit):
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        from hypothesis import given, strategies as st


        @given(st.integers())
        def test_delegates(lesson, n):
            raise NotImplementedError("the test's own, not the learner's")
    """)
    )
    result = run(kit, "exercises/98_demo")
    assert_outcomes(result, failed=1)
    result.stdout.fnmatch_lines(["*NotImplementedError: the test's own, not the learner's*"])


def test_tests_run_on_one_torch_thread_and_the_learners_count_is_back_after(kit):
    # As kata grade runs every student; the learner's own setting is theirs again after the run.
    after = kit.path / "threads_after.txt"
    (kit.path / "tests/98_demo/conftest.py").write_text(
        textwrap.dedent(f"""\
        import torch

        torch.set_num_threads(2)  # what the learner's machine had before the run


        def pytest_sessionfinish(session):  # after the test loop, in the same process
            open({str(after)!r}, "w").write(str(torch.get_num_threads()))
    """)
    )
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        textwrap.dedent("""\
        import torch


        def test_one_thread(lesson):
            assert torch.get_num_threads() == 1
    """)
    )
    assert_outcomes(run(kit, "solutions/98_demo"), passed=1)
    assert after.read_text() == "2"


def test_a_todo_keeps_the_output_it_printed(kit):
    (kit.path / "exercises/98_demo/demo.py").write_text(
        STUB.replace("    # TODO: add the two numbers.\n", "    print('adding', a, b)\n", 1)
    )
    report, junit = kit.path / "report.json", kit.path / "junit.xml"
    result = run(
        kit,
        "exercises/98_demo",
        "-k",
        "test_add and not negative",
        f"--kata-report={report}",
        f"--junitxml={junit}",
        "-o",
        "junit_logging=system-out",
    )
    assert_outcomes(result, todo=1)
    assert "adding 2 3" in junit.read_text()  # the report's captured sections
    (test,) = RunResult.from_json(json.loads(report.read_text())).tests
    assert (test.outcome, test.where) == (Outcome.TODO, "exercises/98_demo/demo.py:7")


def test_json_report_has_outcomes_points_and_speed(kit):
    report = kit.path / "report.json"
    run(kit, "solutions/98_demo", f"--kata-report={report}")
    data = RunResult.from_json(json.loads(report.read_text()))
    tests = {t.nodeid.split("::")[-1]: t for t in data.tests}
    assert data.exitstatus == 0
    assert {name: t.outcome for name, t in tests.items()} == dict.fromkeys(
        ["test_add", "test_add_negative", "test_scale", "test_scale_speed"], Outcome.PASSED
    )
    assert tests["test_scale"].points == 2.0 and tests["test_add"].public and not tests["test_scale"].public
    (speed,) = tests["test_scale_speed"].speed
    assert speed["what"] == "scale(3)" and speed["ratio"] > 1.0
    run(kit, "exercises/98_demo", f"--kata-report={report}")
    assert {t.outcome for t in RunResult.from_json(json.loads(report.read_text())).tests} == {Outcome.TODO}


def verify(kit: pytest.Pytester, *args: str) -> pytest.RunResult:
    return kit.run(sys.executable, "-m", "grader", "verify", "-v", *args)


def test_verify_passes_a_good_lesson(kit):
    result = verify(kit, "98_demo", "--write-transcripts")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "98_demo*4/4 pass*4/4 todo/fail*1/1*ok",
            "*mutant add_subtracts: caught by test_add",
            "verify: 1 passed, 0 failed",
        ]
    )


@pytest.mark.timeout(300)  # four verify runs
def test_verify_keeps_each_lessons_transcript_current(kit):
    file = kit.path / "tests/98_demo/transcript.md"
    missing = verify(kit, "98_demo")
    assert missing.ret == 1 and "tests/98_demo/transcript.md is missing" in missing.stdout.str()
    assert verify(kit, "98_demo", "--write-transcripts").ret == 0
    text = file.read_text()
    assert "## The untouched stub" in text and "TODO: add (exercises/98_demo/demo.py:" in text, text
    assert "## mutants/add_subtracts.py: Subtracts instead of adding." in text and "assert -1 == 5" in text, text
    assert " in 0." not in text and "passed" not in text, text  # no counts or times: the same in every run
    assert verify(kit, "98_demo").ret == 0  # a second run reads the same
    file.write_text(text.replace("assert -1 == 5", "assert -2 == 5"))
    drifted = verify(kit, "98_demo")
    assert drifted.ret == 1
    drifted.stdout.fnmatch_lines(
        [
            "*tests/98_demo/transcript.md is not what a learner reads now:",
            "*-*assert -2 == 5*",
            "*+*assert -1 == 5*",
            "*python -m grader verify 98_demo --write-transcripts*",
        ]
    )


def test_verify_fails_loudly_on_every_kind_of_defect(kit):
    lesson = kit.path / "tests/99_other"
    (lesson / "mutants/scale_is_right.py").write_text(
        '"""Not wrong at all."""\n\n\ndef scale(x, k=2):\n    return x * k\n'
    )
    (lesson / "mutants/broken.py").write_text('"""Does not parse."""\ndef add(a, b) return 0\n')
    (lesson / "hints.md").write_text("## Level 1\nUse `return a + b`.\n")
    (kit.path / "exercises/99_other/demo.py").write_text(STUB.replace("def scale(x, k=2):", "def scale(x, k=3):"))
    source = kit.path / "solutions/99_other/demo.py"
    source.write_text(source.read_text().replace("    # TODO: add the two numbers.\n", ""))
    (lesson / "test_demo.py").write_text(TESTS + "\n\ndef test_trivial(lesson):\n    assert True\n")
    result = verify(kit, "99_other")
    assert result.ret == 1
    out = result.stdout.str()
    for expected in [
        "mutant scale_is_right.py SURVIVED",
        "mutant broken.py does not load",
        "hints.md: needs at least 3",
        "exercises/99_other/demo.py is not what solutions/99_other/demo.py makes: run `python -m grader exercises 99_other`",
        "add has no `# TODO:` comment",
        "test_trivial passes against the untouched stubs",
        "verify: 0 passed, 1 failed",
    ]:
        assert expected in out, f"{expected!r} not in:\n{out}"


def test_a_mutant_that_declares_its_pitfall_must_be_caught_by_a_failure_that_names_it(kit):
    mutants = kit.path / "tests/99_other/mutants"
    (mutants / "add_subtracts.py").write_text(
        '"""Subtracts."""\n\nEXPECT = r"assert -1 == 5"\n\n\ndef add(a, b):\n    return a - b\n'
    )
    (mutants / "add_multiplies.py").write_text(
        '"""Multiplies."""\n\nEXPECT = r"multiplie[sd]"\n\n\ndef add(a, b):\n    return a * b\n'
    )
    result = verify(kit, "99_other")
    assert result.ret == 1
    out = result.stdout.str()
    assert "add_subtracts" not in out.split("problem(s)")[-1], out  # its failure shows the words
    assert (
        "mutant add_multiplies.py is caught, but no failure names its pitfall: none matches "
        "EXPECT = 'multiplie[sd]' (Multiplies.). Its failures said:"
    ) in out, out
    assert "test_add: " in out and "test_add_negative: " in out  # every test ran, as for a learner


def test_verify_reports_a_lesson_without_tests(kit):
    (kit.path / "tests/99_other/test_demo.py").unlink()
    result = verify(kit, "99_other")
    assert result.ret == 1
    assert "no tests were collected" in result.stdout.str()


def test_verify_reports_a_broken_test_module_once_and_no_false_survivors(kit):
    (kit.path / "tests/99_other/test_demo.py").write_text("import not_a_module_anywhere\n")
    result = verify(kit, "99_other")
    assert result.ret == 1
    out = result.stdout.str()
    assert out.count("collection error in") == 1, out
    assert "No module named 'not_a_module_anywhere'" in out and "SURVIVED" not in out, out


def test_verify_runs_are_forked_from_the_verify_process(kit):
    # Forked from a process that has imported torch once, not a fresh `python -m pytest` each:
    # a run's process started as `python -m grader verify`, and its parent is that process.
    (kit.path / "tests/99_other/test_demo.py").write_text(
        TESTS.replace(
            "import pytest\n",
            textwrap.dedent("""\
        import os
        from pathlib import Path

        import pytest


        def test_forked(lesson):
            started_as = Path("/proc/self/cmdline").read_bytes().split(b"\\0")
            parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\\0")
            assert started_as[1:4] == parent[1:4] == [b"-m", b"grader", b"verify"], (started_as, parent)
            assert lesson.add(1, 1) == 2
    """),
            1,
        )
    )
    result = verify(kit, "99_other", "--write-transcripts")
    assert result.ret == 0, result.stdout.str()


def test_verify_says_why_a_run_ended_early(kit):
    (kit.path / "tests/99_other/test_demo.py").write_text(
        TESTS
        + textwrap.dedent("""\


        def test_leaves(lesson):
            import os

            os._exit(3)
    """)
    )
    result = verify(kit, "99_other")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*99_other (solutions): the pytest run ended (exit status 3) before its tests "
            "finished: the code under test called os._exit*"
        ]
    )


def test_verify_says_which_environment_lacks_torch(monkeypatch, capsys):
    from grader.authoring import verify as verify_module

    monkeypatch.setattr(verify_module, "REQUIRED", ("torch", "not_a_module_anywhere"))
    assert verify_module.verify([], jobs=1) == 2
    out = capsys.readouterr().out
    assert f"{sys.executable} cannot import not_a_module_anywhere" in out and ". .venv/bin/activate" in out


def test_the_names_a_test_uses_are_read_as_python_would_run_them(tmp_path):
    from grader.plugin.untouched import lesson_names

    tests = tmp_path / "test_demo.py"
    tests.write_text(
        textwrap.dedent("""\
        def test_nested(lesson):
            assert lesson.scale(lesson.add(1, 2)) == 6  # add runs first


        def test_redefined(lesson):
            lesson.add(1, 2)


        def test_redefined(lesson):  # the one pytest runs
            lesson.scale(3)


        def test_hands_it_on(lesson):
            helper(lesson)


        def test_assigns(lesson):
            lesson.add = None


        def scenario(module, x):  # a scenario (grader.testing.scenario): what it reads counts
            return module.scale(x)


        def test_hands_it_to_a_scenario(lesson):
            return scenario(lesson, 3) + lesson.add(1, 2)


        def test_hands_it_to_a_scenario_by_name(lesson):
            return scenario(x=lesson.add(1, 2), module=lesson)


        def hands_on(module):
            return helper(module)


        def test_hands_it_to_one_that_hands_it_on(lesson):
            hands_on(lesson)


        def loops(lesson):
            return loops(lesson)


        def test_hands_it_round_and_round(lesson):
            loops(lesson)
    """)
    )
    assert lesson_names(tests, "test_nested") == ("add", "scale")
    assert lesson_names(tests, "test_redefined") == ("scale",)
    assert lesson_names(tests, "test_hands_it_on") is None
    assert lesson_names(tests, "test_assigns") is None
    assert lesson_names(tests, "test_missing") is None
    assert lesson_names(tests, "test_hands_it_to_a_scenario") == ("scale", "add")
    assert lesson_names(tests, "test_hands_it_to_a_scenario_by_name") == ("add", "scale")
    assert lesson_names(tests, "test_hands_it_to_one_that_hands_it_on") is None  # helper is not the file's
    assert lesson_names(tests, "test_hands_it_round_and_round") is None
