"""Lesson 04, the overloaded operators: checks ops.py against torch.sum, F.normalize and a masked
mean computed row by row in float64. CONTRACT, at the end, maps the lesson's promises to the
tests.
"""

import itertools
from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.testing import (
    assert_close, assert_no_loop, assert_speed, below, describe, explained, fail, function_name, functions_called, grad_of,
    dtype_name, mismatch, pitfall_of, pitfall_raising, Pitfall, quoted, reported, returned, same, tolerance,
)
from grader.testing.differential import assert_same_as, on_another_default_device
from grader.testing.strategies import ALL_LAYOUTS, ANY_DTYPE, FLOATS, cast, shapes, tensors, with_layout


NAN, INF = float("nan"), float("inf")
LOW_PRECISION = (torch.float16, torch.bfloat16)
INTEGERS = (torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64)


# --- row_sum ---------------------------------------------------------------------------------


@pytest.mark.public
def test_row_sum_of_the_example_matrix(lesson):
    x = torch.rand([500, 10], generator=torch.Generator().manual_seed(0))
    check_row_sum(lesson, x, what="row_sum(x) for x = torch.rand([500, 10])")


@given(tensors(shape=shapes(min_side=0), dtypes=(torch.float32, torch.float64, *LOW_PRECISION), extremes=False))
@example(torch.arange(12.0).reshape(3, 4))
@pytest.mark.points(2)
def test_row_sum_matches_torch_sum(lesson, x):
    check_row_sum(lesson, x, what=f"row_sum(x) for x of {describe(x)}", **order_tolerance(x))


@pytest.mark.parametrize("dtype", INTEGERS, ids=dtype_name)
def test_row_sum_of_bool_and_integers_promotes_like_torch(lesson, dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 2, (7, 3), generator=g).bool() if dtype == torch.bool else torch.randint(
        0, 100, (7, 3), generator=g, dtype=dtype)
    check_row_sum(lesson, x, rtol=0, atol=0,
                  what=f"row_sum(x) for x of {describe(x)} (bool and integer inputs give int64 sums)")


@pytest.mark.parametrize("dtype", ANY_DTYPE, ids=dtype_name)
def test_row_sum_same_as_torch_sum_for_every_dtype(lesson, dtype):
    for shape, layout in EDGE_CASES:
        x = edge_tensor(shape, layout, dtype)
        same_as_torch(lesson.row_sum, partial(torch.sum, dim=0), x, row_sum_pitfall, grads=True,
                      what=f"row_sum(x) for x of {describe(x, layout)}", against="torch.sum(x, dim=0)",
                      tolerance=order_tolerance(x) if dtype.is_floating_point else None)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (0, 2, 4), (5,), (1, 3)], ids=lambda v: f"shape {v}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=dtype_name)
def test_row_sum_of_edge_shapes(lesson, shape, dtype):
    x = torch.arange(float(np.prod(shape))).reshape(shape).to(dtype)
    empty = " (no rows give zeros of shape x.shape[1:])" if shape[0] == 0 else ""
    check_row_sum(lesson, x, what=f"row_sum(x) for x of {describe(x)}{empty}")


@pytest.mark.points(2)
def test_row_sum_runs_the_same_ops_for_10_or_1000_rows(lesson):
    assert_no_loop(
        lambda n: partial(lesson.row_sum, seeded(n, 8)), 10, 1000, what="row_sum(x)", unit="rows",
        hint="Indexing, unbind and Python's built-in sum() all go row by row. "
        "Reduce over dim 0 in one call.",
    )


@pytest.mark.speed
@pytest.mark.points(2)
def test_row_sum_is_much_faster_than_the_slicing_loop(lesson):
    x = torch.rand([500, 10], generator=torch.Generator().manual_seed(2))
    assert_speed(
        lambda: slicing_loop(x), lambda: lesson.row_sum(x),
        at_least=30, what="row_sum(x) for x of shape (500, 10)", baseline_name="the loop `z += x[i]` over its rows",
        hint="One reduction over dim 0 replaces 500 selects and 500 additions.",
        fresh_at_least=15,  # fresh values each call, in another process (MEASUREMENTS.md)
    )


# --- normalize_rows --------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_normalize_rows_with_a_zero_row(lesson):
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]])
    check_normalize(lesson, x, what="normalize_rows(tensor([[3., 4.], [0., 0.], [-2., 0.]])) (a zero row stays zeros)")


@given(tensors(shape=shapes(min_side=0), dtypes=(torch.float32, torch.float64), scales=(1.0, 30.0, 1e-13, 1e4)))
@example(torch.tensor([[1e-13, 0.0], [3e-13, 4e-13], [0.0, 0.0], [1e4, -1e4]]))
@pytest.mark.points(2)
def test_normalize_rows_matches_F_normalize(lesson, x):
    check_normalize(lesson, x, what=f"normalize_rows(x) for x of {describe(x)}")


def test_rows_below_eps_are_divided_by_eps(lesson):
    x = torch.tensor([[1e-13, 0.0], [3e-13, 4e-13], [3e-12, 4e-12]])  # F.normalize: [[0.1, 0], [0.3, 0.4], [0.6, 0.8]]
    check_normalize(lesson, x, what="normalize_rows(x) for rows of norm 1e-13, 5e-13 and 5e-12 (a norm below "
                    "eps=1e-12 is replaced by eps)")


def test_eps_argument_is_used(lesson):
    x = torch.tensor([[0.3, 0.4], [3.0, 4.0]])  # F.normalize: [[0.3, 0.4], [0.6, 0.8]]
    check_normalize(lesson, x, eps=1.0, what="normalize_rows(tensor([[0.3, 0.4], [3., 4.]]), eps=1.0) (use the eps "
                    "you are given)")


@pytest.mark.parametrize("n", [3, 4])
def test_normalize_rows_of_a_square_input(lesson, n):
    # A square input is where a norm without keepdim broadcasts along the wrong axis silently.
    x = seeded(n, n, seed=3) * 5
    what = f"normalize_rows(x) for x of {describe(x)}"
    out = check_normalize(lesson, x, what=what)
    assert_close(torch.linalg.vector_norm(out, dim=-1), torch.ones(n), what=f"the row norms of {what}")


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_normalize_rows_of_a_non_contiguous_input(lesson, layout):
    x = with_layout(seeded(4, 3, 5, seed=4), layout)
    check_normalize(lesson, x, what=f"normalize_rows(x) for x of {describe(x)}")


@pytest.mark.points(2)
def test_zero_rows_have_finite_gradients(lesson):
    x = torch.tensor([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0], [0.0, -3.0, 4.0]], requires_grad=True)
    upstream = seeded(3, 3, seed=6)
    what = "the gradient of normalize_rows(x) at x with a zero row"
    with reported("normalize_rows(x) for x = [[0., 0., 0.], [1., 2., 2.], [0., -3., 4.]] that requires grad",
                  advice=written_into):
        out = lesson.normalize_rows(x)
    got = grad_of(out, x, what, upstream)
    if not bool(torch.isfinite(got).all()):
        if not bool(torch.isfinite(out.detach()).all()):
            fail(f"normalize_rows(x) at x with a zero row returned non-finite entries:\n{out.detach()}\n{NO_CLAMP}")
        x_by_hand = x.detach().clone().requires_grad_()
        by_hand = grad_of(x_by_hand / (x_by_hand * x_by_hand).sum(-1, keepdim=True).sqrt().clamp_min(1e-12),
                          x_by_hand, what, upstream)
        sqrt_at_zero = torch.equal(torch.isfinite(got), torch.isfinite(by_hand))
        fail(f"{what} has non-finite entries:\n{got}\nThe result itself is finite: a step of the computation has "
             "an infinite derivative at the zero row." + (f" {BY_HAND}" if sqrt_at_zero else ""))
    assert_close(got, grad_of(reference_normalize(x), x, what, upstream), what=what)


def test_float16_rows_whose_squares_overflow(lesson):
    x = torch.tensor([[300.0, 400.0], [0.5, 0.0]], dtype=torch.float16)
    check_normalize(lesson, x, what="normalize_rows(tensor([[300., 400.], [0.5, 0.]], dtype=torch.float16))",
                    **tolerance(torch.float16))


@given(tensors(dtypes=LOW_PRECISION, scales=(1.0, 30.0), extremes=False))
def test_normalize_rows_in_low_precision_keeps_dtype(lesson, x):
    eps = eps_for(x.dtype)
    check_normalize(lesson, x, eps=eps, what=f"normalize_rows(x, eps={eps}) for x of {describe(x)}", **tolerance(x.dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_name)
def test_normalize_rows_same_as_F_normalize(lesson, dtype):
    eps = eps_for(dtype)
    for shape, layout in EDGE_CASES:
        values = torch.randn(shape, generator=torch.Generator().manual_seed(5)) * 4
        if values.dim() > 1 and values.shape[0] > 0:
            values[(0,) * (values.dim() - 1)] = 0.0  # a zero row
        x = with_layout(values.to(dtype), layout)
        same_as_torch(lesson.normalize_rows, partial(F.normalize, p=2, dim=-1), x,
                      partial(normalize_pitfall, eps=eps, **HALF_TOLERANCE.get(dtype, {})), eps=eps, grads=True,
                      what=f"normalize_rows(x, eps={eps}) for x of {describe(x)} ({layout}, a zero row)",
                      against=f"F.normalize(x, p=2, dim=-1, eps={eps})",
                      tolerance=HALF_TOLERANCE.get(dtype))


def test_normalize_rows_does_not_call_F_normalize(lesson):
    x = seeded(3, 4, seed=18).requires_grad_()
    what = "normalize_rows(x) for x of shape (3, 4)"
    with reported(f"{what} that requires grad", advice=written_into), not_calling_F_normalize(what):
        out = lesson.normalize_rows(x)
    with not_calling_F_normalize(f"the backward of {what}"):
        grad_of(out, x, f"the gradient of {what}")


def test_normalize_rows_gradcheck_float64(lesson):
    x = seeded(3, 4, dtype=torch.float64, seed=7).requires_grad_()
    what = f"normalize_rows(x) for x of {describe(x)}"
    with reported(f"{what} that requires grad", advice=written_into):
        out = lesson.normalize_rows(x)
    grad_of(out, x, what)  # the clear message first
    gradients_agree(lambda t: lesson.normalize_rows(t), (x,), what)


# --- masked_mean -----------------------------------------------------------------------------


@pytest.mark.public
def test_masked_mean_with_an_empty_row(lesson):
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = torch.tensor([[True, False, True], [False, False, False]])
    what = "masked_mean(x, mask, dim=-1) for x = [[1., 2., 3.], [4., 5., 6.]], mask = [[T, F, T], [F, F, F]]"
    check_masked_mean(lesson, x, mask, -1, what=f"{what} (expected [2., 0.]: a row with no True gives 0)")


@pytest.mark.public
@pytest.mark.points(2)
def test_masked_out_inf_and_nan_change_neither_value_nor_gradient(lesson):
    x = torch.tensor([[1.0, INF, 3.0], [NAN, 2.0, -INF]], requires_grad=True)
    mask = torch.tensor([[True, False, True], [False, True, False]])
    what = "masked_mean(x, mask, dim=1) for x = [[1., inf, 3.], [nan, 2., -inf]], mask = [[T, F, T], [F, T, F]]"
    with explains_mask_operators(what):
        out = lesson.masked_mean(x, mask, 1)
    expected = torch.tensor([2.0, 2.0])
    wrong = mismatch(out.detach() if isinstance(out, torch.Tensor) else out, expected, what=what)
    if wrong is not None:
        fail(masked_mean_problem(x, mask, 1, out, expected, wrong))
    got = grad_of(out, x, f"the gradient of {what}")
    assert_close(got, torch.tensor([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]), what=f"the gradient of {what}")


@given(st.deferred(lambda: masked_cases()))
@example((torch.tensor([[1.0, NAN], [INF, 2.0]]), torch.tensor([[True, False], [False, False]]), 0))
@pytest.mark.points(2)
def test_masked_mean_matches_a_row_by_row_mean(lesson, case):
    x, mask, dim = case
    check_masked_mean(lesson, x, mask, dim)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_masked_mean_along_each_dim(lesson, dim):
    x = seeded(3, 4, 5, seed=8)
    mask = seeded(3, 4, 5, seed=9) > 0.3
    check_masked_mean(lesson, x, mask, dim)


def test_selected_inf_and_nan_are_part_of_the_mean(lesson):
    x = torch.tensor([[INF, 1.0], [NAN, 1.0], [-INF, 1.0]])
    mask = torch.ones(3, 2, dtype=torch.bool)
    check_masked_mean(
        lesson, x, mask, 1,
        what="masked_mean(x, mask, dim=1) for x = [[inf, 1.], [nan, 1.], [-inf, 1.]] with every entry "
        "selected (a selected inf or nan is a value like any other: the mean is inf, nan, -inf)",
    )


@pytest.mark.parametrize(("shape", "dim"), [((), 0), ((), -1), ((1,), 0), ((1, 1), -1), ((1, 3), 0), ((3, 1), 1)],
                         ids=lambda v: f"shape {v}" if isinstance(v, tuple) else f"dim={v}")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=dtype_name)
def test_masked_mean_of_small_shapes(lesson, shape, dim, dtype):
    # 0-d (torch.mean(x, 0) takes it too), one-element and size-1 dims: only `dim` goes.
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(15)) * 3).to(dtype)
    for mask in (x > 0, x <= 0, torch.ones_like(x, dtype=torch.bool)):
        check_masked_mean(lesson, x, mask, dim)


@pytest.mark.parametrize(("shape", "dim"), [((3, 0), -1), ((0, 4), 0), ((0, 4), 1), ((0,), 0)],
                         ids=lambda v: f"shape {v}" if isinstance(v, tuple) else f"dim={v}")
def test_masked_mean_of_empty_dims(lesson, shape, dim):
    x, mask = torch.empty(shape), torch.ones(shape, dtype=torch.bool)
    check_masked_mean(lesson, x, mask, dim, what=f"masked_mean(x, mask, dim={dim}) for x of {describe(x)} and an "
                      f"all-True mask of the same shape")


@given(st.deferred(lambda: masked_cases(dtypes=LOW_PRECISION, scales=(1.0, 30.0))))
def test_masked_mean_in_low_precision_keeps_dtype(lesson, case):
    x, mask, dim = case
    check_masked_mean(lesson, x, mask, dim)


@pytest.mark.points(2)
def test_masked_mean_gradient_is_one_over_the_count(lesson):
    x = seeded(3, 4, seed=10).requires_grad_()
    mask = torch.tensor([[True, True, False, True], [False] * 4, [False, True, False, False]])
    what = f"the gradient of masked_mean(x, mask, dim=-1) for x of {describe(x)} and a mask with 3, 0 and 1 True per row"
    with reported(f"masked_mean(x, mask, dim=-1) for x of {describe(x)} that requires grad", advice=written_into):
        out = lesson.masked_mean(x, mask, -1)
    got = grad_of(out, x, what)
    expected = torch.tensor([[1 / 3, 1 / 3, 0, 1 / 3], [0.0] * 4, [0, 1.0, 0, 0]])
    assert_close(got, expected, what=what)


def test_masked_mean_gradcheck_float64(lesson):
    x = seeded(4, 3, dtype=torch.float64, seed=11).requires_grad_()
    mask = torch.tensor([[True, False, True], [False, False, False], [True, True, True], [False, True, False]])
    fn = lambda t: lesson.masked_mean(t, mask, 0)  # noqa: E731 (the call under test, named once)
    what = (f"masked_mean(x, mask, dim=0) for x of {describe(x)} and a mask with "
            f"{', '.join(map(str, mask.sum(0).tolist()))} True per column")
    with reported(f"{what}, x requiring grad", advice=written_into):
        out = fn(x)
    grad_of(out, x, what)
    gradients_agree(fn, (x,), what)


# --- inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", below("FUNCTIONS"))
def test_inputs_are_not_modified(lesson, name):
    x, mask = seeded(6, 5, seed=12), seeded(6, 5, seed=13) > 0
    x_before, mask_before = x.clone(), mask.clone()
    call = "masked_mean(x, mask, dim=1)" if name == "masked_mean" else f"{name}(x)"
    getattr(lesson, name)(*((x, mask, 1) if name == "masked_mean" else (x,)))
    wrong = mismatch(x, x_before, what=f"x after {call} (the caller's tensor must not change)")
    if wrong is not None:
        fail(f"{wrong}\n{in_place_trap(name, x_before, x, mask_before)}")
    assert_close(mask, mask_before, what=f"mask after {call} (the caller's mask must not change)")


# --- devices ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", below("FUNCTIONS"))
def test_results_are_built_on_the_inputs_device(lesson, name):
    # "every result is on the input's device": a tensor built without device= (torch.zeros(...)
    # for the empty slices, a count or an eps as a new tensor) lands on the default device.
    for shape in ((4, 3), (0, 3), (3, 0)):
        for dtype in ((torch.float32, torch.int64, torch.bool) if name == "row_sum" else (torch.float32, torch.float16)):
            x = (torch.randn(shape, generator=torch.Generator().manual_seed(16)) * 3).to(dtype)
            mask = torch.randn(shape, generator=torch.Generator().manual_seed(17)) > 0
            if name == "masked_mean":
                args, expected, call = (x, mask, 1), reference_masked_mean(x, mask, 1), "masked_mean(x, mask, dim=1)"
            elif name == "row_sum":
                args, expected, call = (x,), torch.sum(x, 0), "row_sum(x)"
            else:
                args, expected, call = (x,), reference_normalize(x, eps=eps_for(dtype)), f"normalize_rows(x, eps={eps_for(dtype)})"
            what = f"{call} for x of {describe(x)}{f' and {mask_said(mask)}' if name == 'masked_mean' else ''}, on the CPU"
            kwargs = {"eps": eps_for(dtype)} if name == "normalize_rows" else {}
            getattr(lesson, name)(*args, **kwargs)  # an error of its own is reported as itself, not as a device problem
            out = on_another_default_device(
                lambda: getattr(lesson, name)(*args, **kwargs), what=what,
                fix="Build everything from the inputs (torch.zeros_like, x.new_zeros, device=x.device).")
            if name == "row_sum" and not isinstance(out, torch.Tensor):
                pitfall = row_sum_pitfall(x, out)
                wrong = not_a_tensor(f"{what}, with the default device set to 'meta',", out, expected, "torch.sum(x, dim=0)")
                fail(f"{wrong}\n{pitfall}" if pitfall else wrong)
            wrong = mismatch(out, expected, what=f"{what}, with the default device set to 'meta'",
                             **(order_tolerance(x) if x.is_floating_point() else {}))
            if wrong is not None:
                fail(masked_mean_problem(x, mask, 1, out, expected, wrong) if name == "masked_mean" else wrong)


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    x = seeded(6, 5, seed=14)
    mask = x > 0
    cuda = torch.device("cuda")
    assert_close(lesson.row_sum(x.to(cuda)), torch.sum(x, 0).to(cuda), what="row_sum(x) for x of shape (6, 5) on CUDA")
    assert_close(lesson.normalize_rows(x.to(cuda)), reference_normalize(x).to(cuda),
                 what="normalize_rows(x) for x of shape (6, 5) on CUDA")
    assert_close(
        lesson.masked_mean(x.to(cuda), mask.to(cuda), 1), reference_masked_mean(x, mask, 1).to(cuda),
        what="masked_mean(x, x > 0, 1) for x of shape (6, 5) on CUDA",
    )


# === what the tests use ===========================================================================
#
# `lesson` is the module under test (the learner's, the reference, or a mutant).


def seeded(*shape, dtype=torch.float32, seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def order_tolerance(x: torch.Tensor) -> dict[str, float]:
    """rtol/atol for a sum of x's entries that another correct code adds up in another order:
    the rounding error scales with the largest entry, not with the (maybe cancelled) result."""
    tol = tolerance(x.dtype)
    big = x.float().nan_to_num(0.0, 0.0, 0.0).abs().amax().item() if x.numel() else 0.0
    return {"rtol": tol["rtol"], "atol": tol["atol"] + 8 * torch.finfo(x.dtype).eps * big}


def gradients_agree(fn, inputs, what: str) -> None:
    """torch.autograd.gradcheck, failing with the kit's message rather than torch's traceback."""
    __tracebackhide__ = True
    if not torch.autograd.gradcheck(fn, inputs, raise_exception=False):
        fail(f"{what}: the analytic gradient (backward) differs from the numerical one (finite differences)")


INTO_INPUT = ("This writes into the input (+=, x[...] = ..., a method ending in _), a tensor that requires grad here: "
              "autograd refuses, and the caller's x would change too. Never write into an input: compute a new "
              "tensor (x / norm, torch.where(mask, x, 0)).")


def written_into(exc: BaseException) -> str:
    """Advice for reported(): INTO_INPUT, where autograd refused an in-place write into the input."""
    refused = "a leaf Variable that requires grad is being used in an in-place operation" in str(exc)
    return INTO_INPUT if isinstance(exc, RuntimeError) and refused else ""


@contextmanager
def explains_mask_operators(what: str):
    """The lesson's advice where PyTorch's error names a pitfall of Python's operators on masks:
    bool() of a tensor (`and`, `or`, `not`, `if`, a chained comparison), `-` on a bool tensor."""
    __tracebackhide__ = True
    with reported(what, advice=written_into), explained(
            what, when="Boolean value of Tensor",
            advice="This is Python's `and`, `or`, `not` (or an `if`, or a chained comparison like a < x < b) on a "
            "tensor: they call bool() on it. Combine masks with &, |, ~ and pick values with torch.where."):
        with explained(
                what, when="with a bool tensor is not supported",
                advice="This is `-mask` or `1 - mask` on a bool mask: invert it with `~mask` (or mask.logical_not())."):
            yield


# --- row_sum ---------------------------------------------------------------------------------


def slicing_loop(x: torch.Tensor) -> torch.Tensor:
    """The lesson text's row sum: one select and one add per row."""
    z = torch.zeros(x.shape[1:], dtype=x.dtype)
    for i in range(x.shape[0]):
        z += x[i]
    return z


BUILTIN_SUM = ("This is Python's built-in sum(): it iterates over the tensor, one row at a time, and the sum of "
               "no rows is its start value, the int 0. Use PyTorch's reduction over dim 0.")
NARROW_SUM = ("This is a sum kept in the input's dtype (a dtype= argument, or a running total made in x's dtype: a row "
              "of x, x.new_zeros, torch.zeros_like): a bool sum is True/False instead of a count, and int8 or uint8 sums wrap around. PyTorch's sum, "
              "given no dtype, already gives int64 for bool and integers.")


SUM_OF_ALL = ("This is a sum over every dim (a sum with no dim): one number for the whole tensor. row_sum adds the "
              "rows up, one sum per column: reduce dim 0 only.")
SUM_OVER_DIM1 = ("This is the sum over dim 1, each row's own total: the rows are dim 0, and row_sum adds them up, one "
                 "sum per column (shape x.shape[1:]). Reduce dim 0.")
NUMPY_SUM = ("This is NumPy's sum: it gives unsigned sums as uint64 where PyTorch's gives int64 (and autograd does not "
             "follow .numpy()). Sum with PyTorch's reduction over dim 0.")


# What code that falls into each pitfall of row_sum gives, from x. A pitfall is named only where
# its result is the learner's and not torch.sum(x, dim=0)'s.
ROW_SUM_PITFALLS = [
    Pitfall(sum, BUILTIN_SUM, shows=lambda x: x.shape[:1] == (0,)),  # Python's sum() of no rows: its start, the int 0
    Pitfall(torch.sum, SUM_OF_ALL),
    Pitfall(lambda x: torch.sum(x, dim=1), SUM_OVER_DIM1),
    Pitfall(lambda x: torch.from_numpy(x.numpy().sum(0)), NUMPY_SUM, shows=lambda x: x.dtype == torch.uint8),
]


def row_sum_pitfall(x: torch.Tensor, out) -> str | None:
    """The named pitfall of row_sum whose result `out` is for x (out already known wrong), or None.
    A sum kept in x's dtype is told from its dtype alone: its values may be right where nothing
    wraps around."""
    x = x.detach()
    tol = order_tolerance(x) if x.dtype in FLOATS else {}
    got = out.detach() if isinstance(out, torch.Tensor) else out
    named = pitfall_of(got, torch.sum(x, dim=0), ROW_SUM_PITFALLS, x, match=lambda got, wrong: alike(got, wrong, **tol))
    if named is None and isinstance(out, torch.Tensor) and out.dtype == x.dtype != torch.sum(x, dim=0).dtype:
        return NARROW_SUM
    return named


def alike(got, wrong, **tolerance) -> bool:
    """Two tensors that `same` accepts, or two Python values that are equal (False and 0.0 are
    the int 0 here)."""
    if isinstance(got, torch.Tensor) and isinstance(wrong, torch.Tensor):
        return same(got, wrong, **tolerance)
    return not isinstance(got, torch.Tensor) and not isinstance(wrong, torch.Tensor) and got == wrong


def check_row_sum(lesson, x: torch.Tensor, what: str, **tolerance) -> None:
    """row_sum(x) must equal torch.sum(x, dim=0), dtype included; where it shows a named
    pitfall, say which."""
    __tracebackhide__ = True
    expected = torch.sum(x, dim=0)  # first: a learner's in-place bug may change x
    with reported(what):
        try:
            out = lesson.row_sum(x)
        except IndexError as exc:
            error = exc
        else:
            error = None
    if error is not None:
        if pitfall_raising(error, ROW_SUM_PITFALLS, x) == SUM_OVER_DIM1:
            fail(f"{what} raised {quoted(error)}: x has no dim 1. {SUM_OVER_DIM1}")
        with reported(what):
            raise error
    wrong = mismatch(out, expected, what=what, **tolerance)
    if wrong is None:
        return
    if not isinstance(out, torch.Tensor):
        wrong = not_a_tensor(what, out, expected, "torch.sum(x, dim=0)")
    pitfall = row_sum_pitfall(x, out)
    fail(f"{wrong}\n{pitfall}" if pitfall else wrong)


def not_a_tensor(what: str, out, expected: torch.Tensor, against: str) -> str:
    """What a message says of a call that returned something other than a tensor: "row_sum(x) for x
    of shape (0, 3), float32 returned the Python int 0; expected a tensor of shape (3,), float32, as
    torch.sum(x, dim=0) gives"."""
    value = f"the Python {type(out).__name__} {out!r}" if isinstance(out, (bool, int, float)) else returned(out)
    return (f"{what} returned {value}; expected a tensor of shape {tuple(expected.shape)}, "
            f"{dtype_name(expected.dtype)}, as {against} gives.")


def same_as_torch(lesson_fn, torch_fn, x: torch.Tensor, pitfall, *, what: str, against: str, **options) -> None:
    """assert_same_as(lesson_fn, torch_fn, x, ...) (`what` the call, `against` torch's counterpart
    as a call), a wrong result followed by the pitfall `pitfall(x, out)` names for it (None: none
    is certain)."""
    __tracebackhide__ = True
    try:
        assert_same_as(lesson_fn, torch_fn, x, what=f"{what}, against {against}", **options)
    except AssertionError as exc:
        message = str(exc)
    else:
        return
    with reported(what):
        out = lesson_fn(x.clone(), **{k: v for k, v in options.items() if k == "eps"})
    if not isinstance(out, torch.Tensor):
        message = not_a_tensor(what, out, torch_fn(x, **{k: v for k, v in options.items() if k == "eps"}), against)
    try:
        right = same(out, torch_fn(x, **{k: v for k, v in options.items() if k == "eps"}), **(options.get("tolerance") or {}))
    except Exception:  # noqa: BLE001 (PyTorch refuses this input: no pitfall to name)
        right = True
    cause = None if right else pitfall(x, out)
    fail(f"{message}\n{cause}" if cause else message)


# Shapes and layouts for the differential tests: one dim or more, empty, one-element. (No
# "strided": assert_same_as cannot copy a step-2 view; the hypothesis tests draw those.)
EDGE_CASES = [((5, 3), "contiguous"), ((5, 3), "transposed"), ((4, 2, 3), "transposed"), ((4, 2, 3), "expanded"),
              ((0, 3), "contiguous"), ((3, 0), "contiguous"), ((1,), "contiguous"), ((1, 1), "contiguous"), ((6,), "expanded")]


def edge_tensor(shape, layout, dtype, seed=0) -> torch.Tensor:
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed)).numpy() * 4
    return with_layout(cast(values, dtype), layout)


# --- normalize_rows --------------------------------------------------------------------------


def reference_normalize(x, eps=1e-12):
    return F.normalize(x, p=2, dim=-1, eps=eps)


KEEPDIM = ("This is the norm without keepdim: the norms of (..., N, D) rows have shape (..., N), which lines up "
           "with the LAST dim of x, so each entry is divided by another row's norm (or the shapes clash). Keep "
           "the reduced dim (keepdim=True): (..., N, 1) broadcasts along each row.")
NO_CLAMP = ("This is dividing by the bare norm: a zero row gives 0 / 0 = nan, and a row whose norm is below eps "
            "comes out at length 1 instead of divided by eps. Raise the norm to at least eps before dividing "
            "(clamp_min).")
IGNORES_EPS = ("This is the norm kept at 1e-12 (the default), not at the eps given: normalize_rows(x, eps=...) must "
               "clamp at that eps. Use the `eps` argument: clamp_min(eps).")
EPS_ADDED = ("This is eps added to the norm: x / (norm + eps) changes every row whose norm is near or below eps. "
             "Take max(norm, eps) instead (clamp_min).")
BY_HAND = ("This is the norm as the square root of a sum of squares: in float16, 300 ** 2 already overflows "
           "(65504 is its largest number), and sqrt's derivative at 0 is infinite. Use torch.linalg.vector_norm, "
           "which accumulates half precision in float32 and has a finite gradient at 0.")
GLOBAL_NORM = ("This is one norm for the whole tensor (a norm with no dim): every row is divided by the same number, "
               "so no row has length 1. Take each row's own norm over the last dim, keepdim=True.")
COLUMN_NORM = ("This is the norm over dim 0: each column has length 1, not each row. Take the norm over the last "
               "dim (dim=-1), keepdim=True.")
CAST_KEPT = ("This is a cast for accuracy that is never undone: the result must keep x's dtype. Let "
             "torch.linalg.vector_norm accumulate in float32 for you, or cast the result back.")


# What code that falls into each pitfall of normalize_rows gives, from (x, eps).
NORMALIZE_PITFALLS = [
    Pitfall(lambda x, eps: x / torch.linalg.vector_norm(x, dim=-1).clamp_min(eps), KEEPDIM),
    Pitfall(lambda x, eps: x / torch.linalg.vector_norm(x).clamp_min(eps), GLOBAL_NORM, shows=lambda x, eps: x.dim() >= 2),
    Pitfall(lambda x, eps: x / torch.linalg.vector_norm(x, dim=0, keepdim=True).clamp_min(eps), COLUMN_NORM,
            shows=lambda x, eps: x.dim() >= 2),
    Pitfall(lambda x, eps: x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(1e-12), IGNORES_EPS,
            shows=lambda x, eps: eps != 1e-12),
    Pitfall(lambda x, eps: x / torch.linalg.vector_norm(x, dim=-1, keepdim=True), NO_CLAMP),
    Pitfall(lambda x, eps: x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + eps), EPS_ADDED),
    Pitfall(lambda x, eps: x / (x * x).sum(-1, keepdim=True).sqrt().clamp_min(eps), BY_HAND),
]


@contextmanager
def not_calling_F_normalize(what: str):
    """Fail if the block calls torch.nn.functional.normalize: the lesson asks for it written out."""
    __tracebackhide__ = True
    # Called by any name (F.normalize, `from torch.nn.functional import normalize`): the aten ops
    # grader.testing.forbid sees are the same as a hand-written answer's.
    with functions_called() as called:
        yield
    if function_name(F.normalize) in called:
        fail(f"{what} calls torch.nn.functional.normalize (F.normalize), which this lesson asks you to write "
             "yourself: divide each row by its own norm, kept at eps or above, as the lesson text describes.")


def check_normalize(lesson, x: torch.Tensor, what: str, eps: float | None = None, **tolerance) -> torch.Tensor:
    """normalize_rows(x[, eps]) must equal F.normalize without calling it; where it is what a named
    pitfall gives, say which. Returns the result."""
    __tracebackhide__ = True
    kwargs = {} if eps is None else {"eps": eps}
    eps = 1e-12 if eps is None else eps
    x_before = x.detach().clone()  # first: a learner's in-place bug may change x
    expected = reference_normalize(x_before, eps=eps)
    with reported(what, advice=written_into):
        try:
            with not_calling_F_normalize(what):
                out = lesson.normalize_rows(x, **kwargs)
        except RuntimeError as exc:
            error = exc
        else:
            error = None
    if error is not None:
        if pitfall_raising(error, NORMALIZE_PITFALLS, x, eps) == KEEPDIM:
            fail(f"{what} raised {quoted(error)}. {KEEPDIM}")
        with reported(what, advice=written_into):
            raise error
    wrong = mismatch(out, expected, what=what, **tolerance)
    if wrong is None:
        return out
    cause = normalize_pitfall(x_before, out, eps, **tolerance)
    fail(f"{wrong}\n{cause}" if cause else wrong)


def normalize_pitfall(x: torch.Tensor, out, eps: float = 1e-12, **tolerance) -> str | None:
    """The named pitfall of normalize_rows whose result `out` is for x (out already known wrong), or None.
    A cast never undone is told from the result's dtype alone."""
    if not (isinstance(out, torch.Tensor) and out.is_floating_point()):
        return None
    if out.dtype != x.dtype:
        return CAST_KEPT
    x = x.detach()
    return pitfall_of(out.detach(), reference_normalize(x, eps=eps), NORMALIZE_PITFALLS, x, eps,
                      match=partial(same, **tolerance))


def eps_for(dtype: torch.dtype) -> float:
    """The default eps, or one float16 can hold: it rounds 1e-12 to 0, and a zero row to 0 / 0."""
    return 1e-4 if dtype == torch.float16 else 1e-12


# Gradients (and values) of half precision: each correct order of operations rounds differently.
HALF_TOLERANCE = {torch.float16: {"rtol": 1e-2, "atol": 1e-3}, torch.bfloat16: {"rtol": 5e-2, "atol": 1e-2}}


# --- masked_mean -----------------------------------------------------------------------------


def reference_masked_mean(x, mask, dim):
    """Row by row in float64 with boolean indexing: the mean of the selected entries, or 0."""
    xs, ms = x.detach().double().movedim(dim, -1), mask.movedim(dim, -1)
    out = torch.zeros(xs.shape[:-1], dtype=torch.float64)
    for index in itertools.product(*map(range, out.shape)):
        selected = xs[index][ms[index]]
        out[index] = selected.mean() if selected.numel() else 0.0
    return out.to(x.dtype)


def masked_tolerance(x, mask):
    return order_tolerance(torch.where(mask, x, 0))


MULTIPLIED = ("This is multiplying by the mask: an unselected inf or nan times 0 is nan, which spreads through the "
              "sum (and the gradient). Select with torch.where(mask, x, 0) instead.")
EMPTY_SLICE = ("This is the mean of a slice with nothing selected: 0 / 0, like the mean of no entries (x[mask].mean(), "
               "nanmean), is nan, and a slice with no True gives 0. Sum the selected entries and count them yourself, "
               "and divide by the count kept at 1 or above (clamp_min(1)).")
FLATTENED = ("This is x[mask].mean(): boolean indexing flattens the selection into one row, so one number comes "
             "back for the whole tensor and `dim` is ignored. Keep the shape: torch.where(mask, x, 0) summed along "
             "`dim`, divided by mask.sum(dim).")
FLOAT_COUNT = ("This is a .float() on the count or the mask: it turns a float16 or bfloat16 result into float32. "
               "Divide x's float sum by the int64 count as it is: the float's dtype wins.")


def masked_mean_problem(x, mask, dim, out, expected, wrong: str) -> str:
    """`wrong` (the mismatch's message), with the named pitfall whose trace `out` shows, if any."""
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        return wrong
    got = out.detach()
    if got.dtype == torch.float32 and x.dtype in LOW_PRECISION:
        return f"{wrong}\n{FLOAT_COUNT}"
    tol = masked_tolerance(x.detach(), mask)
    if got.shape != expected.shape:
        if got.dim() == 0 and expected.dim() > 0 and same(got, x.detach()[mask].mean()):
            return f"{wrong}\n{FLATTENED}"
        if got.shape == expected.squeeze().shape and same(got, expected.squeeze(), **tol):
            ones = [d for d in range(x.dim()) if x.shape[d] == 1 and d != dim % x.dim()]
            return (f"{wrong}\nThis is a bare .squeeze(): it also dropped x's other size-1 "
                    f"{'dims' if len(ones) > 1 else 'dim'} (dim {', '.join(map(str, ones))} of {tuple(x.shape)}). "
                    "Remove `dim` only: squeeze(dim), or reduce without keepdim.")
        return wrong
    with torch.no_grad():
        count, total, length = mask.sum(dim), int(mask.sum()), x.shape[dim] if x.dim() else 1  # a 0-d x: one entry
        by_total = torch.where(mask, x.detach(), 0).sum(dim) / max(total, 1)
        by_length = torch.where(mask, x.detach(), 0).sum(dim) / max(length, 1)
    # Each divisor is named only where the other does not give the same numbers (a mask with as
    # many True in all as a slice is long): a divisor the code did not use would mislead.
    if bool((count != length).any()) and same(got, by_length.to(got.dtype), **tol):
        if total == length:
            return wrong
        return (f"{wrong}\nThis divides every slice's sum by the length of dim={dim} ({length}), so unselected entries "
                "count as zeros: divide by each slice's own count of True, mask.sum(dim).")
    if total and bool((count != total).any()) and same(got, by_total.to(got.dtype), **tol):
        counts = count.flatten().tolist()
        shown = ", ".join(map(str, counts[:6])) + (", ..." if len(counts) > 6 else "")
        return (f"{wrong}\nThis divides every slice's sum by the count of the whole mask ({total}), not by each "
                f"slice's own count along dim={dim} ([{shown}]): count with mask.sum(dim).")
    lost_nan = expected.isnan() & ~got.isnan()
    if lost_nan.any():
        with torch.no_grad():
            skipping = torch.where(mask, x.detach(), NAN).float().nanmean(dim).to(got.dtype)
        if same(got[lost_nan], skipping[lost_nan]):
            at = tuple(int(i) for i in lost_nan.nonzero()[0])
            return (f"{wrong}\nThe slice at {at} selects a nan, so its mean is nan, and yours left it out: this is "
                    "nanmean, which drops every nan, a selected one too. Only the mask decides what counts: sum "
                    "torch.where(mask, x, 0) and divide by the count.")
    new_nan = got.isnan() & ~expected.isnan()
    if not new_nan.any():
        return wrong
    count = mask.sum(dim)
    if bool((count[new_nan] == 0).all()):
        return f"{wrong}\n{EMPTY_SLICE}"
    with torch.no_grad():
        multiplied = (x.detach() * mask).sum(dim) / count.clamp_min(1)
    if bool(multiplied.isnan()[new_nan].all()):
        return f"{wrong}\n{MULTIPLIED}"
    return wrong


def mask_said(mask: torch.Tensor) -> str:
    """"mask = [[T, F], [F, T]]" for a mask of up to 8 entries ("mask = False" for a 0-d one), else "a
    mask of shape (3, 4, 5) with 31 of 60 True" (", non-contiguous" where it is)."""
    if mask.dim() == 0:
        return f"mask = {bool(mask)}"
    if mask.numel() == 0:
        return f"an empty mask of shape {tuple(mask.shape)}"
    if mask.numel() <= 8:
        def told(m):
            return f"[{', '.join(told(r) if isinstance(r, list) else 'TF'[not r] for r in m)}]"
        return f"mask = {told(mask.tolist())}"
    layout = "" if mask.is_contiguous() else ", non-contiguous"
    return f"a mask of shape {tuple(mask.shape)} with {int(mask.sum())} of {mask.numel()} True{layout}"


def check_masked_mean(lesson, x, mask, dim, what=None):
    __tracebackhide__ = True
    what = what or f"masked_mean(x, mask, dim={dim}) for x of {describe(x)} and {mask_said(mask)}"
    with explains_mask_operators(what):
        out = lesson.masked_mean(x, mask, dim)
    expected = reference_masked_mean(x, mask, dim)
    wrong = mismatch(out, expected, what=what, **masked_tolerance(x, mask))
    if wrong is not None:
        fail(masked_mean_problem(x, mask, dim, out, expected, wrong))


@st.composite
def masked_cases(draw, dtypes=(torch.float32, torch.float64), scales=(1.0, 30.0, 1e4)):
    """x, a bool mask of its shape (rows with no True included), and a dim; the unselected
    entries hold 0, nan, inf or -inf."""
    x = draw(tensors(shape=shapes(min_side=0), dtypes=dtypes, scales=scales, extremes=False, layouts=("contiguous",)))
    mask = torch.from_numpy(draw(hnp.arrays(np.bool_, tuple(x.shape))))
    x = x.masked_fill(~mask, draw(st.sampled_from([0.0, NAN, INF, -INF])))
    x, mask = with_layout(x, draw(st.sampled_from(ALL_LAYOUTS))), with_layout(mask, draw(st.sampled_from(ALL_LAYOUTS)))
    return x, mask, draw(st.integers(-x.dim(), x.dim() - 1))


# --- inputs ----------------------------------------------------------------------------------


FUNCTIONS = ["row_sum", "normalize_rows", "masked_mean"]


def in_place_trap(name: str, x_before: torch.Tensor, x_after: torch.Tensor, mask: torch.Tensor) -> str:
    """The in-place trap of the lesson text whose trace the caller's x shows, in words."""
    others_kept = torch.equal(x_after[1:], x_before[1:])
    if name == "row_sum" and others_kept and torch.allclose(x_after[0], x_before.sum(0), rtol=1e-5, atol=1e-5):
        return ("This is the running total started at x[0]: x[0] is a view of x, so `total += row` writes every "
                "row into the caller's first row. Start from a new tensor, or better, reduce in one call.")
    if name == "normalize_rows" and torch.allclose(x_after, reference_normalize(x_before), rtol=1e-5, atol=1e-6):
        return "This is the augmented `x /= norm`: it divides the caller's tensor in place. Write `x / norm`."
    if (name == "masked_mean" and torch.equal(x_after[mask], x_before[mask])
            and bool((x_after[~mask] == 0).all()) and not bool((x_before[~mask] == 0).all())):
        return ("This is zeroing the unselected entries with `x[~mask] = 0` (or a masked_fill_): it writes into the "
                "caller's x. Select with torch.where(mask, x, 0), which builds a new tensor.")
    return "An in-place op (`+=`, `/=`, `x[...] = ...`, a method ending in `_`) wrote into it."


CONTRACT = """Contract (lesson text, docstrings, hints) -> the tests that check it:
row_sum
- torch.sum(x, dim=0)'s values and dtype, edge cases included: any shape (one dim or more, empty), dtype
  (bool, integer, float, half, complex) and strides (transposed, expanded) -> test_row_sum_same_as_torch_sum_for_every_dtype,
  test_row_sum_matches_torch_sum, test_row_sum_of_the_example_matrix
- bool and integer inputs give int64 (no wrap-around), floating ones keep their dtype (a sum kept
  in the input's dtype named) -> test_row_sum_of_bool_and_integers_promotes_like_torch,
  test_row_sum_same_as_torch_sum_for_every_dtype
- N = 0 gives zeros of shape x.shape[1:] (built-in sum()'s int 0 named) -> test_row_sum_of_edge_shapes,
  test_row_sum_same_as_torch_sum_for_every_dtype
- one reduction: no loop, no indexing, not built-in sum() -> test_row_sum_runs_the_same_ops_for_10_or_1000_rows,
  test_row_sum_is_much_faster_than_the_slicing_loop (30x)
normalize_rows
- equals F.normalize(x, p=2, dim=-1, eps=eps), values, dtype, shape and gradients, any layout, in
  float64/float32/float16/bfloat16, empty and one-element shapes -> test_normalize_rows_same_as_F_normalize,
  test_normalize_rows_matches_F_normalize, test_normalize_rows_in_low_precision_keeps_dtype,
  test_normalize_rows_of_a_non_contiguous_input
- written out, not a call of torch.nn.functional.normalize under any name (named as such)
  -> test_normalize_rows_does_not_call_F_normalize, test_normalize_rows_with_a_zero_row
- x / max(norm, eps): a zero row gives zeros (no clamp named), tiny rows are divided by eps (eps added
  named), the eps given is used -> test_normalize_rows_with_a_zero_row, test_rows_below_eps_are_divided_by_eps,
  test_eps_argument_is_used
- norm over the last dim with keepdim (a missing keepdim named, square or not)
  -> test_normalize_rows_of_a_square_input, test_normalize_rows_matches_F_normalize
- finite gradients at a zero row; float16 squares that overflow (sqrt of a sum of squares named)
  -> test_zero_rows_have_finite_gradients, test_float16_rows_whose_squares_overflow, test_normalize_rows_gradcheck_float64
- x's dtype (a cast never undone named) -> test_normalize_rows_in_low_precision_keeps_dtype
masked_mean
- the mean of the selected entries along any dim (negative too), x's shape without dim
  -> test_masked_mean_matches_a_row_by_row_mean, test_masked_mean_along_each_dim, test_masked_mean_of_small_shapes
- a slice with no True gives 0 (0 / 0 named); empty dims -> test_masked_mean_with_an_empty_row,
  test_masked_mean_of_empty_dims
- unselected inf/nan change neither value nor gradient (multiplying by the mask named); selected ones
  count -> test_masked_out_inf_and_nan_change_neither_value_nor_gradient, test_selected_inf_and_nan_are_part_of_the_mean,
  test_masked_mean_matches_a_row_by_row_mean
- masks combined with &, |, ~ (`and`/`or`/`not` and `-mask` named) -> test_masked_mean_with_an_empty_row,
  test_masked_mean_matches_a_row_by_row_mean
- gradient 1 / count on selected entries, 0 elsewhere -> test_masked_mean_gradient_is_one_over_the_count,
  test_masked_mean_gradcheck_float64
- x's dtype (float64, float16, bfloat16; a .float() named); any layout of x and mask, expanded included
  -> test_masked_mean_in_low_precision_keeps_dtype, test_masked_mean_matches_a_row_by_row_mean
all three
- no input modified (each in-place trap named when its trace shows) -> test_inputs_are_not_modified
- every result on the input's device -> test_results_are_built_on_the_inputs_device, test_runs_on_the_inputs_device (CUDA)
"""
