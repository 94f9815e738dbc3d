"""Lesson 05, vectorise: checks gather.py against a plain loop over the batch (the classic first
version, written here as the reference) and against PyTorch's own advanced indexing (values,
dtype, device, gradients, the meta device), its refusals, and its speed. `lesson` is the module
under test (the learner's, the reference, or a mutant). Every call goes through gather(), which
names a pitfall of the lesson and its fix where the error or the wrong result is that pitfall's
(pitfalls(), ERRORS). The contract table is CONTRACT, at the end."""

import re
from dataclasses import replace
from functools import partial

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import (apart, assert_close, assert_no_loop, assert_speed, below, describe, dtype_name, expect_raises,
                            grad_of, quoted, reported)
from grader.testing.differential import assert_same_as
from grader.testing.errors import learners_line
from grader.testing.pitfalls import ErrorPitfall, Pitfall, pitfall_of, pitfall_saying
from grader.testing.strategies import ALL_LAYOUTS, ANY_DTYPE, on_meta, shapes, with_layout


# test_matches_a_loop_over_rows's @example runs when the file does: Case is defined before it.
class Case(tuple):
    """A drawn (tensor, indices) pair and the layouts each was drawn in. hypothesis names a failing
    example by its repr: here the shapes, dtypes and layouts, which the call line names (the values
    of a 4-d tensor are a wall of numbers; the comparison names the entry that differs). (The
    test's body stays as it was: hypothesis derives its examples from it.)"""

    def __new__(cls, tensor, indices, layouts=("contiguous", "contiguous")):
        case = super().__new__(cls, (tensor, indices))
        case.layouts = layouts
        return case

    def __repr__(self) -> str:
        (tensor, indices), (layout, index_layout) = self, self.layouts
        return f"tensor of {describe(tensor, layout)} and indices of {describe(indices, index_layout)}"


# --- the examples -----------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_one_pick_per_row(lesson):
    tensor = torch.arange(24).reshape(3, 4, 2)  # B=3, N=4, D=(2,)
    what = "batch_gather(torch.arange(24).reshape(3, 4, 2), tensor([2, 0, 3]))"
    out = gather(lesson, tensor, torch.tensor([2, 0, 3]), what)
    expected = torch.tensor([[4, 5], [8, 9], [22, 23]])  # tensor[0, 2], tensor[1, 0], tensor[2, 3]
    assert_close(out, expected, what=what)


@pytest.mark.public
@pytest.mark.points(2)
def test_several_picks_per_row(lesson):
    # K=2 picks per row, -1 is the last entry of the same row.
    tensor, indices = torch.arange(12).reshape(3, 4), torch.tensor([[3, 0], [1, 1], [-1, 2]])
    what = "batch_gather(torch.arange(12).reshape(3, 4), tensor([[3, 0], [1, 1], [-1, 2]]))"
    assert_close(gather(lesson, tensor, indices, what), torch.tensor([[3, 0], [5, 5], [11, 10]]), what=what)
    # The lesson text's advanced-indexing examples on a grid, as printed there.
    grid = torch.arange(12).reshape(3, 4)
    for rows, cols, shown in [([0, 2, 2], [1, 0, -1], [1, 8, 11]), (1, [0, 3, -1], [4, 7, 7])]:
        assert_close(grid[torch.tensor(rows), torch.tensor(cols)], torch.tensor(shown),
                     what=f"the lesson's example grid[tensor({rows}), tensor({cols})]")


@pytest.mark.points(2)
def test_a_large_batch_matches_the_loop(lesson):
    tensor = make_tensor((512, 1000, 16))
    check_against_loop(lesson, tensor, make_indices(1000, (512,)))


# --- shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "n", "d", "k"), below("SHAPES"), ids=lambda v: str(v).replace(" ", ""))
@pytest.mark.points(2)
def test_shapes_of_tensor_and_indices(lesson, b, n, d, k):
    check_against_loop(lesson, make_tensor((b, n, *d)), make_indices(n, (b, *k)))


def test_as_many_picks_per_row_as_rows(lesson):
    # K == B: where row numbers of shape [B] (not [B, 1]) pair index [i, k] with row k, silently.
    tensor, indices = make_tensor((4, 6, 2)), make_indices(6, (4, 4))
    check_against_loop(lesson, tensor, indices)


@given(st.deferred(lambda: gather_cases()))
@example(Case(torch.arange(12.0).reshape(3, 4), torch.tensor([0, -1, 3])))
@settings(report_multiple_bugs=False)
@pytest.mark.points(2)
def test_matches_a_loop_over_rows(lesson, case):
    check_against_loop(lesson, *case)


# --- indices: negative, out of range, dtypes ---------------------------------------------------


@pytest.mark.points(2)
def test_negative_indices_count_from_the_end_of_the_same_row(lesson):
    tensor = torch.arange(20).reshape(4, 5)
    what = "batch_gather(torch.arange(20).reshape(4, 5), tensor([-1, -5, -2, 0])) (-1 is the last entry of the same row)"
    out = gather(lesson, tensor, torch.tensor([-1, -5, -2, 0]), what)
    assert_close(out, torch.tensor([4, 5, 13, 15]), what=what)


@pytest.mark.parametrize(("shape", "where", "value"), below("OUT_OF_RANGE"), ids=str)
@pytest.mark.points(2)
def test_out_of_range_index_names_the_row(lesson, shape, where, value):
    tensor, indices = make_tensor((5, 7, 2)), make_indices(7, shape)
    indices[where] = value
    what = f"batch_gather(tensor, indices) for tensor of shape (5, 7, 2) with indices{list(where)} = {value}"
    expect_index_error(lesson, tensor, indices, where, value, what)


@pytest.mark.parametrize("layout", ["transposed", "expanded"])
def test_out_of_range_in_non_contiguous_indices(lesson, layout):
    # The position is the one a caller reads in `indices` (row-major over its shape), whatever its strides.
    tensor = make_tensor((5, 6, 2))
    if layout == "transposed":
        indices = make_indices(6, (3, 5), torch.int32).t()  # (5, 3), non-contiguous
        indices[3, 1], indices[4, 0], where, value, later = 6, 9, (3, 1), 6, [(4, 0)]
    else:
        indices = torch.tensor([[1, -2, -7, 40]], dtype=torch.int32).expand(5, 4)  # every row the same, stride 0
        where, value, later = (0, 2), -7, [(0, 3), (1, 2), (4, 3)]
    what = f"batch_gather(tensor, indices) for tensor of shape (5, 6, 2) and {layout} int32 indices {indices.tolist()}"
    expect_index_error(lesson, tensor, indices, where, value, what, later=later)


def test_first_bad_row_is_named(lesson):
    tensor, indices = make_tensor((6, 4)), make_indices(4, (6, 2))
    indices[4, 0], indices[1, 1] = 5, -6
    expect_index_error(
        lesson, tensor, indices, (1, 1), -6, later=[(4, 0)],
        what="batch_gather(tensor, indices) for tensor of shape (6, 4) with indices[1, 1] = -6 and indices[4, 0] = 5",
        why="Both are out of range: report the first (row-major order).",
    )


@pytest.mark.parametrize(("b", "k"), [(3, ()), (3, (2,)), (1, (1,))])
def test_nothing_is_in_range_of_an_empty_dim(lesson, b, k):
    tensor, indices = torch.zeros(b, 0, 2), torch.zeros((b, *k), dtype=torch.long)
    expect_index_error(lesson, tensor, indices, (0,) * indices.dim(), 0, what=call(tensor, indices),
                       why="With N = 0 there is no entry to pick, so index 0 is out of range.")


@pytest.mark.parametrize("dtype", below("INDEX_DTYPES"), ids=str)
def test_int32_and_int64_indices(lesson, dtype):
    tensor = make_tensor((4, 6, 3))
    check_against_loop(lesson, tensor, make_indices(6, (4, 2), dtype))


@pytest.mark.parametrize("dtype", below("REFUSED_INDEX_DTYPES"), ids=str)
def test_other_index_dtypes_are_refused(lesson, dtype):
    # A (3, 3, 2) tensor: a mask of three True entries along dim 1 fits it, so a bool or uint8
    # index read as a mask gives a result (the diagonal) rather than an error.
    tensor, indices = make_tensor((3, 3, 2)), torch.tensor([1, 1, 1]).to(dtype)
    name = dtype_name(dtype)
    what = call(tensor, indices)
    try:
        out = lesson.batch_gather(tensor, indices)
    except NotImplementedError as exc:
        if stub_todo(exc):
            raise
        message = f"{what} raised NotImplementedError({str(exc)[:200]!r}); expected a TypeError naming {name}."
    except TypeError as exc:
        if name in str(exc):
            return
        message = f"{what} raised TypeError({str(exc)!r}); name the dtype you got, {name}, in the message."
    except Exception as exc:  # noqa: BLE001 (the wrong exception is the learner's to see)
        advice = pitfall_saying(exc, INDEX_DTYPE_ERRORS) or ""
        message = (f"{what} raised {quoted(exc)}; expected a TypeError naming {name}: "
                   f"indices must be int64 or int32. {advice}".rstrip() + cuda_advice(exc, tensor, indices))
    else:
        message = (f"{what} returned a result of shape {tuple(out.shape)} without an error; expected a TypeError "
                   f"naming {name}: indices must be int64 or int32. "
                   + (MASK if dtype in (torch.bool, torch.uint8) else ""))
    pytest.fail(message, pytrace=False)


@pytest.mark.parametrize(("tensor_shape", "indices_shape"), below("MISFITS"), ids=str)
def test_shapes_that_do_not_fit_are_refused(lesson, tensor_shape, indices_shape):
    tensor, indices = make_tensor(tensor_shape), torch.zeros(indices_shape, dtype=torch.long)
    what = call(tensor, indices)
    batch_of_one = len(indices_shape) >= 1 and indices_shape[0] == 1 and len(tensor_shape) >= 2 and tensor_shape[0] > 1
    try:
        out = lesson.batch_gather(tensor, indices)
    except NotImplementedError as exc:
        if stub_todo(exc):
            raise
        message = f"{what} raised NotImplementedError({str(exc)[:200]!r}); expected a ValueError naming both shapes."
    except Exception as exc:  # noqa: BLE001 (the refusal, or the wrong exception)
        both = (", ".join(map(str, tensor_shape)), ", ".join(map(str, indices_shape)))
        if isinstance(exc, ValueError) and all(m in str(exc) for m in both):
            return
        problem = (f"name both shapes, {tensor_shape} and {indices_shape}" if isinstance(exc, ValueError)
                   else "expected a ValueError naming both shapes")
        message = (f"{what} raised {quoted(exc)}; {problem}: tensor must be [B, N, ...] "
                   "and indices [B, ...] with the same B." + cuda_advice(exc, tensor, indices))
    else:
        message = (f"{what} returned a result of shape {tuple(out.shape)} without an error; expected a ValueError "
                   "naming both shapes: tensor must be [B, N, ...] and indices [B, ...] with the same B. "
                   + (BROADCAST if batch_of_one else ""))
    pytest.fail(message, pytrace=False)


@pytest.mark.parametrize(("tensor_shape", "indices", "error", "why"), below("CHECK_ORDER"),
                         ids=["shape-and-dtype", "shape-and-range", "float-dtype-and-range", "uint8-dtype-and-range"])
def test_checks_come_in_order(lesson, tensor_shape, indices, error, why):
    tensor = make_tensor(tensor_shape)
    run = partial(lesson.batch_gather, tensor, indices)
    try:
        expect_raises(run, error, what=call(tensor, indices) + f" = {indices.tolist()}",
                      why=f"this input is wrong in two ways; {why}: shapes, then dtype, then range.")
    except pytest.fail.Exception as failed:  # the wrong error, or none: a hard-coded .cuda()'s is named
        advice = cuda_advice(error_of(run), tensor, indices)
        if not advice:
            raise
        message = f"{failed.msg}{advice}"
    else:
        return
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


# --- empty sizes, dtypes, layouts, inputs -----------------------------------------------------


@pytest.mark.parametrize(("tensor_shape", "indices_shape"), below("EMPTY"), ids=str)
def test_empty_sizes(lesson, tensor_shape, indices_shape):
    tensor, indices = torch.zeros(tensor_shape), torch.zeros(indices_shape, dtype=torch.long)
    expected = torch.zeros((tensor_shape[0], *indices_shape[1:], *tensor_shape[2:]))
    what = call(tensor, indices) + " (empty result)"
    assert_close(gather(lesson, tensor, indices, what), expected, what=what)


@pytest.mark.parametrize("dtype", below("DTYPES"), ids=str)
def test_keeps_the_dtype(lesson, dtype):
    tensor = make_tensor((4, 6, 3), dtype)
    indices = make_indices(6, (4, 2))
    check_against_loop(lesson, tensor, indices, what=call(tensor, indices) + " (the result keeps tensor's dtype)")


@pytest.mark.parametrize("layout", ["transposed", "sliced", "sliced inner", "expanded"])
@pytest.mark.points(2)
def test_non_contiguous_tensor(lesson, layout):
    base = make_tensor((7, 10, 3), seed=4)  # (N, 2B, D)
    tensor = {
        "transposed": base.transpose(0, 1),  # (10, 7, 3)
        "sliced": base.transpose(0, 1)[::2],  # (5, 7, 3), every other row
        "sliced inner": make_tensor((5, 7, 6), seed=4)[..., ::2],  # (5, 7, 3)
        "expanded": base[:1, :1].expand(5, 7, 3),  # (5, 7, 3), one value everywhere, strides 0
    }[layout]
    check_against_loop(lesson, tensor, make_indices(7, (tensor.shape[0], 4)))


def test_non_contiguous_indices(lesson):
    tensor, indices = make_tensor((4, 6, 3)), make_indices(6, (3, 4)).t()  # (4, 3)
    check_against_loop(lesson, tensor, indices)


def test_inputs_are_not_modified(lesson):
    tensor, indices = make_tensor((4, 6, 3)), torch.tensor([[-1, 2], [0, -6], [5, -3], [-2, -2]])
    tensor_before, indices_before = tensor.clone(), indices.clone()
    what = call(tensor, indices) + ", with negative indices"
    gather(lesson, tensor, indices, what)
    check_unchanged("tensor", tensor, tensor_before, what)
    check_unchanged("indices", indices, indices_before, what)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("shape", "dtype", "layout", "index_shape", "index_dtype", "index_layout"), below("SAME_AS_INDEXING"),
                         ids=lambda v: dtype_name(v).replace(" ", ""))
def test_same_as_advanced_indexing(lesson, shape, dtype, layout, index_shape, index_dtype, index_layout, device):
    # tensor[arange(B).view(B, 1, ..., 1), indices]: values, dtype, shape, device and the
    # gradients it gives `tensor`. On `meta` (shapes, no values) code that moves data to the CPU,
    # reads values into Python or makes the row numbers on the default device shows itself.
    tensor = with_layout(make_tensor(shape, dtype), layout)
    indices = with_layout(make_indices(shape[1], index_shape, index_dtype), index_layout)
    if device == "meta":
        tensor, indices = on_meta(tensor), on_meta(indices)
    what = (f"batch_gather(tensor, indices) for tensor of {describe(tensor, layout)}, and indices of "
            f"{describe(indices, index_layout)}, both on the {device} device")
    try:
        assert_same_as(partial(gather, lesson, what=what), advanced_indexing, tensor, indices, what=what, grads=True)
    except AssertionError as exc:  # the values are named by gather; a gradient's pitfall here
        pitfall = gradient_pitfall(lesson, tensor, indices)
        if pitfall is None:
            raise
        message = f"{exc}\n{pitfall}"
    else:
        message = None
    if message:
        pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback
    if device == "meta":
        return
    tensor_before, indices_before = tensor.clone(), indices.clone()
    out = lesson.batch_gather(tensor, indices)
    check_unchanged("tensor", tensor, tensor_before, what)
    check_unchanged("indices", indices, indices_before, what)
    if out.numel() and out.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr():
        pytest.fail(f"{what} returned a view of `tensor`; the docstring promises a new tensor.", pytrace=False)


# --- gradients --------------------------------------------------------------------------------


@pytest.mark.points(2)
def test_gradient_adds_up_over_repeated_indices(lesson):
    tensor = torch.randn(3, 5, 2, generator=torch.Generator().manual_seed(0), requires_grad=True)
    indices = torch.tensor([[1, 1, 4], [0, -5, 2], [3, -2, 3]])  # repeats, also through a negative index
    upstream = torch.randn(3, 3, 2, generator=torch.Generator().manual_seed(1))
    what = (f"the gradient of batch_gather(tensor, indices) for tensor of {describe(tensor)} and indices = "
            f"{indices.tolist()} (repeated indices)")
    expected = grad_of(loop_gather(tensor, indices), tensor, what, upstream)
    assert_close(grad_of(gather(lesson, tensor, indices, what), tensor, what, upstream), expected,
                 what=what + " (each pick adds its upstream gradient to the entry it read)")


@pytest.mark.parametrize("k", [(), (4,)], ids=["indices [B]", "indices [B, K]"])
def test_gradcheck_float64(lesson, k):
    tensor = torch.randn(3, 4, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64, requires_grad=True)
    indices = make_indices(4, (3, *k))
    what = call(tensor, indices)
    grad_of(gather(lesson, tensor, indices, what), tensor, what)
    ok = torch.autograd.gradcheck(lambda t: lesson.batch_gather(t, indices), (tensor,), raise_exception=False)
    if not ok:
        pytest.fail(f"{what}: analytic and numerical gradients differ", pytrace=False)


# --- no loop over the batch, speed, devices ---------------------------------------------------


@pytest.mark.points(2)
def test_runs_the_same_ops_for_8_or_256_rows(lesson):
    gather(lesson, make_tensor((8, 50, 4)), make_indices(50, (8,)))  # an error of its own, named where it can be
    assert_no_loop(
        lambda b: partial(lesson.batch_gather, make_tensor((b, 50, 4)), make_indices(50, (b,))), 8, 256,
        what="batch_gather(tensor, indices)", unit="rows", hint=loop_hint(lesson),
    )


@pytest.mark.speed
@pytest.mark.points(2)
def test_much_faster_than_the_loop(lesson):
    tensor, indices = make_tensor((512, 1000, 16)), make_indices(1000, (512,))
    gather(lesson, tensor, indices)  # an error of its own, named where it can be
    assert_speed(
        lambda: classic_loop(tensor, indices), lambda: lesson.batch_gather(tensor, indices),
        at_least=5, what="batch_gather(tensor, indices) for tensor of shape (512, 1000, 16) and indices of shape (512,)",
        baseline_name="the loop `tensor[i][indices[i]]` over rows",
        hint=loop_hint(lesson),
        # Fresh values each call: the 512 rows read come from memory, not the cache (MEASUREMENTS.md).
        fresh_at_least=1.5,
    )


@pytest.mark.speed
def test_range_check_is_vectorised(lesson):
    # 262144 indices: one comparison over all of them costs about as much as the gather itself;
    # a Python loop over indices.tolist() (no tensor ops, so the op count cannot see it) is ~40x slower.
    tensor, indices = make_tensor((64, 100)), make_indices(100, (64, 4096))
    what = call(tensor, indices)
    gather(lesson, tensor, indices, what)  # an error or a pitfall named before any timing
    try:
        assert_speed(
            lambda: advanced_indexing(tensor, indices), lambda: lesson.batch_gather(tensor, indices),
            at_least=0.25, what=what,
            baseline_name="the bare gather `tensor[rows, indices]` without any check",
            fresh_at_least=0.15,  # fresh indices each call, in another process (MEASUREMENTS.md)
        )
    except AssertionError as exc:
        slow = str(exc)
    else:
        return
    how = python_loop_over_values(lambda: lesson.batch_gather(tensor, indices))
    pytest.fail(slow + ("\n" + VALUES_LOOP.format(how=how) if how else ""), pytrace=False)


def test_result_is_on_the_inputs_device(lesson):
    # On a machine without CUDA, code that hard-codes .cuda() fails here.
    tensor, indices = make_tensor((3, 4, 2)), torch.tensor([1, -1, 0])
    out = gather(lesson, tensor, indices)
    if out.device != tensor.device:
        pytest.fail(f"{call(tensor, indices)} returned a tensor on {out.device} for input on {tensor.device}",
                    pytrace=False)


@pytest.mark.cuda
def test_runs_on_cuda(lesson):
    tensor, indices = make_tensor((6, 9, 4)).cuda(), make_indices(9, (6, 3)).cuda()
    what = f"{call(tensor, indices)} on CUDA"
    assert_close(gather(lesson, tensor, indices, what), loop_gather(tensor.cpu(), indices.cpu()).cuda(), what=what)
    indices[2, 1] = 9
    expect_raises(lambda: lesson.batch_gather(tensor, indices), IndexError,
                  what=f"{call(tensor, indices)} on CUDA, index 9 with N=9",
                  why="out of range", mention=("row 2",))


# --- the helpers, scenarios and tables the tests use ---------------------------------------------


DTYPES = ANY_DTYPE  # "any dtype": floats, half, integers, bool, complex
INDEX_DTYPES = (torch.int64, torch.int32)


def loop_gather(tensor, indices):
    """The reference: one row at a time, as the definition reads."""
    if tensor.shape[0] == 0:
        return tensor.new_empty((0, *indices.shape[1:], *tensor.shape[2:]))
    return torch.stack([tensor[i][indices[i]] for i in range(tensor.shape[0])])


def classic_loop(tensor, indices):
    """The classic first batch_gather, the baseline of the speed test."""
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def advanced_indexing(tensor, indices):
    """PyTorch's counterpart: one advanced-indexing call with row numbers of shape [B, 1, ..., 1]."""
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]


def make_tensor(shape, dtype=torch.float32, seed=0):
    """Distinct, exactly representable values (small integers) in any dtype."""
    values = torch.randint(-100, 100, shape, generator=torch.Generator().manual_seed(seed))
    if dtype.is_complex:  # an imaginary part of its own, so that dropping it shows
        return torch.complex(values.float(), values.flip(tuple(range(values.dim()))).float()).to(dtype)
    return values > 0 if dtype == torch.bool else values.to(dtype)


def make_indices(n, shape, dtype=torch.int64, seed=1):
    """Valid indices into a dim of size n, negative ones included."""
    return torch.randint(-n, n, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def stub_todo(exc) -> bool:
    """A stub's bare NotImplementedError (the kit reports it as a TODO), not one of PyTorch's own
    ("remainder_cpu" not implemented for 'ComplexFloat'), which is the code's error to report."""
    return isinstance(exc, NotImplementedError) and not str(exc)


def call(tensor, indices):
    return f"batch_gather(tensor, indices) for tensor of {describe(tensor)} and indices of {describe(indices)}"


# --- the pitfalls the lesson names: their fixes, and how to recognise them ----------------------

ROWS = ("Index tensors broadcast against each other from the right, like the operands of +: row numbers "
        "with fewer axes than `indices` line up with its LAST axes, so index [i, k] meets the wrong row "
        "(an error, or silently wrong rows when two sizes agree). Give the row numbers one axis per axis "
        "of indices, [B, 1, ..., 1].")
COLUMNS = ("Every row got every row's picks, [B, B, K..., *D]: what tensor[:, indices] gives (a `:` keeps "
           "all rows for every index), or row numbers with one axis too many. Pair each index with its own "
           "row instead: row numbers with one axis per axis of indices, [B, 1, ..., 1].")
FLAT = ("This is the flat-offset pitfall: in tensor.reshape(B * N, ...) the flat index i*N + (-1) is the last "
        "entry of row i-1, and i*N + N the first entry of row i+1, not entries of row i. Turn negative "
        "indices into non-negative ones first (in a new tensor) and check the range, or index with row "
        "numbers, which count a negative index from the end of its own row.")
STEP = ("This is the flat-offset step pitfall: row i starts at i*N in the flattened tensor, with N = "
        "tensor.shape[1] (the size of the dim you pick from), not at i*B.")
MODULO = ("This is the `% N` pitfall: indices % N maps an out-of-range index into range as silently as it maps "
          "-1 (here {value} % {n} = {wrapped}). Check the range before anything else reads the indices.")
VIEW = ("This is the .view pitfall: .view cannot merge the first two dims of a non-contiguous tensor "
        "(transposed or sliced); .reshape copies when it must, and indexing with row numbers needs no merge.")
META = ("This is the meta pitfall: a tensor on the meta device has a shape but no values, so the range check "
        "cannot read its answer (`if mask.any():`, .item(), .tolist()). Skip the range check when indices.is_meta.")
META_READ = ("A tensor on the meta device has a shape but no values, and the line above needs one: indexing with a 0-d "
             "index tensor (indices[i]) reads its value, as .item() and int() do. Work on whole tensors, reading no "
             "value into Python.")
DEVICE = ("This is the device pitfall: a tensor made without device= (torch.arange(B), torch.tensor(...)) lands "
          "on the default device (the CPU) whatever the input's device: make it with device=tensor.device.")
CUDA = ("This is the device pitfall: a hard-coded .cuda() (or device=\"cuda\") fails on a machine without a GPU; "
        "make new tensors on the input's device, with device=tensor.device.")
TORCH_ERROR = ("That is PyTorch's own error: it names neither the position in `indices` nor the row. Check the "
               "range yourself before indexing, and raise the IndexError the docstring shows.")
TORCH_DTYPE_ERROR = ("That is PyTorch's own IndexError, not the TypeError the docstring promises: check "
                     "indices.dtype yourself, before indexing, and name it in the message.")
MASK = ("PyTorch reads a bool or uint8 index tensor as a mask (keep or drop each position), not as positions: "
        "refuse it with TypeError naming its dtype.")
BROADCAST = ("Indices of batch size 1 broadcast silently over every row: compare indices.shape[0] with "
             "tensor.shape[0] and raise ValueError naming both shapes.")
JIT = ("The function is a TorchScript function: @torch.jit.script does not remove the loop, the scripted "
       "code still runs one select and one index per row. Index all rows in one call instead.")
NOT_EXPANDED = ("torch.gather picks along one dim and gives back the shape of its index: an index of shape [B, K, 1] "
                "reads one entry of each D slice, not all of them. Expand the index over the trailing dims first, "
                "index.expand(B, K, *D).")
MASK_ON_META = ("This is boolean-mask indexing on the meta device: x[mask] (and x[mask] += ...) must know how many "
                "entries the mask selects, and a meta tensor has a shape but no values. torch.where(indices < 0, "
                "indices + N, indices) needs no values, and makes a new tensor.")
DEFAULT_DTYPE = ("This is a result in the default dtype: torch.zeros or torch.empty without dtype= (or a .float()) "
                 "make float32, whatever tensor's dtype. Make it with tensor.new_empty(...) (or dtype=tensor.dtype), "
                 "or return the indexing's own result.")
NUMPY_ERROR = ("That is NumPy's own error (it says axis where PyTorch says dimension): it names neither the position "
               "in `indices` nor the row. Check the range yourself before indexing, and raise the IndexError the "
               "docstring shows; and index in torch: NumPy has no bfloat16, and autograd does not follow .numpy().")
VALUES_LOOP = ("batch_gather ran a Python loop over the index values ({how}): one Python step per index, "
               "however few tensor ops it runs. Compare the whole indices tensor with -N and N at once.")


def identical(a, b) -> bool:
    """Same shape, dtype, device and values, exactly (torch.equal: a pick is an exact copy, so no tolerance)."""
    return (isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
            and a.device == b.device and torch.equal(a.detach(), b.detach()))


def pitfalls(tensor, indices) -> list[Pitfall]:
    """The wrong results the lesson's pitfalls give on (tensor, indices), each told as what computed
    it and the pitfall's fix; none where the input is one no pitfall runs on (meta, too few dims,
    a refused index dtype)."""
    if tensor.is_meta or tensor.dim() < 2 or indices.dim() < 1 or indices.dtype not in INDEX_DTYPES:
        return []
    b, n = tensor.shape[:2]
    found = [Pitfall(lambda t, i, axes=axes: t[rows(t, axes), i],
                     f"row numbers of shape {[b, *[1] * (axes - 1)]}. {ROWS}")
             for axes in range(1, indices.dim())]  # fewer axes than indices
    found += [
        Pitfall(lambda t, i: t[:, i], f"tensor[:, indices]. {COLUMNS}"),
        Pitfall(lambda t, i: unexpanded_gather(t, i), f"torch.gather with an index not expanded over the trailing dims. "
                f"{NOT_EXPANDED}", shows=lambda t, i: t.dim() > 2),
        Pitfall(lambda t, i: flat(t)[i + rows(t, i.dim()) * n], f"the flat offset i*N. {FLAT}"),
        Pitfall(lambda t, i: flat(t)[i + rows(t, i.dim()) * b], f"the flat offset i*B. {STEP}"),
        Pitfall(lambda t, i: flat(t)[torch.where(i < 0, i + n, i) + rows(t, i.dim()) * b], f"the flat offset i*B. {STEP}"),
    ]
    if n:
        bad = (indices < -n) | (indices >= n)
        value = indices[tuple(bad.nonzero()[0].tolist())].item() if bad.any() else None
        modulo = MODULO.format(value=value, n=n, wrapped=None if value is None else value % n)
        found.append(Pitfall(lambda t, i: t[rows(t, i.dim()), i % n], f"indices % N. {modulo}"))
    return found


def rows(tensor, axes):
    """Row numbers [B, 1, ..., 1] with `axes` axes, on tensor's device."""
    return torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (axes - 1))


def flat(tensor):
    """tensor with its first two dims merged, [B * N, *D]."""
    return tensor.reshape(tensor.shape[0] * tensor.shape[1], *tensor.shape[2:])


def unexpanded_gather(tensor, indices):
    """torch.gather along dim 1 with negative indices wrapped, and the index not expanded over D."""
    b, n, trailing = tensor.shape[0], tensor.shape[1], [1] * (tensor.dim() - 2)
    index = torch.where(indices < 0, indices + n, indices).long()
    return torch.gather(tensor, 1, index.reshape(b, -1, *trailing)).reshape(*indices.shape, *trailing)


# The errors whose message, with the inputs, gives a pitfall of the lesson away (the first that fits).
ERRORS = [
    ErrorPitfall(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver", CUDA),
    ErrorPitfall(r"view size is not compatible", VIEW),
    ErrorPitfall(r"index (-\d+) is out of bounds for dimension \d+ with size (\d+)", lambda error, t, i: negative_refused(error, i)),
    ErrorPitfall(r"shape mismatch: indexing tensors could not be broadcast|must match the size of tensor"
                 r"|Attempting to broadcast a dimension", ROWS, shows=lambda t, i: i.dim() >= 2),  # (the last on meta)
    # a range check's read of its answer, where the learner's line reads one; indexing with a 0-d
    # index tensor (a row loop's indices[i]) reads its value too, and is no range check
    ErrorPitfall(r"cannot be called on meta tensors", lambda error, t, i: meta_read(error)),
    ErrorPitfall(r"(?s)meta.*data|data.*meta", lambda error, t, i: meta_read(error), shows=lambda t, i: i.is_meta),
    ErrorPitfall(r"is not on the expected device|Expected all tensors to be on the same device"
                 r"|indices should be either on cpu or on the same device", DEVICE),
]
# A NotImplementedError: torch.nonzero's, on meta, is boolean-mask indexing (one cause only; a .numpy()
# or an .item() on meta says "Cannot copy out of meta tensor", which is no range check's for certain).
NOT_IMPLEMENTED_ON_META = [ErrorPitfall(r"torch\.nonzero", MASK_ON_META, shows=lambda t, i: t.is_meta or i.is_meta)]
# An IndexError of the indexing itself, where the docstring's own is expected.
FOREIGN_RANGE_ERRORS = [ErrorPitfall(r"out of bounds for dimension", TORCH_ERROR),
                        ErrorPitfall(r"out of bounds for axis", NUMPY_ERROR)]
INDEX_DTYPE_ERRORS = [ErrorPitfall(r"mask", MASK), ErrorPitfall(r"must be long, int", TORCH_DTYPE_ERROR)]


def negative_refused(error, indices) -> str | None:
    """The advice where `error` refuses a valid negative index of the learner's own input (torch.gather's
    error: it does not wrap them), else None."""
    refused = re.search(r"index (-\d+) is out of bounds for dimension \d+ with size (\d+)", str(error))
    if -int(refused[2]) <= int(refused[1]) < 0 and bool((indices == int(refused[1])).any()):
        return (f"The index {refused[1]} is valid: it counts from the end of its row. torch.gather does not "
                "wrap negative indices (it calls them out of bounds): turn them into i + N first, "
                "torch.where(indices < 0, indices + N, indices), after checking the range.")
    return None


def meta_read(error) -> str:
    """META where the learner's line that raised `error` is a range check's, else META_READ."""
    return META if re.search(r"\.(?:any|all|item|tolist)\(|\bif\b|[<>]=?", learners_line(error)) else META_READ


def difference(out, expected) -> str:
    """How `out` differs from `expected`, in numbers."""
    if not isinstance(out, torch.Tensor):
        return f"a {type(out).__name__}, not a tensor"
    if out.shape != expected.shape:
        return f"a result of shape {tuple(out.shape)}; expected {tuple(expected.shape)}"
    if out.dtype != expected.dtype:
        return f"a result of dtype {dtype_name(out.dtype)}; expected {dtype_name(expected.dtype)}"
    wrong = (out.detach() != expected.detach()).nonzero()
    first = tuple(wrong[0].tolist())
    mine, theirs = apart(out[first].item(), expected[first].item())
    return f"{len(wrong)} of {expected.numel()} entries wrong (at {list(first)}: got {mine}, expected {theirs})"


def named_pitfall(out, tensor, indices, expected=None):
    """The failure message for a wrong `out` exactly what a named pitfall gives (and `expected`, the right
    result, not; None where the right answer is an error), or None."""
    told = pitfall_of(out, expected, pitfalls(tensor, indices), tensor.detach(), indices.detach(), match=identical)
    return f"the result is exactly what you get from {told}" if told else None


def gradient_pitfall(lesson, tensor, indices):
    """The failure's second line when batch_gather's gradient is exactly what a named pitfall gives
    (its values can be right: the rows of an expanded tensor are all alike), or None."""
    if tensor.is_meta or not tensor.is_floating_point():
        return None
    leaf = tensor.detach().clone().requires_grad_()
    (mine,) = torch.autograd.grad(lesson.batch_gather(leaf, indices).sum(), leaf)
    (expected,) = torch.autograd.grad(advanced_indexing(leaf, indices).sum(), leaf)
    gradients = [replace(pitfall, gives=lambda t, i, gives=pitfall.gives: torch.autograd.grad(gives(t, i).sum(), t)[0])
                 for pitfall in pitfalls(leaf, indices)]
    told = pitfall_of(mine, expected, gradients, leaf, indices.detach(), match=identical)
    return f"That gradient is exactly the one you get from {told}" if told else None


def cuda_advice(exc, tensor, indices) -> str:
    """The device pitfall on a line of its own where `exc` is a hard-coded .cuda()'s, else "" (a test
    of refusals names no other pitfall of an error: its inputs are wrong on purpose)."""
    return f"\n{CUDA}" if exc is not None and pitfall_saying(exc, ERRORS, tensor, indices) is CUDA else ""


def gather(lesson, tensor, indices, what=None):
    """lesson.batch_gather(tensor, indices) for valid input; a named pitfall fails with its name and fix."""
    __tracebackhide__ = True
    what = what or call(tensor, indices)
    # An error no pitfall explains is told with the call and the learner's lines; so is a value read on
    # the meta device outside a range check, which is about the learner's line.
    with reported(what, advice=lambda exc: META_READ if pitfall_saying(exc, ERRORS, tensor, indices) is META_READ else ""):
        try:
            out = lesson.batch_gather(tensor, indices)
        except NotImplementedError as exc:
            if stub_todo(exc):
                raise
            # torch.nonzero's, on meta: boolean-mask indexing (one cause only; a .numpy() or an .item() on meta
            # says "Cannot copy out of meta tensor", which is no range check's for certain)
            advice = pitfall_saying(exc, NOT_IMPLEMENTED_ON_META, tensor, indices)
            out, message = None, f"{what} raised {quoted(exc)}"
            message += f".\n{advice}" if advice else ""
        except Exception as exc:  # noqa: BLE001 (a pitfall's error is named; any other is reported)
            advice = pitfall_saying(exc, ERRORS, tensor, indices)
            if advice is None or advice is META_READ:
                raise
            out = None
            message = f"{what} raised {quoted(exc)}.\n{advice}"
    if out is None:
        pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback
    if isinstance(out, torch.Tensor) and not tensor.is_meta and not indices.is_meta:
        expected = advanced_indexing(tensor.detach(), indices)
        if not identical(out, expected):
            named = named_pitfall(out, tensor, indices, expected)
            if named:
                pytest.fail(f"{what} gave {difference(out, expected)}: {named}", pytrace=False)
            if default_dtype_result(out, tensor, expected):
                pytest.fail(f"{what} returned the right values in {dtype_name(out.dtype)}, not in "
                            f"tensor's dtype, {dtype_name(tensor.dtype)}.\n{DEFAULT_DTYPE}", pytrace=False)
    return out


def default_dtype_result(out, tensor, expected) -> bool:
    """Whether `out` is the right values in the default dtype, where `tensor` has another."""
    if not isinstance(out, torch.Tensor) or out.dtype != torch.get_default_dtype() or tensor.dtype == out.dtype:
        return False
    if tensor.is_complex() or out.shape != expected.shape:
        return False
    return torch.equal(out.detach(), expected.detach().to(out.dtype))


def check_against_loop(lesson, tensor, indices, what=None):
    __tracebackhide__ = True
    what = what or call(tensor, indices)
    assert_close(gather(lesson, tensor, indices, what), loop_gather(tensor, indices), what=what, rtol=0, atol=0)


SHAPES = [  # (B, N, D, indices.shape[1:])
    (5, 7, (), ()),
    (5, 7, (3,), ()),
    (5, 7, (2, 3), ()),
    (5, 7, (), (3,)),
    (5, 7, (3,), (3,)),
    (5, 7, (2, 3), (4, 2)),
    (5, 7, (3,), (2, 3, 2)),
    (1, 7, (3,), ()),
    (1, 7, (3,), (4,)),
    (6, 2, (3,), (9,)),
]


@st.composite
def gather_cases(draw, dtypes=DTYPES):
    """A tensor [B, N, *D] in any dtype and layout, and valid indices [B, K...] for it (a Case)."""
    b, n = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    d = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    k = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    seed = draw(st.integers(0, 2**16))
    tensor = make_tensor((b, n, *d), draw(st.sampled_from(dtypes)), seed)
    layout = draw(st.sampled_from(ALL_LAYOUTS))
    indices = make_indices(n, (b, *k), draw(st.sampled_from(INDEX_DTYPES)), seed + 1)
    index_layout = draw(st.sampled_from(ALL_LAYOUTS))
    return Case(with_layout(tensor, layout), with_layout(indices, index_layout), (layout, index_layout))


OUT_OF_RANGE = [  # (indices.shape, position of the bad value, value); N = 7 everywhere
    ((5,), (3,), 12),
    ((5,), (4,), 7),
    ((5,), (0,), -8),
    ((5,), (2,), -9),
    ((5, 3), (3, 1), 12),
    ((5, 3), (1, 2), -8),
    ((5, 2, 2), (2, 1, 0), 9),
]


def expect_index_error(lesson, tensor, indices, where, value, what, why="", later=()):
    """IndexError in the docstring's format: position as `indices[3, 1]`, value, N and row.

    later: other bad positions, after `where` in row-major order (the error must not name them)."""
    __tracebackhide__ = True
    n, position = tensor.shape[1], f"indices[{', '.join(map(str, where))}]"
    expected = (f"\"batch_gather: {position} holds {value}, out of range for dimension 1 of size {n} "
                f"(row {where[0]})\"")
    before = indices.clone()
    try:
        out = lesson.batch_gather(tensor, indices)
    except NotImplementedError as exc:
        if stub_todo(exc):
            raise
        message = f"{what} raised NotImplementedError({str(exc)[:200]!r}); expected an IndexError, {expected}."
    except IndexError as exc:
        said = str(exc)
        if all(m in said for m in (position, f"holds {value}", f"size {n}", f"row {where[0]}")):
            return
        named = [p for p in later if f"indices[{', '.join(map(str, p))}]" in said]
        pitfall = pitfall_saying(exc, ERRORS, tensor, indices)  # not a range error at all: an error of the indexing
        foreign = pitfall_saying(exc, FOREIGN_RANGE_ERRORS)
        if pitfall:  # a sentence of its own, on a line of its own
            advice = f".\nThis IndexError is not about the range. {pitfall}"
        elif named:
            advice = (f": it names indices{list(named[0])}, a later bad position. Report the first in row-major "
                      "order (the order nonzero lists positions in).")
        elif foreign:
            advice = f".\n{foreign}"
        else:
            pieces = {f"the position as {position}": position, "the value": f"holds {value}",
                      "N": f"size {n}", "the row": f"row {where[0]}"}
            missing = [name for name, piece in pieces.items() if piece not in said]
            advice = (f": name {', '.join(missing[:-1]) + ' and ' if len(missing) > 1 else ''}{missing[-1]}, "
                      "as the docstring does.")
        message = f"{what} raised {quoted(exc)}; expected {expected}{advice}"
    except Exception as exc:  # noqa: BLE001 (the wrong exception is the learner's to see)
        advice = pitfall_saying(exc, ERRORS, tensor, indices)
        message = (f"{what} raised {quoted(exc)}; expected an IndexError, {expected}."
                   + (f"\n{advice}" if advice else ""))
    else:
        indices = before  # a pitfall that fixed the indices in place must be judged on what it was given
        named = named_pitfall(out, tensor, indices)
        message = (f"{what} returned a result without an error; expected an IndexError, {expected}: valid "
                   f"indices lie in [-{n}, {n}), and {value} would read another row or past the end."
                   + (f" {why}" if why else "") + (f"\nIn fact, {named}" if named else ""))
    pytest.fail(message, pytrace=False)


REFUSED_INDEX_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bool, torch.uint8, torch.int8, torch.int16,
                        torch.complex64]


MISFITS = [  # tensor shape, indices shape
    ((4, 7, 3), (1, 2)),
    ((4, 7, 3), (3,)),
    ((4, 7, 3), (5, 2)),
    ((7,), (7,)),
    ((4, 7), ()),
    ((), ()),
    ((), (3,)),
    ((0,), (0,)),
    ((1, 7), ()),
    ((3, 4), (0, 2)),
    ((0, 4), (3,)),
]


CHECK_ORDER = [  # tensor shape, indices, the error expected, why
    ((4, 7), torch.tensor([[0.5], [12.0]]), ValueError, "the shapes are checked before anything else"),
    ((4, 7), torch.tensor([99, -99], dtype=torch.int32), ValueError, "the shapes are checked before the values"),
    ((4, 7), torch.tensor([12.0, 0.0, -9.0, 1.0]), TypeError, "the dtype is checked before the values"),
    ((4, 7), torch.tensor([200, 0, 1, 2], dtype=torch.uint8), TypeError, "the dtype is checked before the values"),
]


def error_of(run) -> BaseException | None:
    """The error run() raises, or None."""
    try:
        run()
    except Exception as exc:  # noqa: BLE001 (the learner's error, read for its pitfall)
        return exc
    return None


EMPTY = [  # tensor shape, indices shape
    ((0, 5, 3), (0,)),
    ((0, 5, 3), (0, 4)),
    ((0, 0, 3), (0, 2)),
    ((3, 5, 2), (3, 0)),
    ((3, 0, 2), (3, 0)),
    ((3, 5, 0), (3, 2)),
    ((3, 5, 2, 0), (3,)),
]


def check_unchanged(name, now, before, what):
    __tracebackhide__ = True
    if torch.equal(now, before):
        return
    changed = (now != before).nonzero()
    first = tuple(changed[0].tolist())
    fix = ("make a new tensor instead of fixing the negative indices in place" if name == "indices"
           else "make a new tensor instead of writing into it")
    pytest.fail(f"{what} changed the caller's {name} in place: {len(changed)} of {before.numel()} entries differ "
                f"afterwards ({name}{list(first)} was {before[first].item()}, is {now[first].item()}); {fix}.",
                pytrace=False)


# No "strided" layout here: assert_same_as's copies cannot take the strides of a sliced view
# (the loop-based tests above cover sliced tensors and indices).
SAME_AS_INDEXING = [  # tensor shape, dtype, layout; indices shape, dtype, layout
    ((3, 5, 2), torch.float32, "contiguous", (3,), torch.int64, "contiguous"),
    ((3, 5, 2), torch.float16, "transposed", (3, 4), torch.int32, "expanded"),
    ((4, 5), torch.bfloat16, "expanded", (4, 2, 3), torch.int64, "transposed"),
    ((4, 5, 2, 3), torch.float64, "transposed", (4, 3), torch.int32, "transposed"),
    ((3, 4, 2), torch.complex64, "contiguous", (3, 3), torch.int64, "expanded"),
    ((3, 3), torch.complex128, "transposed", (3, 3), torch.int64, "contiguous"),
    ((3, 4, 2), torch.int32, "expanded", (3, 2), torch.int64, "expanded"),
    ((3, 4), torch.bool, "transposed", (3,), torch.int32, "expanded"),
    ((2, 4, 3), torch.uint8, "contiguous", (2, 1, 1), torch.int64, "contiguous"),
    ((1, 1), torch.float32, "contiguous", (1,), torch.int64, "contiguous"),  # one element
    ((1, 1, 1), torch.int8, "contiguous", (1, 1, 1), torch.int32, "contiguous"),
    ((0, 3, 2), torch.float32, "contiguous", (0, 2), torch.int64, "contiguous"),  # B = 0
    ((3, 4, 2), torch.float32, "transposed", (3, 0), torch.int64, "contiguous"),  # K = 0
    ((3, 4, 0), torch.float16, "contiguous", (3, 2), torch.int32, "contiguous"),  # a 0 in D
]


def loop_hint(lesson) -> str:
    """What to say about a loop: TorchScript's, where the function is scripted."""
    if isinstance(lesson.batch_gather, torch.jit.ScriptFunction):
        return JIT
    return "Index all rows in one call."


def python_loop_over_values(run) -> str | None:
    """How `run()` steps through index values in Python (tolist, item, iteration), or None."""
    counts = {"tolist": 0, "item": 0, "__iter__": 0}
    saved = {name: getattr(torch.Tensor, name) for name in counts}

    def counting(name):
        def method(self, *args, **kwargs):
            if name != "tolist" or self.numel() > 64:  # a position or a few values is not a loop
                counts[name] += 1
            return saved[name](self, *args, **kwargs)
        return method

    for name in counts:
        setattr(torch.Tensor, name, counting(name))
    try:
        run()
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)
    if counts["tolist"]:
        return "tolist() of the indices, then a loop over the list"
    if counts["item"] > 8 or counts["__iter__"]:
        return "iterating over a tensor, or .item() once per value"
    return None


CONTRACT = """Contract (lesson text, docstring, hints) -> the tests that check it:
- out[i, ...] = tensor[i, indices[i, ...]], indices [B] or [B, K...], D empty or several dims,
  shape [B, *indices.shape[1:], *D] -> test_one_pick_per_row, test_several_picks_per_row,
  test_shapes_of_tensor_and_indices, test_matches_a_loop_over_rows, test_same_as_advanced_indexing
- index tensors broadcast like the operands of +: with different numbers of axes, broadcasting
  decides which axes meet (an error, or silently wrong rows when K == B); the message names the
  right-alignment and the fix -> test_as_many_picks_per_row_as_rows,
  test_shapes_of_tensor_and_indices (pitfall named)
- the lesson's grid example (pairs, a negative entry, a 0-d index broadcast) -> test_several_picks_per_row
- tensor[:, indices] gives each row every row's picks, [B, B, K..., *D] -> test_shapes_of_tensor_and_indices, test_one_pick_per_row (named)
- flat offset: the step between rows (N, not B) -> test_shapes_of_tensor_and_indices (named); on the input's device
  (a new tensor's device; no .cuda() on a CPU-only machine) -> test_result_is_on_the_inputs_device,
  test_same_as_advanced_indexing (meta, named)
- flat offset: a negative index reads row i-1, an index >= N row i+1 -> test_negative_indices_count_from_the_end_of_the_same_row,
  test_shapes_of_tensor_and_indices, test_out_of_range_index_names_the_row (named)
- merging with .view fails on non-contiguous input (.reshape named) -> test_non_contiguous_tensor (named)
- "any dtype": tensor's dtype kept for floats, half, integers, bool, complex
  -> test_keeps_the_dtype, test_same_as_advanced_indexing, test_matches_a_loop_over_rows
- "any device", meta included (a shape, no values) -> test_same_as_advanced_indexing (named),
  test_result_is_on_the_inputs_device, test_runs_on_cuda
- int64 and int32 indices -> test_int32_and_int64_indices, test_same_as_advanced_indexing
- a negative index counts from the end of its own row -> test_negative_indices_count_from_the_end_of_the_same_row
- index >= N or < -N: IndexError naming position "indices[3, 1]", value, N and row; PyTorch's
  own error names no row (named) -> test_out_of_range_index_names_the_row, test_out_of_range_in_non_contiguous_indices
- `indices % N` wraps an out-of-range index silently (named) -> test_out_of_range_index_names_the_row
- the first bad position in row-major order -> test_first_bad_row_is_named,
  test_out_of_range_in_non_contiguous_indices
- N = 0: every index is out of range (the principle [-N, N) applied) -> test_nothing_is_in_range_of_an_empty_dim
- other index dtypes (float, bool, uint8, ...) raise TypeError naming it; bool/uint8 would be
  read as a mask (named) -> test_other_index_dtypes_are_refused
- ValueError naming both shapes: tensor >= 2 dims, indices >= 1, same B; indices of batch 1
  would broadcast silently (named) -> test_shapes_that_do_not_fit_are_refused
- shapes checked first, then dtype, then values -> test_checks_come_in_order
- empty B, K, D; one element -> test_empty_sizes, test_same_as_advanced_indexing
- any strides: non-contiguous / expanded tensor and indices -> test_non_contiguous_tensor,
  test_non_contiguous_indices, test_matches_a_loop_over_rows, test_same_as_advanced_indexing
- a new tensor; neither input modified (in place, named) -> test_inputs_are_not_modified, test_same_as_advanced_indexing
- gradients flow back to tensor, repeated indices add up -> test_gradient_adds_up_over_repeated_indices,
  test_gradcheck_float64, test_same_as_advanced_indexing
- no Python loop over B (TorchScript keeps the loop, named) -> test_runs_the_same_ops_for_8_or_256_rows
- >= 5x faster than the loop at [512, 1000, 16] -> test_much_faster_than_the_loop, test_a_large_batch_matches_the_loop
- no Python loop over the index values: at most 4x slower than the bare gather (named)
  -> test_range_check_is_vectorised
"""
