"""Lesson 05, vectorise: checks gather.py against a plain loop over the batch (the seed's first
version, written here as the reference) and against PyTorch's own advanced indexing (values,
dtype, device, gradients, the meta device), its refusals, and its speed.

`lesson` is the module under test (the learner's, the reference, or a mutant).

Contract (lesson text, docstring, hints) -> the tests that check it:
- out[i, ...] = tensor[i, indices[i, ...]], indices [B] or [B, K...], D empty or several dims,
  shape [B, *indices.shape[1:], *D] -> test_one_pick_per_row, test_several_picks_per_row,
  test_shapes_of_tensor_and_indices, test_matches_a_loop_over_rows, test_same_as_advanced_indexing
- row numbers need [B, 1, ..., 1] (a flat arange(B) is silently wrong when K == B)
  -> test_as_many_picks_per_row_as_rows, test_shapes_of_tensor_and_indices
- tensor[:, indices] gives [B, B, K..., *D] -> test_shapes_of_tensor_and_indices
- flat offset: step N, not B -> test_shapes_of_tensor_and_indices; on the input's device
  (no .cuda()) -> test_result_is_on_the_inputs_device, test_same_as_advanced_indexing (meta)
- "any dtype": tensor's dtype kept for floats, half, integers, bool, complex
  -> test_keeps_the_dtype, test_same_as_advanced_indexing, test_matches_a_loop_over_rows
- "any device", meta included, no range check on meta -> test_same_as_advanced_indexing,
  test_result_is_on_the_inputs_device, test_runs_on_cuda
- int64 and int32 indices -> test_int32_and_int64_indices, test_same_as_advanced_indexing
- a negative index counts from the end of its own row -> test_negative_indices_count_from_the_end_of_the_same_row
- index >= N or < -N: IndexError naming position "indices[3, 1]", value, N and row
  -> test_out_of_range_index_names_the_row, test_out_of_range_in_non_contiguous_indices
- the first bad position in row-major order -> test_first_bad_row_is_named,
  test_out_of_range_in_non_contiguous_indices
- N = 0: every index is out of range -> test_nothing_is_in_range_of_an_empty_dim
- other index dtypes (float, bool, uint8, ...) raise TypeError naming it -> test_other_index_dtypes_are_refused
- ValueError naming both shapes: tensor >= 2 dims, indices >= 1, same B (no broadcast of
  batch 1) -> test_shapes_that_do_not_fit_are_refused
- shapes checked first, then dtype, then values (hints) -> test_checks_come_in_order
- empty B, K, D; one element -> test_empty_sizes, test_same_as_advanced_indexing
- any strides: non-contiguous / expanded tensor and indices -> test_non_contiguous_tensor,
  test_non_contiguous_indices, test_matches_a_loop_over_rows, test_same_as_advanced_indexing
- a new tensor; neither input modified -> test_inputs_are_not_modified, test_same_as_advanced_indexing
- gradients flow back to tensor, repeated indices add up -> test_gradient_adds_up_over_repeated_indices,
  test_gradcheck_float64, test_same_as_advanced_indexing
- no Python loop over B; the range check is one vectorised comparison -> test_runs_the_same_ops_for_8_or_256_rows,
  test_range_check_is_vectorised
- >= 5x faster than the loop at [512, 1000, 16] -> test_much_faster_than_the_loop, test_the_seeds_shape
"""


from functools import partial

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import assert_close, assert_no_loop, assert_speed, describe, expect_raises, grad_of
from grader.testing.differential import assert_same_as
from grader.testing.strategies import ALL_LAYOUTS, ANY_DTYPE, on_meta, shapes, with_layout

DTYPES = ANY_DTYPE  # "any dtype": floats, half, integers, bool, complex
INDEX_DTYPES = (torch.int64, torch.int32)


def loop_gather(tensor, indices):
    """The reference: one row at a time, as the definition reads."""
    if tensor.shape[0] == 0:
        return tensor.new_empty((0, *indices.shape[1:], *tensor.shape[2:]))
    return torch.stack([tensor[i][indices[i]] for i in range(tensor.shape[0])])


def seed_loop(tensor, indices):
    """The seed's first batch_gather, the baseline of the speed test."""
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def make_tensor(shape, dtype=torch.float32, seed=0):
    """Distinct, exactly representable values (small integers) in any dtype."""
    values = torch.randint(-100, 100, shape, generator=torch.Generator().manual_seed(seed))
    if dtype.is_complex:  # an imaginary part of its own, so that dropping it shows
        return torch.complex(values.float(), values.flip(tuple(range(values.dim()))).float()).to(dtype)
    return values > 0 if dtype == torch.bool else values.to(dtype)


def make_indices(n, shape, dtype=torch.int64, seed=1):
    """Valid indices into a dim of size n, negative ones included."""
    return torch.randint(-n, n, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def call(tensor, indices):
    return f"batch_gather(tensor, indices) for tensor of {describe(tensor)} and indices of {describe(indices)}"


def check_against_loop(lesson, tensor, indices, note=""):
    expected = loop_gather(tensor, indices)
    assert_close(lesson.batch_gather(tensor, indices), expected, what=call(tensor, indices) + note, rtol=0, atol=0)


# --- the seed's examples ----------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_one_pick_per_row(lesson):
    tensor = torch.arange(24).reshape(3, 4, 2)  # B=3, N=4, D=(2,)
    out = lesson.batch_gather(tensor, torch.tensor([2, 0, 3]))
    expected = torch.tensor([[4, 5], [8, 9], [22, 23]])  # tensor[0, 2], tensor[1, 0], tensor[2, 3]
    assert_close(out, expected, what="batch_gather(torch.arange(24).reshape(3, 4, 2), tensor([2, 0, 3]))")


@pytest.mark.public
@pytest.mark.points(2)
def test_several_picks_per_row(lesson):
    # The lesson text's example: K=2 picks per row, -1 is the last entry of the same row.
    tensor, indices = torch.arange(12).reshape(3, 4), torch.tensor([[3, 0], [1, 1], [-1, 2]])
    assert_close(
        lesson.batch_gather(tensor, indices), torch.tensor([[3, 0], [5, 5], [11, 10]]),
        what="batch_gather(torch.arange(12).reshape(3, 4), tensor([[3, 0], [1, 1], [-1, 2]]))",
    )


@pytest.mark.points(2)
def test_the_seeds_shape(lesson):
    tensor = make_tensor((512, 1000, 16))
    check_against_loop(lesson, tensor, make_indices(1000, (512,)))


# --- shapes -----------------------------------------------------------------------------------

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


@pytest.mark.parametrize(("b", "n", "d", "k"), SHAPES, ids=lambda v: str(v).replace(" ", ""))
@pytest.mark.points(2)
def test_shapes_of_tensor_and_indices(lesson, b, n, d, k):
    check_against_loop(lesson, make_tensor((b, n, *d)), make_indices(n, (b, *k)))


def test_as_many_picks_per_row_as_rows(lesson):
    # K == B: where row numbers of shape [B] (not [B, 1]) pair index [i, k] with row k, silently.
    tensor, indices = make_tensor((4, 6, 2)), make_indices(6, (4, 4))
    check_against_loop(
        lesson, tensor, indices,
        note=" (index [i, k] must read row i; row numbers need shape [B, 1] to line up with the first dim)",
    )


@st.composite
def gather_cases(draw, dtypes=DTYPES):
    """A tensor [B, N, *D] in any dtype and layout, and valid indices [B, K...] for it."""
    b, n = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    d = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    k = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    seed = draw(st.integers(0, 2**16))
    tensor = make_tensor((b, n, *d), draw(st.sampled_from(dtypes)), seed)
    tensor = with_layout(tensor, draw(st.sampled_from(ALL_LAYOUTS)))
    indices = make_indices(n, (b, *k), draw(st.sampled_from(INDEX_DTYPES)), seed + 1)
    return tensor, with_layout(indices, draw(st.sampled_from(ALL_LAYOUTS)))


@given(gather_cases())
@example((torch.arange(12.0).reshape(3, 4), torch.tensor([0, -1, 3])))
@pytest.mark.points(2)
def test_matches_a_loop_over_rows(lesson, case):
    check_against_loop(lesson, *case)


# --- indices: negative, out of range, dtypes ---------------------------------------------------


@pytest.mark.points(2)
def test_negative_indices_count_from_the_end_of_the_same_row(lesson):
    tensor = torch.arange(20).reshape(4, 5)
    out = lesson.batch_gather(tensor, torch.tensor([-1, -5, -2, 0]))
    assert_close(
        out, torch.tensor([4, 5, 13, 15]),
        what="batch_gather(torch.arange(20).reshape(4, 5), tensor([-1, -5, -2, 0])) "
        "(-1 is the last entry of the same row, as in Python; a flat offset i*N + (-1) lands in the row before)",
    )


OUT_OF_RANGE = [  # (indices.shape, position of the bad value, value); N = 7 everywhere
    ((5,), (3,), 12),
    ((5,), (4,), 7),
    ((5,), (0,), -8),
    ((5,), (2,), -9),
    ((5, 3), (3, 1), 12),
    ((5, 3), (1, 2), -8),
    ((5, 2, 2), (2, 1, 0), 9),
]


def expect_index_error(lesson, tensor, indices, where, value, what, why=""):
    """IndexError in the docstring's format: position as `indices[3, 1]`, value, N and row."""
    __tracebackhide__ = True
    n, position = tensor.shape[1], f"indices[{', '.join(map(str, where))}]"
    expect_raises(
        lambda: lesson.batch_gather(tensor, indices), IndexError, what=what,
        why=f"valid indices lie in [-{n}, {n}); {value} would read another row or past the end. {why}"
        f"Name the position, the value, N and the row as the docstring does: \"batch_gather: {position} holds "
        f"{value}, out of range for dimension 1 of size {n} (row {where[0]})\".",
        mention=(position, f"holds {value}", f"size {n}", f"row {where[0]}"),
    )


@pytest.mark.parametrize(("shape", "where", "value"), OUT_OF_RANGE, ids=str)
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
        indices[3, 1], indices[4, 0], where, value = 6, 9, (3, 1), 6
    else:
        indices = torch.tensor([[1, -2, -7, 40]], dtype=torch.int32).expand(5, 4)  # every row the same, stride 0
        where, value = (0, 2), -7
    what = f"batch_gather(tensor, indices) for tensor of shape (5, 6, 2) and {layout} int32 indices {indices.tolist()}"
    expect_index_error(lesson, tensor, indices, where, value, what, why="Report the first bad one in row-major order. ")


def test_first_bad_row_is_named(lesson):
    tensor, indices = make_tensor((6, 4)), make_indices(4, (6, 2))
    indices[4, 0], indices[1, 1] = 5, -6
    expect_index_error(
        lesson, tensor, indices, (1, 1), -6,
        what="batch_gather(tensor, indices) for tensor of shape (6, 4) with indices[1, 1] = -6 and indices[4, 0] = 5",
        why="Both are out of range: report the first (row-major order). ",
    )


@pytest.mark.parametrize(("b", "k"), [(3, ()), (3, (2,)), (1, (1,))])
def test_nothing_is_in_range_of_an_empty_dim(lesson, b, k):
    tensor, indices = torch.zeros(b, 0, 2), torch.zeros((b, *k), dtype=torch.long)
    expect_index_error(lesson, tensor, indices, (0,) * indices.dim(), 0, what=call(tensor, indices),
                       why="With N = 0 there is no entry to pick, so index 0 is out of range. ")


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=str)
def test_int32_and_int64_indices(lesson, dtype):
    tensor = make_tensor((4, 6, 3))
    check_against_loop(lesson, tensor, make_indices(6, (4, 2), dtype))


REFUSED_INDEX_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bool, torch.uint8, torch.int8, torch.int16,
                        torch.complex64]


@pytest.mark.parametrize("dtype", REFUSED_INDEX_DTYPES, ids=str)
def test_other_index_dtypes_are_refused(lesson, dtype):
    tensor, indices = make_tensor((3, 4, 2)), torch.tensor([1, 0, 1]).to(dtype)
    expect_raises(
        lambda: lesson.batch_gather(tensor, indices), TypeError, what=call(tensor, indices),
        why="indices must be int64 or int32 (PyTorch reads a bool or uint8 index tensor as a mask, "
        "not as positions); name the dtype you got.", mention=(str(dtype).removeprefix("torch."),),
    )


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


@pytest.mark.parametrize(("tensor_shape", "indices_shape"), MISFITS, ids=str)
def test_shapes_that_do_not_fit_are_refused(lesson, tensor_shape, indices_shape):
    tensor, indices = make_tensor(tensor_shape), torch.zeros(indices_shape, dtype=torch.long)
    expect_raises(
        lambda: lesson.batch_gather(tensor, indices), ValueError, what=call(tensor, indices),
        why="tensor must be [B, N, ...] and indices [B, ...] with the same B (indices of batch 1 would "
        "broadcast silently over every row); name both shapes.",
        mention=(", ".join(map(str, tensor_shape)), ", ".join(map(str, indices_shape))),
    )


CHECK_ORDER = [  # tensor shape, indices, the error expected, why
    ((4, 7), torch.tensor([[0.5], [12.0]]), ValueError, "the shapes are checked before anything else"),
    ((4, 7), torch.tensor([99, -99], dtype=torch.int32), ValueError, "the shapes are checked before the values"),
    ((4, 7), torch.tensor([12.0, 0.0, -9.0, 1.0]), TypeError, "the dtype is checked before the values"),
    ((4, 7), torch.tensor([200, 0, 1, 2], dtype=torch.uint8), TypeError, "the dtype is checked before the values"),
]


@pytest.mark.parametrize(("tensor_shape", "indices", "error", "why"), CHECK_ORDER, ids=lambda v: str(v)[:40])
def test_checks_come_in_order(lesson, tensor_shape, indices, error, why):
    tensor = make_tensor(tensor_shape)
    expect_raises(lambda: lesson.batch_gather(tensor, indices), error,
                  what=call(tensor, indices) + f" = {indices.tolist()}",
                  why=f"this input is wrong in two ways; {why}: shapes, then dtype, then range.")


# --- empty sizes, dtypes, layouts, inputs -----------------------------------------------------

EMPTY = [  # tensor shape, indices shape
    ((0, 5, 3), (0,)),
    ((0, 5, 3), (0, 4)),
    ((0, 0, 3), (0, 2)),
    ((3, 5, 2), (3, 0)),
    ((3, 0, 2), (3, 0)),
    ((3, 5, 0), (3, 2)),
    ((3, 5, 2, 0), (3,)),
]


@pytest.mark.parametrize(("tensor_shape", "indices_shape"), EMPTY, ids=str)
def test_empty_sizes(lesson, tensor_shape, indices_shape):
    tensor, indices = torch.zeros(tensor_shape), torch.zeros(indices_shape, dtype=torch.long)
    expected = torch.zeros((tensor_shape[0], *indices_shape[1:], *tensor_shape[2:]))
    assert_close(lesson.batch_gather(tensor, indices), expected, what=call(tensor, indices) + " (empty result)")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_keeps_the_dtype(lesson, dtype):
    tensor = make_tensor((4, 6, 3), dtype)
    check_against_loop(lesson, tensor, make_indices(6, (4, 2)), note=f" (the result must stay {dtype})")


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
    check_against_loop(
        lesson, tensor, make_indices(7, (tensor.shape[0], 4)),
        note=" (.view cannot merge dims of a non-contiguous tensor; .reshape or indexing can)",
    )


def test_non_contiguous_indices(lesson):
    tensor, indices = make_tensor((4, 6, 3)), make_indices(6, (3, 4)).t()  # (4, 3)
    check_against_loop(lesson, tensor, indices)


def test_inputs_are_not_modified(lesson):
    tensor, indices = make_tensor((4, 6, 3)), torch.tensor([[-1, 2], [0, -6], [5, -3], [-2, -2]])
    tensor_before, indices_before = tensor.clone(), indices.clone()
    lesson.batch_gather(tensor, indices)
    assert_close(tensor, tensor_before, what="tensor after batch_gather(tensor, indices) (the caller's tensor must not change)")
    assert_close(
        indices, indices_before,
        what="indices after batch_gather(tensor, indices) with negative indices (the caller's indices must not "
        "change: make a new tensor instead of fixing them in place)",
    )


def advanced_indexing(tensor, indices):
    """PyTorch's counterpart: one advanced-indexing call with row numbers of shape [B, 1, ..., 1]."""
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]


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


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(("shape", "dtype", "layout", "index_shape", "index_dtype", "index_layout"), SAME_AS_INDEXING,
                         ids=lambda v: str(v).removeprefix("torch.").replace(" ", ""))
def test_same_as_advanced_indexing(lesson, shape, dtype, layout, index_shape, index_dtype, index_layout, device):
    # tensor[arange(B).view(B, 1, ..., 1), indices]: values, dtype, shape, device and the
    # gradients it gives `tensor`. On `meta` (shapes, no values) code that moves data to the CPU,
    # reads values into Python or makes the row numbers on the default device shows itself.
    tensor = with_layout(make_tensor(shape, dtype), layout)
    indices = with_layout(make_indices(shape[1], index_shape, index_dtype), index_layout)
    if device == "meta":
        tensor, indices = on_meta(tensor), on_meta(indices)
    what = f"batch_gather(tensor, indices) on {device} ({layout} tensor, {index_layout} {index_dtype} indices)"
    assert_same_as(lesson.batch_gather, advanced_indexing, tensor, indices, what=what, grads=True)
    if device == "meta":
        return
    tensor_before, indices_before = tensor.clone(), indices.clone()
    out = lesson.batch_gather(tensor, indices)
    for name, now, before in (("tensor", tensor, tensor_before), ("indices", indices, indices_before)):
        assert_close(now, before, rtol=0, atol=0,
                     what=f"{name} after {what} (neither input may change: make new tensors instead)")
    if out.numel() and out.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr():
        pytest.fail(f"{what} returned a view of `tensor`; the docstring promises a new tensor.", pytrace=False)


# --- gradients --------------------------------------------------------------------------------


@pytest.mark.points(2)
def test_gradient_adds_up_over_repeated_indices(lesson):
    tensor = torch.randn(3, 5, 2, generator=torch.Generator().manual_seed(0), requires_grad=True)
    indices = torch.tensor([[1, 1, 4], [0, -5, 2], [3, -2, 3]])  # repeats, also through a negative index
    upstream = torch.randn(3, 3, 2, generator=torch.Generator().manual_seed(1))
    what = "the gradient of batch_gather(tensor, indices) with repeated indices"
    expected = grad_of(loop_gather(tensor, indices), tensor, what, upstream)
    assert_close(grad_of(lesson.batch_gather(tensor, indices), tensor, what, upstream), expected,
                 what=what + " (each pick adds its upstream gradient to the entry it read)")


@pytest.mark.parametrize("k", [(), (4,)], ids=["indices [B]", "indices [B, K]"])
def test_gradcheck_float64(lesson, k):
    tensor = torch.randn(3, 4, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64, requires_grad=True)
    indices = make_indices(4, (3, *k))
    grad_of(lesson.batch_gather(tensor, indices), tensor, "batch_gather(tensor, indices) for float64 tensor")
    assert torch.autograd.gradcheck(lambda t: lesson.batch_gather(t, indices), (tensor,)), (
        "batch_gather: analytic and numerical gradients differ"
    )


# --- no loop over the batch, speed, devices ---------------------------------------------------


@pytest.mark.points(2)
def test_runs_the_same_ops_for_8_or_256_rows(lesson):
    assert_no_loop(
        lambda b: partial(lesson.batch_gather, make_tensor((b, 50, 4)), make_indices(50, (b,))), 8, 256,
        what="batch_gather", unit="rows",
        hint="torch.jit.script does not change that: the scripted loop still runs them row by row. "
        "Index all rows in one call with row numbers of shape [B, 1, ..., 1].",
    )


@pytest.mark.speed
@pytest.mark.points(2)
def test_much_faster_than_the_loop(lesson):
    tensor, indices = make_tensor((512, 1000, 16)), make_indices(1000, (512,))
    assert_speed(
        lambda: seed_loop(tensor, indices), lambda: lesson.batch_gather(tensor, indices),
        at_least=5, what="batch_gather on a (512, 1000, 16) tensor with indices of shape (512,)",
        baseline_name="the seed's loop `tensor[i][indices[i]]` over rows",
        hint="One advanced-indexing call replaces 512 selects, 512 index calls and a stack.",
    )


@pytest.mark.speed
def test_range_check_is_vectorised(lesson):
    # 262144 indices: one comparison over all of them costs about as much as the gather itself;
    # a Python loop over indices.tolist() (no tensor ops, so the op count cannot see it) is ~40x slower.
    tensor, indices = make_tensor((64, 100)), make_indices(100, (64, 4096))
    assert_speed(
        lambda: advanced_indexing(tensor, indices), lambda: lesson.batch_gather(tensor, indices),
        at_least=0.25, what="batch_gather on a (64, 100) tensor with indices of shape (64, 4096)",
        baseline_name="the bare gather `tensor[rows, indices]` without any check",
        hint="Check the range with one vectorised comparison over the whole indices tensor, "
        "`(indices < -N) | (indices >= N)`, not a Python loop over its values.",
    )


def test_result_is_on_the_inputs_device(lesson):
    # On a machine without CUDA, code that hard-codes .cuda() fails here.
    tensor, indices = make_tensor((3, 4, 2)), torch.tensor([1, -1, 0])
    out = lesson.batch_gather(tensor, indices)
    assert out.device == tensor.device, f"batch_gather returned a tensor on {out.device} for input on {tensor.device}"


@pytest.mark.cuda
def test_runs_on_cuda(lesson):
    tensor, indices = make_tensor((6, 9, 4)).cuda(), make_indices(9, (6, 3)).cuda()
    assert_close(lesson.batch_gather(tensor, indices), loop_gather(tensor.cpu(), indices.cpu()).cuda(),
                 what="batch_gather on CUDA")
    indices[2, 1] = 9
    expect_raises(lambda: lesson.batch_gather(tensor, indices), IndexError, what="batch_gather on CUDA, index 9 with N=9",
                  why="out of range", mention=("row 2",))
