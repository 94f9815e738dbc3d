"""Lesson 03, broadcasting: checks broadcast.py against tiling, torch's rules and the loop definition.
`lesson` is the module under test (the learner's, the reference, or a mutant); a wrong result or
error that one of the lesson's pitfalls gives is named with its fix. The contract table is
CONTRACT, at the end."""

import sys
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch import nn

from grader.testing import (
    assert_close, assert_defaults, assert_no_loop, assert_speed, count_ops, describe, dtype_name, expect_raises, fail,
    grad_of, mismatch, quoted, raises_the_same, reported, same,
)
from grader.testing.differential import on_another_default_device
from grader.testing.pitfalls import Pitfall, pitfall_of
from grader.testing.memory import Allocation, MiB, allocations
from grader.testing.scenario import beside
from grader.testing.strategies import ALL_LAYOUTS, with_layout


# --- helpers ---------------------------------------------------------------------------------


# --- Merge -----------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_merge_on_the_example_shapes(lesson):
    a, b = rand(5, 3, 5, seed=1), rand(5, 1, 6, seed=2)
    what = f"Merge(5, 6, 10, activation=torch.relu)(a, b) for {inputs(a=a, b=b)}"
    out, merge, _ = merged(lesson, (5, 6, 10), "torch.relu", a, b, what)
    check_merge(out, merge, a, b, what)


def test_merge_layers_are_what_the_docstring_says(lesson):
    layers, activation = merge_layers(lesson, (5, 6, 10))
    for name, fan_in in (("linear1", 5), ("linear2", 6)):
        kind, is_linear, features = layers[name]
        if not is_linear:
            fail(f"Merge.{name} should be an nn.Linear, found {kind}")
        if features != (fan_in, 10):
            fail(f"Merge(5, 6, 10).{name} is Linear({features[0]}, {features[1]}); expected Linear({fan_in}, 10)")
    if activation is not None:
        fail(f"Merge(5, 6, 10, activation=None).activation is {activation}; None means no activation")


def test_merge_has_the_bias_of_one_linear_layer(lesson):
    a, b = rand(2, 3, 5, seed=1), rand(2, 1, 6, seed=2)
    what = f"Merge(5, 6, 10)(a, b) for {inputs(a=a, b=b)}"
    _, params, _ = run_merge(merge_run, lesson, (5, 6, 10), None, a, b, what)
    Twin.of(params, None, what)  # both layers registered: else that is what to tell
    if not {"linear1.bias", "linear2.bias"} & set(params):
        fail(f"Merge(5, 6, 10) has no bias: its parameters are {', '.join(sorted(params))}. Linear(cat(a, b)) is an "
             "nn.Linear, which has one: keep linear1's (nn.Linear's bias=True). One bias is enough, two do no harm.")


def test_merge_without_an_activation_applies_none(lesson):
    a, b = rand(2, 3, 5, seed=1), rand(2, 1, 6, seed=2)
    what = f"Merge(5, 6, 10)(a, b) for {inputs(a=a, b=b)}"
    run_merge(merge_run, lesson, (5, 6, 10), None, a, b, what)  # an error of its own, named where it can be
    assert_defaults(lambda **activation: merge_made(lesson, (5, 6, 10), a, b, **activation)[0], what=what,
                    activation=None)


@given(st.deferred(lambda: merge_shapes()), st.sampled_from([None, "torch.relu", "nn.Tanh()"]))
@example(((5, 3), (5, 1), 5, 6, 10), "torch.relu")  # the example shapes
@example(((4, 1), (4, 3), 2, 3, 2), None)  # a is the one stretched
@example(((2, 3, 4), (4,), 2, 3, 2), None)  # b has fewer dims
@example(((), (3,), 2, 2, 2), None)  # a has none at all
@example(((), (), 3, 2, 2), None)  # neither has any: a (3,), b (2,)
@example(((4, 1), (1, 3), 2, 3, 2), "nn.Tanh()")  # each side stretched along one dim
@example(((3,), (2, 1, 3), 2, 3, 2), None)  # b has more dims than a
@example(((0, 3), (1, 1), 2, 3, 2), None)  # an empty leading dim
@example(((1,), (2, 0), 2, 3, 2), None)  # b's empty dim stretches a
@pytest.mark.points(2)
def test_merge_broadcasts_any_leading_dims(lesson, shapes, activation):
    lead_a, lead_b, f1, f2, out_features = shapes
    a, b = rand(*lead_a, f1, seed=1), rand(*lead_b, f2, seed=2)
    what = f"Merge({f1}, {f2}, {out_features}, activation={activation})(a, b) for {inputs(a=a, b=b)}"
    out, merge, _ = merged(lesson, (f1, f2, out_features), activation, a, b, what)
    check_merge(out, merge, a, b, what)


@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_trains_both_layers(lesson, stretched):
    a, b = rand(6, 5, 3, seed=1), rand(6, 1, 4, seed=2)
    if stretched == "a":
        a, b = rand(6, 1, 3, seed=1), rand(6, 5, 4, seed=2)
    call, shapes = "Merge(3, 4, 2, activation=torch.tanh)(a, b)", inputs(a=a, b=b)
    what = f"{call} for {shapes}"
    out, params, grads, a_grad, b_grad = run_merge(merge_trained, lesson, (3, 4, 2), "torch.tanh", a, b, what)
    merge = Twin.of(params, "torch.tanh", what)
    check_merge(out, merge, a, b, what)  # the output first: a pitfall there is what the gradients show
    for name in params:
        if grads[name] is None or not grads[name].abs().sum().item() > 0:
            fail(f"{name} got no gradient from {call}.square().mean() for {shapes}")
    # The gradients are those of the tiled formula.
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    expected = torch.autograd.grad(tiled_merge(merge, a, b).square().mean(), [*merge.parameters(), a, b])
    for (name, _), grad in zip(merge.named_parameters(), expected):
        assert_close(grads[name], grad, what=f"the gradient of {call}.square().mean() with respect to {name}, for {shapes}")
    for name, got, grad in (("a", a_grad, expected[-2]), ("b", b_grad, expected[-1])):
        if got is None:
            fail(f"{what}: no gradient reached the input {name} (no .detach() on the inputs)")
        assert_close(got, grad, what=f"the gradient of {call}.square().mean() with respect to {name}, for {shapes}")


@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_applies_the_activation_to_the_sum(lesson, stretched):
    a, b = rand(4, 3, 3, seed=1), rand(4, 1, 2, seed=2)
    if stretched == "a":
        a, b = rand(4, 1, 3, seed=1), rand(4, 3, 2, seed=2)
    for name in ("torch.relu", "nn.Tanh()", "torch.sigmoid", "nn.Softplus()"):
        what = f"Merge(3, 2, 4, activation={name})(a, b) for {inputs(a=a, b=b)}"
        out, merge, calls = merged(lesson, (3, 2, 4), name, a, b, what, watch=True)
        if len(calls) > 1:
            fail(f"{what} called the activation {len(calls)} times, on tensors of shapes {calls}; expected one "
                 f"call, on the sum of the two projections, (4, 3, 4). {ACTIVATION_PER_PART}")
        if calls != [(4, 3, 4)]:
            fail(f"{what} called the activation on tensors of shapes {calls}; expected one call, on the sum of the "
                 "two projections, (4, 3, 4)")
        check_merge(out, merge, a, b, what)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_merge_keeps_the_inputs_dtype(lesson, dtype):
    a, b = rand(2, 5, 3, seed=1, dtype=dtype), rand(2, 1, 4, seed=2, dtype=dtype)
    what = f"Merge(3, 4, 2, activation=torch.tanh).to({dtype})(a, b) for {inputs(a=a, b=b)}"
    out, merge, _ = merged(lesson, (3, 4, 2), "torch.tanh", a, b, what, dtype=dtype)
    if not (isinstance(out, torch.Tensor) and out.dtype == dtype):
        got = dtype_name(out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__
        fail(f"{what} returned {got}; expected {dtype_name(dtype)}, the inputs' dtype")
    # The truth in float64, from the very same (rounded) weights and inputs.
    expected = tiled_merge(merge.double(), a.double(), b.double())
    eps = torch.finfo(dtype).eps
    wrong = mismatch(out, expected.to(dtype), rtol=8 * eps, atol=8 * eps, what=what)
    if wrong is not None:
        fail(merge_diagnosed(wrong, out, merge.double(), a.double(), b.double(), rtol=8 * eps, atol=8 * eps))


def test_merge_builds_nothing_on_the_default_device(lesson):
    for lead_a, lead_b in (((2, 5), (2, 1)), ((1, 5), (2, 1))):
        a, b = rand(*lead_a, 3, seed=1), rand(*lead_b, 4, seed=2)
        what = f"Merge(3, 4, 2, activation=torch.relu)(a, b) for {inputs(a=a, b=b)}, on the CPU"
        _, merge, _ = merged(lesson, (3, 4, 2), "torch.relu", a, b, what)  # an error of its own is reported as itself
        out = on_another_default_device(lambda: merge_run(lesson, (3, 4, 2), "torch.relu", a, b)[0], what=what,
                                        fix=BUILD_FROM_INPUTS)
        check_merge(out, merge, a, b, f"{what}, with the default device set to 'meta'")


@pytest.mark.points(2)
@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_never_materialises_the_tiled_tensor(lesson, stretched):
    # Memory, not time: time moves with the load. On these shapes the tiled version allocates
    # several times what a broadcast one does, its biggest allocation a tiled copy of `big`
    # (the figures: docs/MEASUREMENTS.md, "Memory, not time, for broadcasting").
    big, small = rand(64, 128, 256, seed=1), rand(64, 1, 256, seed=2)
    a, b = (big, small) if stretched == "b" else (small, big)
    tiled_bytes = big.numel() * big.element_size()
    what = f"Merge(256, 256, 64)(a, b) for {inputs(a=a, b=b)}"
    found = [Allocation(*entry) for entry in run_merge(
        lambda lesson, sizes, activation, a, b: merge_allocations(lesson, sizes, a, b), lesson, (256, 256, 64), None,
        a, b, what)]
    reference = allocations(lambda: tiled_merge(Twin.of_sizes((256, 256, 64), None), a, b))
    broadcast = allocations(lambda: merge_per_part(Twin.of_sizes((256, 256, 64), None), a, b))  # pa + pb
    total, reference_total = sum(x.nbytes for x in found), sum(x.nbytes for x in reference)
    if found and found[0].nbytes < tiled_bytes and total < reference_total / 2:
        return
    stretched_copy = f"a copy of {stretched} tiled {big.shape[1]} times"
    fix = ("Project each input with its own Linear layer and let `+` broadcast the projections: a broadcast Merge "
           f"allocates {sum(x.nbytes for x in broadcast) / MiB:.1f} MiB in all here, none of it larger than "
           f"{broadcast[0].nbytes / MiB:.1f} MiB.")
    if found and found[0].nbytes >= tiled_bytes:
        op = found[0].op.removeprefix("aten.")
        fail(f"{what} allocated one tensor of {found[0].nbytes / MiB:.1f} MiB (in {op}): as large as {stretched_copy} "
             f"({tiled_bytes / MiB:.1f} MiB) or larger. This is the tiled copy the lesson warns of: no repeat, no cat, "
             f"and no expand fed to a Linear layer (it writes out every row of the expanded tensor). {fix}")
    if not found:
        fail(f"{what} allocated nothing, not even its output: the result must be a new tensor")
    fail(f"{what} allocated {total / MiB:.1f} MiB in all, half or more of the {reference_total / MiB:.1f} MiB the tiled "
         f"version allocates, though no single tensor as large as {stretched_copy}. {fix}")


# --- broadcast_shape -------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [((3, 2), (3, 1), (3, 2)), ((2, 1), (2,), (2, 2)), ((5, 3, 5), (5, 1, 5), (5, 3, 5)),
     ((5, 1, 6), (3, 1), (5, 3, 6)), ((), (4,), (4,)), ((0,), (1,), (0,)), ((2, 0), (2, 1), (2, 0)),
     ((), (), ()), ((3, 1), (), (3, 1)), ((1, 0), (3, 1), (3, 0)), ((1,), (1, 1), (1, 1)), ((0, 1), (0,), (0, 0))],
    ids=lambda shape: shape_id(shape),
)
def test_broadcast_shape_examples(lesson, shape_a, shape_b, expected):
    problem = shape_problem(lesson, shape_a, shape_b, expected)
    if problem:
        fail(problem)


@pytest.mark.public
@pytest.mark.parametrize(("shape_a", "shape_b"), [((3, 2), (3, 4)), ((2,), (3,)), ((0,), (3,)), ((4, 3), (4,)),
                                            ((2, 3), (3, 3)), ((5, 4, 6), (2, 6)), ((3,), (2, 1, 2))],
                         ids=lambda shape: shape_id(shape))
def test_broadcast_shape_rejects_with_both_shapes_named(lesson, shape_a, shape_b):
    expect_raises(
        lambda: lesson.broadcast_shape(shape_a, shape_b), ValueError, what=f"broadcast_shape({shape_a}, {shape_b})",
        why="these shapes don't broadcast.", mention=(str(shape_a), str(shape_b)),
    )


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=5, min_side=0, max_side=4))
@pytest.mark.points(2)
def test_broadcast_shape_agrees_with_torch_when_shapes_broadcast(lesson, shapes):
    (shape_a, shape_b), _ = shapes
    expected = torch_says(shape_a, shape_b)
    assume(expected is not None)  # numpy and torch differ on nothing here, but be sure
    problem = shape_problem(lesson, shape_a, shape_b, expected)
    if problem:
        fail(problem)


@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
       hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
@pytest.mark.points(2)
def test_broadcast_shape_agrees_with_torch_on_any_pair(lesson, shape_a, shape_b):
    expected = torch_says(shape_a, shape_b)
    if expected is None:
        expect_raises(lambda: lesson.broadcast_shape(shape_a, shape_b), ValueError,
                      what=f"broadcast_shape({shape_a}, {shape_b})", why="torch refuses these shapes.",
                      mention=(str(shape_a), str(shape_b)))
    else:
        problem = shape_problem(lesson, shape_a, shape_b, expected)
        if problem:
            fail(problem)


def test_broadcast_shape_accepts_torch_size_and_lists(lesson):
    problem = shape_problem(lesson, torch.Size([4, 1, 3]), [2, 1], (4, 2, 3))
    if problem:
        fail(problem)


def test_broadcast_shape_works_out_the_rules_itself(lesson):
    pairs = (((5, 1, 6), (3, 1)), (torch.Size([4, 1]), [2, 1, 3]), ((2,), (3,)))
    seen = [broadcast_shape_without_helpers(lesson, shape_a, shape_b) for shape_a, shape_b in pairs]
    for (shape_a, shape_b), calls in zip(pairs, seen):
        if calls["helpers"]:
            fail(f"broadcast_shape({shape_a}, {shape_b}) called {calls['helpers'][0]}, a library broadcasting "
                 "helper; the exercise is to apply the rules yourself: compare the sizes from the right, one pair "
                 "at a time.")
    with reported("broadcast_shape((5, 1, 6), (3, 1))"):
        try:
            ops = count_ops(lambda: lesson.broadcast_shape((5, 1, 6), (3, 1)))
        except ValueError:
            ops = None  # a refusal of shapes that broadcast: told with the pitfall it shows
    if ops is None:
        fail(shape_problem(lesson, (5, 1, 6), (3, 1), (5, 3, 6))
             or "broadcast_shape((5, 1, 6), (3, 1)) raised ValueError while its tensor ops were counted, and not again")
    if ops:
        fail(f"broadcast_shape((5, 1, 6), (3, 1)) ran tensor operations ({', '.join(sorted(ops))}); work with the "
             "shape tuples alone: building tensors to read the shape of their sum is not applying the rules")
    # Any other spelling (torch.functional.broadcast_shapes, np.lib.stride_tricks, NumPy arrays
    # added together, ...) is a call into torch or NumPy: none is needed to compare sizes.
    for (shape_a, shape_b), calls in zip(pairs, seen):
        if calls["library"]:
            fail(f"broadcast_shape({shape_a}, {shape_b}) called {', '.join(map(aliased, dict.fromkeys(calls['library'][:3])))}; "
                 "the exercise is to apply the rules yourself, on the shapes as tuples of ints: no tensors, no "
                 "NumPy arrays, no library broadcasting helpers under any name")


@pytest.mark.parametrize(("shape_a", "shape_b", "expected"),
                         [((2**40, 1), (1, 2**40), (2**40, 2**40)), ((10**12, 1, 3), (7, 1), (10**12, 7, 3)),
                          ((300, 4), (300, 1), (300, 4)), ((10**12, 5), (10**12, 1), (10**12, 5))],
                         ids=["2^40x1-1x2^40", "10^12x1x3-7x1", "300x4-300x1", "10^12x5-10^12x1"])
def test_broadcast_shape_of_huge_shapes(lesson, shape_a, shape_b, expected):
    # Sizes are numbers: the rules work for shapes far too big to allocate. Each size is a
    # fresh int object, as sizes read off two different tensors are: equal sizes above 256
    # are equal (==) without being the same object (`is`).
    shape_a, shape_b = (tuple(int(str(size)) for size in shape) for shape in (shape_a, shape_b))
    what = f"broadcast_shape({shape_a}, {shape_b})"
    try:
        got = lesson.broadcast_shape(shape_a, shape_b)
    except (MemoryError, RuntimeError, ValueError) as exc:
        got, error = None, exc
    else:
        error = None
    if isinstance(error, ValueError):
        # The same sizes, each value one int object shared by both shapes: `is` finds them equal.
        one = {}
        shared_a, shared_b = (tuple(one.setdefault(size, size) for size in shape) for shape in (shape_a, shape_b))
        try:
            identity = lesson.broadcast_shape(shared_a, shared_b) == expected
        except Exception:  # noqa: BLE001 (the learner's error: no pitfall to name)
            identity = False
        if identity:
            fail(f"{what} raised ValueError({str(error)[:200]!r}); these shapes broadcast to {expected}. The same "
                 "shapes built from shared int objects pass: this is comparing sizes with `is`, which asks whether "
                 "two ints are the same object. Equal ints above 256 are often different objects (sizes read off "
                 "two tensors are): compare sizes with == and !=.")
        # The same pattern with small sizes: right there, the size of these is what breaks the code.
        small_a, small_b = (tuple(min(size, 5) for size in shape) for shape in (shape_a, shape_b))
        try:
            small_right = lesson.broadcast_shape(small_a, small_b) == torch_says(small_a, small_b)
        except Exception:  # noqa: BLE001 (the learner's error: no pitfall to name)
            small_right = False
        if not small_right:
            fail(shape_problem(lesson, shape_a, shape_b, expected)
                 or f"{what} raised ValueError({str(error)[:200]!r}); these shapes broadcast to {expected}.")
    if error is not None:
        fail(f"{what} raised {quoted(error)}; expected {expected}. These shapes "
             "broadcast, but no array of them fits in memory: work with the sizes, not with tensors or "
             "arrays of these shapes")
    if got != expected:
        fail(shape_problem(lesson, shape_a, shape_b, expected) or f"{what} returned {got!r}; expected the tuple {expected}")


# --- pairwise_sq_dist ------------------------------------------------------------------------


@pytest.mark.public
def test_pairwise_sq_dist_small_example(lesson):
    x = torch.tensor([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]])
    y = torch.tensor([[0.0, 0.0], [3.0, 0.0]])
    check_sq_dist(lesson, x, y, what="pairwise_sq_dist(x, y) for x = [[0, 0], [1, 1], [3, 4]], y = [[0, 0], [3, 0]] "
                                    "(float32)")


@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 5), st.sampled_from([1.0, 10.0, 1e3]),
       st.sampled_from(ALL_LAYOUTS), st.sampled_from(ALL_LAYOUTS), st.integers(0, 2**16))
@example(3, 4, 2, 1.0, "contiguous", "transposed", 0)  # y is the non-contiguous one
@example(4, 3, 3, 10.0, "strided", "expanded", 1)
@pytest.mark.points(2)
def test_pairwise_sq_dist_matches_the_loop_definition(lesson, n, m, d, scale, layout_x, layout_y, seed):
    x = with_layout(rand(n, d, seed=seed) * scale, layout_x)
    y = with_layout(rand(m, d, seed=seed + 1) * scale, layout_y)
    # float32 rounding of squares of size ~scale**2 * d: relative error of a few eps of that.
    atol = 1e-5 * scale**2 * max(d, 1)
    check_sq_dist(lesson, x, y, rtol=1e-4, atol=atol,
                  what=f"pairwise_sq_dist(x, y) for x of {describe(x, layout_x)}, and y of {describe(y, layout_y)}")


def test_pairwise_sq_dist_of_edge_shapes(lesson):
    for n, m, d in ((0, 3, 2), (3, 0, 2), (0, 0, 2), (2, 3, 0), (1, 1, 1), (1, 4, 3), (4, 1, 3)):
        x, y = rand(n, d, seed=1) + 5, rand(m, d, seed=2) + 5
        what = f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}"
        check_sq_dist(lesson, x, y, rtol=1e-4, atol=1e-4,
                      what=f"{what} (no points give an empty (N, M) table; no coordinates give zeros)")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_pairwise_sq_dist_keeps_half_precision(lesson, dtype):
    x, y = rand(6, 4, seed=1, dtype=dtype), rand(5, 4, seed=2, dtype=dtype) + 1
    what = f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}"
    out = run_sq_dist(lesson, x, y, what)
    if not (isinstance(out, torch.Tensor) and out.dtype == dtype):
        got = dtype_name(out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__
        fail(f"{what} returned {got}; expected {dtype_name(dtype)}, x's dtype.\n{OTHER_DTYPE}")
    truth = loop_sq_dist(x, y)  # float64, from the very same rounded inputs
    eps = torch.finfo(dtype).eps
    check_sq_dist(lesson, x, y, what, out=out, rtol=8 * eps, atol=16 * eps * truth.max().item())
    worst = out.min().item()
    if worst < 0:
        fail(f"{what} has negative entries (down to {worst:.3g}). {NEGATIVE}")


def test_pairwise_sq_dist_builds_nothing_on_the_default_device(lesson):
    for n, m in ((3, 4), (0, 2), (0, 0)):
        x, y = rand(n, 3, seed=1) + 10, rand(m, 3, seed=2) + 10
        what = f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}, on the CPU"
        run_sq_dist(lesson, x, y, what)  # an error of its own on the usual device, named where it can be
        out = on_another_default_device(lambda: lesson.pairwise_sq_dist(x, y), what=what, fix=BUILD_FROM_INPUTS)
        check_sq_dist(lesson, x, y, f"{what}, with the default device set to 'meta'", out=out, rtol=1e-4, atol=1e-3)


def test_pairwise_sq_dist_float64_and_gradients(lesson):
    x = rand(4, 3, seed=1, dtype=torch.float64).requires_grad_()
    y = rand(5, 3, seed=2, dtype=torch.float64).requires_grad_()
    what = f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}"
    out = run_sq_dist(lesson, x, y, what)
    check_sq_dist(lesson, x.detach(), y.detach(), what, out=out.detach() if isinstance(out, torch.Tensor) else out)
    grad_of(out, x, what)  # the clear message first
    gradients_agree(lambda x, y: lesson.pairwise_sq_dist(x, y), (x, y), what)


@pytest.mark.points(2)
def test_pairwise_sq_dist_is_never_negative(lesson):
    # |x|^2 - 2 x.y + |y|^2 for x == y rounds to tiny values of either sign.
    x = rand(64, 16, seed=3) * 10
    what = f"pairwise_sq_dist(x, x) for x of {describe(x)}"
    out = run_sq_dist(lesson, x, x, what)
    if not (isinstance(out, torch.Tensor) and out.shape == (64, 64) and out.dtype == x.dtype):
        check_sq_dist(lesson, x, x, what, out=out)  # the table's shape or dtype is wrong: told with its pitfall
    worst = out.min().item()
    if worst < 0:
        fail(f"pairwise_sq_dist(x, x) for x of {describe(x)} has negative entries (down to {worst:.3g}); a "
             f"squared distance is never negative. {NEGATIVE}")
    assert_close(out.diagonal(), torch.zeros(64), atol=1e-2, rtol=0,
                 what=f"pairwise_sq_dist(x, x).diagonal() for x of {describe(x)} (each point against itself)")


@pytest.mark.points(2)
def test_pairwise_sq_dist_far_from_the_origin(lesson):
    # GPS-like coordinates: a small cloud centred at 1e4. |x|^2 is ~1.6e9 here, and float32
    # holds it to about +-100, so the expanded formula cancels away every digit of a distance
    # of ~30 unless the points are moved near the origin first.
    x, y = rand(100, 16, seed=4) + 1e4, rand(120, 16, seed=5) + 1e4
    for x_part, y_part in ((x, y), (x[:1], y[:6]), (x[:6], y[:1]), (x, x)):  # one point against a few; x against itself
        what = f"pairwise_sq_dist(x, y) for {inputs(x=x_part, y=y_part)}, points near 1e4"
        if x_part is y_part:
            what = f"pairwise_sq_dist(x, x) for x of {describe(x_part)}, points near 1e4 (0 on the diagonal)"
        tolerance = {"rtol": 1e-3, "atol": 1e-2}
        truth = loop_sq_dist(x_part, y_part).float()
        out = run_sq_dist(lesson, x_part, y_part, what)
        wrong = mismatch(out, truth, what=what, **tolerance)
        if wrong is None:
            continue
        told = diagnosed(wrong, out, x_part, y_part)
        if told != wrong:  # a pitfall of its own (a dtype, a sum over the points), not the cancellation
            fail(told)
        # The signature of the uncentred expansion: the very same points moved near the origin
        # (exactly: subtracting a float32 point within a factor 2 of each coordinate rounds nothing)
        # have the same distances, and come out right.
        center = torch.cat([x_part, y_part]).mean(0)
        try:
            near = lesson.pairwise_sq_dist(x_part - center, y_part - center)
        except Exception:  # noqa: BLE001 (the failure above is the one to tell)
            near = None
        if near is not None and same(near, truth, **tolerance):
            cdist = "aten._euclidean_dist" in count_ops(lambda: lesson.pairwise_sq_dist(x_part, y_part))
            wrong = (f"{wrong}\nThe same points moved near the origin give the right table. "
                     f"{CDIST_CANCELS if cdist else UNCENTRED}")
        fail(wrong)


def test_pairwise_sq_dist_does_not_modify_its_inputs(lesson):
    x, y = rand(5, 3, seed=1) + 100, rand(4, 3, seed=2) + 100
    x0, y0 = x.clone(), y.clone()
    run_sq_dist(lesson, x, y, f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}")
    assert_close(x, x0, what="x after pairwise_sq_dist(x, y) (the caller's tensor must not change)")
    assert_close(y, y0, what="y after pairwise_sq_dist(x, y) (the caller's tensor must not change)")


def test_pairwise_sq_dist_runs_no_python_loop(lesson):
    # Deterministic, unlike a timing: vectorised code runs the same ops for 8 points as for 64.
    assert_no_loop(
        lambda n: partial(lesson.pairwise_sq_dist, rand(n, 3, seed=1), rand(n, 3, seed=2)), 8, 64,
        what="pairwise_sq_dist(x, y) for x and y of shape (n, 3), float32,", unit="points",
        hint="Broadcast instead: x[:, None, :] against y[None, :, :] compares every pair in one op.",
    )
    x, y = rand(8, 2, seed=1), rand(6, 2, seed=2)
    run_sq_dist(lesson, x, y, f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}")  # an error of its own, named
    assert_no_loop(
        lambda d: partial(lesson.pairwise_sq_dist, rand(8, d, seed=1), rand(6, d, seed=2)), 2, 16,
        what="pairwise_sq_dist(x, y) for x of shape (8, d), y of shape (6, d), float32,", unit="coordinates",
        hint="Sum the squared differences over the last dim in one reduction (or use a matrix product).",
    )


@pytest.mark.speed
def test_pairwise_sq_dist_is_faster_than_a_row_loop(lesson):
    # Many rows, few columns: the shape where a loop's per-op overhead shows. Measured: the
    # broadcast difference 29-37x and the centred expansion 70x faster than the loop here.
    x, y = rand(1024, 4, seed=1), rand(32, 4, seed=2)
    run_sq_dist(lesson, x, y, f"pairwise_sq_dist(x, y) for {inputs(x=x, y=y)}")  # an error of its own, named
    assert_speed(
        lambda: row_loop_sq_dist(x, y), lambda: lesson.pairwise_sq_dist(x, y),
        at_least=5, what="pairwise_sq_dist(x, y) for x of shape (1024, 4) and y of shape (32, 4)",
        baseline_name="a loop over the rows of x",
        hint="Compute the whole [N, M] table with broadcasting or a matrix product, not row by row.",
    )


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    merge = make_merge(lesson, 3, 4, 2).cuda()
    a, b = rand(2, 5, 3).cuda(), rand(2, 1, 4).cuda()
    assert_close(merge(a, b), tiled_merge(merge, a, b),
                 what="Merge(3, 4, 2)(a, b) for a of shape (2, 5, 3) and b of shape (2, 1, 4) on CUDA")
    x, y = rand(6, 3).cuda() + 1e3, rand(7, 3).cuda() + 1e3
    assert_close(lesson.pairwise_sq_dist(x, y), loop_sq_dist(x.cpu(), y.cpu()).float().cuda(),
                 rtol=1e-3, atol=1e-2, what="pairwise_sq_dist(x, y) for x of shape (6, 3) and y of shape (7, 3) on CUDA")


# --- the helpers, scenarios and tables the tests use ---------------------------------------------


BUILD_FROM_INPUTS = (
    "Build everything from the inputs (torch.zeros_like, x.new_zeros, device=x.device), or better, let broadcasting do it.")


def inputs(**tensors: torch.Tensor) -> str:
    """"a of shape (5, 3, 5), b of shape (5, 1, 6), float32": each input named with its shape, and
    the dtype once where they share it (after each where they do not)."""
    dtypes = {t.dtype for t in tensors.values()}
    if len(dtypes) == 1:
        shapes = ", ".join(f"{name} of shape {tuple(t.shape)}" for name, t in tensors.items())
        return f"{shapes}, {dtype_name(dtypes.pop())}"
    return ", ".join(f"{name} of shape {tuple(t.shape)}, {dtype_name(t.dtype)}" for name, t in tensors.items())


def torch_says(shape_a, shape_b) -> tuple[int, ...] | None:
    """The shape torch broadcasts the two shapes to, or None when it refuses them.

    Read off meta tensors (no memory); torch.broadcast_shapes would do, but its first call
    imports sympy (0.5 s, a third of some runs).
    """
    try:
        a, b = (torch.empty(tuple(shape), device="meta") for shape in (shape_a, shape_b))
        return tuple(torch.broadcast_tensors(a, b)[0].shape)
    except RuntimeError:
        return None


LIBRARIES = ("torch", "numpy")


def library_calls(fn) -> list[str]:
    """The torch and NumPy functions (Python or C) that `fn()` calls, whatever name it uses."""
    calls: list[str] = []

    def in_library(frame) -> bool:
        return frame is not None and (frame.f_globals.get("__name__") or "").partition(".")[0] in LIBRARIES

    # Only the calls the code makes itself: what a library function calls in turn (torch's
    # broadcast_shapes asks torch.jit whether it is tracing) is no call of the learner's.
    def profile(frame, event, arg):
        if event == "call" and not in_library(frame.f_back):
            if in_library(frame):
                calls.append(f"{frame.f_globals['__name__']}.{frame.f_code.co_name}")
        elif event == "c_call" and not in_library(frame):
            owner = getattr(arg, "__module__", None) or type(getattr(arg, "__self__", None)).__module__ or ""
            if owner.partition(".")[0] in LIBRARIES:
                calls.append(f"{owner}.{getattr(arg, '__name__', '?')}")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    except ValueError:  # a refusal is an answer; what it called is the question
        pass
    finally:
        sys.setprofile(previous)
    return calls


def tiled_merge(merge: nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The lesson text's tiled version, from the module's own weights: tile, concatenate, one Linear."""
    lead = torch_says(a.shape[:-1], b.shape[:-1])
    c = torch.cat([a.expand(*lead, -1), b.expand(*lead, -1)], -1)  # (*lead, F1 + F2)
    weight = torch.cat([merge.linear1.weight, merge.linear2.weight], 1)
    biases = [layer.bias for layer in (merge.linear1, merge.linear2) if layer.bias is not None]
    out = F.linear(c, weight, sum(biases) if biases else None)
    return out if merge.activation is None else merge.activation(out)


IN_PLACE = ("This is the in-place add: `c += ...` writes into c, whose shape cannot grow to the broadcast "
            "shape when c is the side with the 1s. Add into a new tensor: `c = ... + ...`.")
SQUEEZE = ("This is `.squeeze()` without a dim: it drops every size-1 dim of the projection, the 1 that was "
           "there to broadcast included, and what is left lines up against the wrong dims of the other side. "
           "Leave the projections' shapes as they are (they broadcast), or name the dim you mean.")
EXPAND_AS = ("This is `expand_as`: it stretches size-1 dims only, so {grown}'s projection takes {target}'s shape only "
             "where {grown} is the side with the 1s; here {target} is. Either side may be the one stretched: add the "
             "projections as they are and let `+` broadcast them both.")
TILED_SEED = ("This is the lesson text's tiled version: b repeated along dim 1 to a's size and concatenated to a. It "
              "needs a to be the bigger side in every leading dim (and 3-d inputs), and it builds the tiled copy the lesson warns of. "
              "Project each input with its own Linear layer and let `+` broadcast the projections: either side may "
              "be the one stretched.")
UNREGISTERED = ("Both layers must be registered submodules named linear1 and linear2: assign them as attributes of "
                "self after super().__init__(), so that nn.Module sees them (their parameters, .to(), training).")
ACTIVATION_PER_PART = ("This is the activation applied to each projection: Linear(cat(a, b)) is followed by ONE "
                       "activation, of the whole sum, and f(u) + f(v) is not f(u + v). Add first, then activate.")


def squeezed_merge(merge: nn.Module, a: torch.Tensor, b: torch.Tensor, side: str) -> torch.Tensor:
    """What Merge gives when the projection of `side` goes through .squeeze() with no dim."""
    pa, pb = merge.linear1(a), merge.linear2(b)
    c = pa.squeeze() + pb if side == "a" else pa + pb.squeeze()
    return c if merge.activation is None else merge.activation(c)


def expanded_merge(merge: nn.Module, a: torch.Tensor, b: torch.Tensor, side: str) -> torch.Tensor:
    """What Merge gives when the projection of `side` is stretched to the other's with expand_as."""
    pa, pb = merge.linear1(a), merge.linear2(b)
    c = pa + pb.expand_as(pa) if side == "b" else pa.expand_as(pb) + pb
    return c if merge.activation is None else merge.activation(c)


def merge_per_part(merge: nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What Merge gives with the activation applied to each projection before the sum."""
    pa, pb = merge.linear1(a), merge.linear2(b)
    return pa + pb if merge.activation is None else merge.activation(pa) + merge.activation(pb)


# What Merge gives after each pitfall, from (merge, a, b): merge's weights, the pitfall's code.
MERGE_PITFALLS = [Pitfall(partial(squeezed_merge, side="b"), SQUEEZE), Pitfall(partial(squeezed_merge, side="a"), SQUEEZE),
                  Pitfall(merge_per_part, ACTIVATION_PER_PART)]


ACTIVATIONS = {None: None, "torch.relu": torch.relu, "torch.tanh": torch.tanh, "nn.Tanh()": nn.Tanh(),
               "torch.sigmoid": torch.sigmoid, "nn.Softplus()": nn.Softplus()}


class Recorded:
    """An activation that records the shape of each tensor it is given."""

    def __init__(self, fn):
        self.fn, self.shapes = fn, []

    def __call__(self, t):
        self.shapes.append(tuple(t.shape))
        return self.fn(t)


# The learner's Merge lives beside their code: these scenarios (grader.testing.scenario) build
# it there and report what it did, and the tests check that here against a twin made of its
# own weights. Its layers are built on the CPU, where the test's tensors are, whatever torch's
# default device is for the call.
def built(lesson, sizes, activation, seed, dtype=None, watch=False):
    torch.manual_seed(seed)  # the layers' initial weights
    fn = ACTIVATIONS[activation]
    fn = Recorded(fn) if watch and fn is not None else fn
    with torch.device("cpu"):
        merge = lesson.Merge(*sizes, activation=fn)
    return merge if dtype is None else merge.to(dtype), fn


def parameters(merge) -> dict:
    return {name: param.detach().clone() for name, param in merge.named_parameters()}


@beside
def merge_run(lesson, sizes, activation, a, b, seed=0, dtype=None, watch=False):
    """Merge(*sizes, activation=ACTIVATIONS[activation]) called on a and b: its output, its
    parameters, and (`watch`) the shapes its activation was called on."""
    merge, fn = built(lesson, sizes, activation, seed, dtype, watch)
    out = merge(a, b)
    return out, parameters(merge), fn.shapes if watch and fn is not None else None


@beside
def merge_trained(lesson, sizes, activation, a, b, seed=0):
    """Merge called on a and b (both requiring grad), and the mean square of its output
    backpropagated: its output, parameters, their gradients by name, and a's and b's."""
    merge, _ = built(lesson, sizes, activation, seed)
    a.requires_grad_(), b.requires_grad_()
    out = merge(a, b)
    out.square().mean().backward()
    grads = {name: param.grad for name, param in merge.named_parameters()}
    return out.detach(), parameters(merge), grads, a.grad, b.grad


@beside
def merge_parameter_names(lesson, sizes):
    """The names of Merge(*sizes)'s parameters, as named_parameters() gives them."""
    merge, _ = built(lesson, sizes, None, 0)
    return sorted(name for name, _ in merge.named_parameters())


@beside
def merge_made(lesson, sizes, a, b, **activation):
    """Merge(*sizes, activation=ACTIVATIONS[...]), or with its default activation when none is
    named, made after torch.manual_seed(0) and called on a and b: its output and parameters."""
    torch.manual_seed(0)
    with torch.device("cpu"):
        merge = lesson.Merge(*sizes, **{name: ACTIVATIONS[value] for name, value in activation.items()})
    return merge(a, b), parameters(merge)


@beside
def merge_layers(lesson, sizes):
    """What Merge(*sizes) holds: for linear1 and linear2, their type's name and, where they are
    nn.Linear, their (in_features, out_features); the repr of its activation, or None."""
    merge, _ = built(lesson, sizes, None, 0)
    layers = {}
    for name in ("linear1", "linear2"):
        layer = getattr(merge, name, None)
        layers[name] = (type(layer).__name__, isinstance(layer, nn.Linear),
                        (layer.in_features, layer.out_features) if isinstance(layer, nn.Linear) else None)
    activation = getattr(merge, "activation", None)
    return layers, None if activation is None else repr(activation)


@beside
def merge_allocations(lesson, sizes, a, b):
    """What Merge's call on a and b allocated, op by op, largest first (grader.testing.memory)."""
    merge, _ = built(lesson, sizes, None, 0)
    merge(a, b)  # an error of its own is raised as itself
    return [tuple(found) for found in allocations(lambda: merge(a, b))]


class Twin(nn.Module):
    """The learner's Merge as a scenario reported it: nn.Linear layers with its parameters, its activation."""

    def __init__(self, layers: dict[str, tuple[torch.Tensor, torch.Tensor | None]], activation) -> None:
        super().__init__()
        for name, (weight, bias) in layers.items():
            layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, dtype=weight.dtype)
            with torch.no_grad():
                layer.weight.copy_(weight)
                if bias is not None:
                    layer.bias.copy_(bias)
            setattr(self, name, layer)
        self.activation = ACTIVATIONS[activation]

    @classmethod
    def of(cls, params: dict, activation, what: str) -> "Twin":
        __tracebackhide__ = True
        if not {"linear1.weight", "linear2.weight"} <= set(params):
            fail(f"{what}: Merge.named_parameters() gives {', '.join(sorted(params)) or 'nothing'}.\n{UNREGISTERED}")
        return cls({name: (params[f"{name}.weight"], params.get(f"{name}.bias")) for name in ("linear1", "linear2")},
                   activation)

    @classmethod
    def of_sizes(cls, sizes, activation, dtype=torch.float32) -> "Twin":
        """One with fresh weights: it raises the shape errors the learner's would."""
        f1, f2, out = sizes
        return cls({"linear1": (torch.zeros(out, f1, dtype=dtype), None),
                    "linear2": (torch.zeros(out, f2, dtype=dtype), None)}, activation)


def run_merge(scenario, lesson, sizes, activation, a, b, what: str, **options):
    """A Merge scenario's report; a RuntimeError that is one of the lesson's pitfalls fails the
    test naming it (on a line of its own, which the plugin tells once), any other error of the
    learner's code with `what` and its lines."""
    __tracebackhide__ = True
    with reported(what):
        try:
            return scenario(lesson, sizes, activation, a, b, **options)
        except RuntimeError as exc:
            error = exc
    said = f"{what} raised {quoted(error)}"
    if "broadcast shape" in str(error):
        fail(f"{said}.\n{IN_PLACE}")
    shaped = Twin.of_sizes(sizes, activation, a.dtype)
    if any(raises_the_same(lambda: squeezed_merge(shaped, a, b, side), error) for side in "ab"):
        fail(f"{said}.\n{SQUEEZE}")
    for grown, target in (("b", "a"), ("a", "b")):
        if raises_the_same(lambda: expanded_merge(shaped, a, b, grown), error):
            fail(f"{said}.\n{EXPAND_AS.format(grown=grown, target=target)}")
    if raises_the_same(lambda: torch.cat([a, b.repeat([1, a.shape[1], 1])], 2), error):
        fail(f"{said}.\n{TILED_SEED}")
    dtype = options.get("dtype")
    if dtype is not None:
        names = merge_parameter_names(lesson, sizes)
        if not {"linear1.weight", "linear2.weight"} <= set(names):
            fail(f"{said}: .to({dtype}) converted no layer, as Merge.named_parameters() gives {', '.join(names) or 'nothing'}.\n{UNREGISTERED}")
    with reported(what):
        raise error


def merged(lesson, sizes, activation, a, b, what: str, **options) -> tuple[object, Twin, list | None]:
    """Merge(*sizes, activation=...)(a, b) beside the code: its output, its twin here, and
    (watch=True) the shapes its activation saw."""
    __tracebackhide__ = True
    out, params, calls = run_merge(merge_run, lesson, sizes, activation, a, b, what, **options)
    return out, Twin.of(params, activation, what), calls


def check_merge(out, merge: nn.Module, a: torch.Tensor, b: torch.Tensor, what: str, **tolerance) -> None:
    """`out` must equal the tiled formula; where it equals what a named pitfall gives, say so."""
    __tracebackhide__ = True
    expected = tiled_merge(merge, a, b)
    wrong = mismatch(out, expected, what=what, **tolerance)
    if wrong is not None:
        fail(merge_diagnosed(wrong, out, merge, a, b, **tolerance))


def merge_diagnosed(wrong: str, out, merge: nn.Module, a: torch.Tensor, b: torch.Tensor, **tolerance) -> str:
    """`wrong` (what differs in Merge's `out` from the tiled formula of `merge`'s weights), with
    the named pitfall whose result `out` is, where one is (computed in `merge`'s dtype, compared
    in out's)."""
    if not isinstance(out, torch.Tensor):
        return wrong
    got = out.detach()
    with torch.no_grad():
        pitfall = pitfall_of(got, None, MERGE_PITFALLS, merge, a, b,
                             explains=lambda got, wrong, right: same(got, wrong.to(got.dtype), **tolerance))
        if pitfall is not None:
            return f"{wrong}\n{pitfall}"
        if merge.activation is None:
            expected = tiled_merge(merge, a, b)
            applied = [name for name, fn in ACTIVATIONS.items()
                       if fn is not None and same(got, fn(expected).to(got.dtype), **tolerance)]
            if applied:
                return (f"{wrong}\nactivation=None means no activation, and your result is {applied[0]} of the "
                        "right one: apply self.activation only when it is not None.")
    return wrong


def make_merge(lesson, f1, f2, out, activation=None, seed=0):
    torch.manual_seed(seed)  # the layers' initial weights
    return lesson.Merge(f1, f2, out, activation=activation)


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def loop_sq_dist(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The definition, in float64, one point of x at a time: the ground truth."""
    x, y = x.double(), y.double()
    out = torch.zeros(x.shape[0], y.shape[0], dtype=torch.float64)
    for i in range(x.shape[0]):
        out[i] = ((x[i] - y) ** 2).sum(1)  # (M,): x[i]'s differences with every row of y, squared, summed
    return out


ROW_BY_ROW = ("This is x - y taken as they are: it pairs row i of x with row i of y only (and needs N == M). "
              "Give x and y size-1 dims in different places, so that every row of x meets every row of y.")
WRONG_DIM = ("This is a sum over the wrong dim: the [N, M, D] differences were summed over the points, "
             "not over the coordinates. Name the dim of the reduction: the last one.")
NEGATIVE = ("Rounding in |x|^2 - 2 x.y + |y|^2 leaves tiny negatives where the answer is 0: clamp the result "
            "at 0 (a sqrt of it would be nan).")
UNCENTRED = ("This is cancellation in |x|^2 - 2 x.y + |y|^2: |x|^2 is about 1.6e9 here, and float32 holds it "
             "only to about +-100, so nothing of a distance of ~30 survives the subtraction. Move both sets "
             "near the origin first (subtract one common point from x and y: no distance changes).")
CDIST_CANCELS = ("This is torch.cdist: past 25 rows it computes with |x|^2 - 2 x.y + |y|^2 itself (its compute_mode's "
                 "default), and here that is cancellation: |x|^2 is about 1.6e9, and float32 holds it only to about +-100, so "
                 "nothing of a distance of ~30 survives. Take the differences with broadcasting, or move both sets "
                 "near the origin first (subtract one common point from x and y: no distance changes).")
CDIST_HALF = ("torch.cdist has no float16 or bfloat16 kernel on the CPU, so it refuses x's dtype: compute the table "
              "yourself, with broadcasting or a matrix product, in x's dtype.")
OTHER_DTYPE = ("The docstring promises the table in x's dtype: compute in it, or cast the result back "
               "(out.to(x.dtype)); a table in another dtype is a different answer.")


def cdist_refused(exc: BaseException) -> str:
    """The advice for torch.cdist's refusal of a half-precision dtype; "" for any other error."""
    return CDIST_HALF if isinstance(exc, NotImplementedError) and '"cdist" not implemented for' in str(exc) else ""


def run_sq_dist(lesson, x: torch.Tensor, y: torch.Tensor, what: str) -> torch.Tensor:
    """pairwise_sq_dist(x, y); a shape error that x - y row by row gives fails naming it."""
    __tracebackhide__ = True
    with reported(what):
        try:
            return lesson.pairwise_sq_dist(x, y)
        except RuntimeError as exc:
            error = exc
    if raises_the_same(lambda: x - y, error):
        fail(f"{what} raised {quoted(error)}.\n{ROW_BY_ROW}")
    with reported(what, advice=cdist_refused):
        raise error


def check_sq_dist(lesson, x: torch.Tensor, y: torch.Tensor, what: str, out=None, **tolerance) -> None:
    """pairwise_sq_dist(x, y) (or its `out`) must be the loop definition (in x's dtype); where it
    is what a pitfall gives, say which."""
    __tracebackhide__ = True
    out = run_sq_dist(lesson, x, y, what) if out is None else out
    wrong = mismatch(out, loop_sq_dist(x, y).to(x.dtype), what=what, **tolerance)
    if wrong is not None:
        fail(diagnosed(wrong, out, x, y))


def diagnosed(wrong: str, out, x: torch.Tensor, y: torch.Tensor) -> str:
    """`wrong` (what differs in pairwise_sq_dist(x, y)'s `out`), with the pitfall whose result
    `out` is, where one is: a table in another dtype, a sum over the points, x - y row by row."""
    truth = loop_sq_dist(x, y)
    if isinstance(out, torch.Tensor) and out.dtype != x.dtype and out.shape == truth.shape:
        return f"{wrong}\n{OTHER_DTYPE}"
    if isinstance(out, torch.Tensor) and out.dtype.is_floating_point:
        got = out.detach().double()
        diffs = (x.detach().double()[:, None, :] - y.detach().double()[None, :, :]) ** 2  # (N, M, D)
        if any(got.shape == diffs.sum(dim).shape and same(got, diffs.sum(dim), rtol=1e-2, atol=1e-2) for dim in (0, 1)):
            wrong = f"{wrong}\n{WRONG_DIM}"
        elif x.shape == y.shape and got.shape == truth.shape and got.numel():
            row_by_row = ((x.detach().double() - y.detach().double()) ** 2).sum(-1)  # (N,)
            if any(same(got, variant, rtol=1e-3, atol=1e-3) for variant in
                   (row_by_row[:, None].expand_as(got), row_by_row[None, :].expand_as(got))):
                wrong = f"{wrong}\n{ROW_BY_ROW}"
    return wrong


def gradients_agree(fn, inputs, what: str) -> None:
    """torch.autograd.gradcheck, failing with the kit's message rather than torch's traceback."""
    __tracebackhide__ = True
    if not torch.autograd.gradcheck(fn, inputs, raise_exception=False):
        fail(f"{what}: the analytic gradient (backward) differs from the numerical one (finite differences)")


def row_loop_sq_dist(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The one-loop version a learner writes first: vectorised inside, a loop over x's rows."""
    return torch.stack([((row - y) ** 2).sum(1) for row in x])


@st.composite
def merge_shapes(draw):
    """Leading dims that broadcast (either side may hold the 1s, ranks may differ)."""
    (lead_a, lead_b), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
    return lead_a, lead_b, draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))


def by_the_rules(a: tuple, b: tuple) -> tuple | None:
    """Sizes paired position by position (the shapes already of one length): a 1 takes the
    other size; None where a pair clashes."""
    out = []
    for size_a, size_b in zip(a, b):
        if size_a != size_b and 1 not in (size_a, size_b):
            return None
        out.append(size_b if size_a == 1 else size_a)
    return tuple(out)


def _padded(a: tuple, b: tuple, left: bool = False) -> tuple[tuple, tuple]:
    """a and b made one length with 1s: in front (a missing dim is a leading 1), or behind (`left`)."""
    n = max(len(a), len(b))
    if left:
        return a + (1,) * (n - len(a)), b + (1,) * (n - len(b))
    return (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b


# What broadcast_shape(a, b) returns after each pitfall of the rules (None: it refuses), for
# shapes as tuples; a pitfall the shapes cannot show (theirs broadcast the same way) is left out.
SHAPE_PITFALLS = [
    Pitfall(lambda a, b: by_the_rules(*_padded(a, b, left=True)),
            "This is lining the shapes up from the LEFT: sizes pair up from the right, and a missing dim is a "
            "leading 1 ((2,) is read as (1, 2), not (2, 1))."),
    Pitfall(lambda a, b: by_the_rules(*_padded(a, b))[max(len(a), len(b)) - min(len(a), len(b)):],
            "The longer shape's leading dims were lost: zip() stops at the shorter shape. A missing dim counts as "
            "1, so the longer shape's extra sizes come through as they are.",
            shows=lambda a, b: by_the_rules(*_padded(a, b)) is not None and len(a) != len(b)),
    Pitfall(lambda a, b: tuple(max(x, y) for x, y in zip(*_padded(a, b))),
            "This is taking the larger size of each pair: a 1 stretches to the other size, whatever it is, even 0 "
            "(1 against 0 gives 0: an empty dim stays empty). Keep the size that is not 1.",
            shows=lambda a, b: by_the_rules(*_padded(a, b)) is not None),
]


def as_shape(got, shape) -> bool:
    """Whether broadcast_shape's `got` is `shape` (a list with its sizes too: that is named apart)."""
    return got == shape or (isinstance(got, list) and tuple(got) == shape)


def shape_problem(lesson, shape_a, shape_b, expected: tuple) -> str | None:
    """What is wrong with broadcast_shape(shape_a, shape_b) for shapes that broadcast to
    `expected`, naming the pitfall whose result it is, or None when it is right."""
    what = f"broadcast_shape({shape_a}, {shape_b})"
    try:
        got = lesson.broadcast_shape(shape_a, shape_b)
    except ValueError as exc:
        got, said = None, f"{what} raised ValueError({str(exc)!r}); these shapes broadcast to {expected}."
    else:
        said = f"{what} returned {got!r}; expected the tuple {expected}."
    if got is not None and isinstance(got, tuple) and got == expected:
        kinds = sorted({type(size).__name__ for size in got if type(size) is not int})
        if not kinds:
            return None
        return (f"{what} returned {got!r}, with sizes of type {', '.join(kinds)}; the docstring promises a tuple "
                "of Python ints (compare and pick the sizes themselves)")
    if isinstance(got, list) and tuple(got) == expected:
        return (f"{said} This is a list for a tuple: a list never equals a tuple in Python ([3, 2] == (3, 2) is "
                "False). Return tuple(...).")
    pitfall = pitfall_of(got, expected, SHAPE_PITFALLS, tuple(shape_a), tuple(shape_b), match=as_shape)
    # A refusal (None) is only lining up from the left's, and is named only where the code shows
    # that pitfall elsewhere too.
    if pitfall is None or (got is None and not left_aligned(lesson)):
        return said
    return f"{said} {pitfall}"


def left_aligned(lesson) -> bool:
    """Whether broadcast_shape((2, 1), (2,)) gives (2, 1), as shapes lined up from the left do."""
    try:
        got = lesson.broadcast_shape((2, 1), (2,))
    except Exception:  # noqa: BLE001 (the learner's error: not lined up from the left)
        return False
    return isinstance(got, (tuple, list)) and tuple(got) == (2, 1)


def shape_id(shape) -> str:
    """(3, 1) -> "3x1", () -> "scalar": test ids that can be typed on a command line."""
    return "x".join(map(str, shape)) or "scalar"


# The library helpers that broadcast shapes, each replaced while broadcast_shape runs by one
# that notes its name and refuses: the learner's answer must not need them.
HELPERS = (("torch", "broadcast_shapes"), ("torch", "broadcast_tensors"), ("torch", "broadcast_to"),
           ("numpy", "broadcast_shapes"), ("numpy", "broadcast"), ("numpy", "broadcast_to"))


@beside
def broadcast_shape_without_helpers(lesson, shape_a, shape_b) -> dict:
    """broadcast_shape(shape_a, shape_b) with HELPERS refusing: the helpers it called, and
    the torch and NumPy functions it called under any name (`library_calls`)."""
    import importlib

    helpers: list[str] = []

    def refusing(name: str):
        def refuse(*args, **kwargs):
            helpers.append(name)
            raise AssertionError(f"{name} refused: broadcast_shape must apply the rules itself")
        return refuse

    with pytest.MonkeyPatch.context() as patch:
        for owner, name in HELPERS:
            patch.setattr(importlib.import_module(owner), name, refusing(f"{owner}.{name}"))
        try:
            lesson.broadcast_shape(shape_a, shape_b)
        except Exception:  # noqa: BLE001 (what it called is the question, not what it raised)
            pass
    with reported(f"broadcast_shape({shape_a}, {shape_b})"):
        return {"helpers": helpers, "library": library_calls(lambda: lesson.broadcast_shape(shape_a, shape_b))}


def aliased(name: str) -> str:
    """"torch.functional.broadcast_shapes (torch.broadcast_shapes under another name)" for a helper
    of HELPERS reached through another module; any other name as it is."""
    helper = next((f"{owner}.{function}" for owner, function in HELPERS if name.rpartition(".")[2] == function
                   and name.partition(".")[0] == owner), None)
    return f"{name} ({helper} under another name)" if helper and helper != name else name



CONTRACT = """Contract (lesson text, docstrings, hints) -> the tests that check it:
Merge
- equals Linear(cat(a, tiled b)) with the same weights, the example shapes -> test_merge_on_the_example_shapes
- any broadcastable leading dims: either side stretched, ranks differ, 0-d and empty ones
  -> test_merge_broadcasts_any_leading_dims
- gradients for both layers (and for a and b, as the tiled version gives) -> test_merge_trains_both_layers
- never allocates anything the size of the tiled input -> test_merge_never_materialises_the_tiled_tensor
- returns [*broadcast(A, B), out_features] in the inputs' dtype (float64, float16, bfloat16)
  -> test_merge_keeps_the_inputs_dtype, test_merge_broadcasts_any_leading_dims
- `linear1`/`linear2` are nn.Linear of the documented sizes, registered (one bias or two: hint 2)
  -> test_merge_layers_are_what_the_docstring_says, test_merge_trains_both_layers
- Linear(cat(a, b)) has a bias: one of the layers keeps nn.Linear's (one bias or two: hint 2)
  -> test_merge_has_the_bias_of_one_linear_layer
- `activation=None` in the signature: left out, no activation -> test_merge_without_an_activation_applies_none
- `activation`: a function or a module, or None for none, called once per forward, on the
  linear part's output (f(u) + f(v), one per part, is named as such) -> test_merge_applies_the_activation_to_the_sum, test_merge_layers_are_what_the_docstring_says,
  test_merge_broadcasts_any_leading_dims
- pitfalls named by name: an in-place += on the stretched side, a squeeze() without a dim, a tiled copy
  -> test_merge_broadcasts_any_leading_dims, test_merge_on_the_example_shapes, test_merge_never_materialises_the_tiled_tensor
- runs on the inputs' device -> test_merge_builds_nothing_on_the_default_device, test_runs_on_the_inputs_device (CUDA)
broadcast_shape
- agrees with torch.broadcast_shapes on every pair, any rank, any sizes (0-d shapes and 0-sized dims
  included; the max() rule's 1-against-0 result named)
  -> test_broadcast_shape_examples, test_broadcast_shape_agrees_with_torch_when_shapes_broadcast,
  test_broadcast_shape_agrees_with_torch_on_any_pair
- tuples, lists or torch.Size in; a tuple of Python ints out (a list is named as such)
  -> test_broadcast_shape_examples, test_broadcast_shape_accepts_torch_size_and_lists
- lines up from the right, a missing dim counts as 1, a 1 stretches to the other size (each broken
  rule named when the result shows it) -> test_broadcast_shape_examples,
  test_broadcast_shape_agrees_with_torch_when_shapes_broadcast, test_broadcast_shape_agrees_with_torch_on_any_pair
- sizes too big to allocate; sizes compared by value (`is` named) -> test_broadcast_shape_of_huge_shapes
- ValueError naming both shapes when they don't broadcast -> test_broadcast_shape_rejects_with_both_shapes_named,
  test_broadcast_shape_agrees_with_torch_on_any_pair
- by hand: no tensors (nor NumPy arrays), no torch or NumPy broadcasting helpers, whatever the alias
  -> test_broadcast_shape_works_out_the_rules_itself, test_broadcast_shape_of_huge_shapes
pairwise_sq_dist
- equals the loop definition up to float rounding, [N, M], any N, M, D (0 included), any layout of x and y
  -> test_pairwise_sq_dist_small_example, test_pairwise_sq_dist_matches_the_loop_definition,
  test_pairwise_sq_dist_of_edge_shapes
- in x's dtype (float32, float64, float16, bfloat16) -> test_pairwise_sq_dist_float64_and_gradients,
  test_pairwise_sq_dist_keeps_half_precision, test_pairwise_sq_dist_small_example
- no Python loop (over points or coordinates); faster than a row loop -> test_pairwise_sq_dist_runs_no_python_loop,
  test_pairwise_sq_dist_is_faster_than_a_row_loop
- never negative (a missing clamp named) -> test_pairwise_sq_dist_is_never_negative, test_pairwise_sq_dist_keeps_half_precision
- accurate for float32 points near 1e4, a point against itself included (uncentred cancellation named
  when the same points near the origin come out right) -> test_pairwise_sq_dist_far_from_the_origin,
  test_pairwise_sq_dist_is_never_negative
- every row of x against every row of y, summed over the coordinates (x - y row by row, or a sum
  over the wrong dim, named) -> test_pairwise_sq_dist_small_example, test_pairwise_sq_dist_matches_the_loop_definition
- x and y are not modified -> test_pairwise_sq_dist_does_not_modify_its_inputs
- runs on the inputs' device -> test_pairwise_sq_dist_builds_nothing_on_the_default_device,
  test_runs_on_the_inputs_device (CUDA)
"""
