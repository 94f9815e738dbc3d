"""Lesson 03, broadcasting: checks broadcast.py against tiling, torch's rules and the loop definition.

`lesson` is the module under test (the learner's, the reference, or a mutant).

Contract (lesson text, docstrings, hints) -> the tests that check it:
Merge
- equals Linear(cat(a, tiled b)) with the same weights, seed's shapes -> test_merge_on_the_seed_shapes
- any broadcastable leading dims: either side stretched, ranks differ, 0-d and empty ones
  -> test_merge_broadcasts_any_leading_dims
- gradients for both layers (and for a and b, as the tiled version gives) -> test_merge_trains_both_layers
- never allocates anything the size of the tiled input -> test_merge_never_materialises_the_tiled_tensor
- returns [*broadcast(A, B), out_features] in the inputs' dtype (float64, float16, bfloat16)
  -> test_merge_keeps_the_inputs_dtype, test_merge_broadcasts_any_leading_dims
- `linear1`/`linear2` are nn.Linear of the documented sizes, registered (bias=False allowed)
  -> test_merge_layers_are_what_the_docstring_says, test_merge_trains_both_layers
- `activation`: a function or a module, or None for none, applied once to the sum
  -> test_merge_applies_the_activation_to_the_sum, test_merge_layers_are_what_the_docstring_says
- runs on the inputs' device -> test_merge_builds_nothing_on_the_default_device, test_runs_on_the_inputs_device (CUDA)
broadcast_shape
- agrees with torch.broadcast_shapes (0-d shapes, 0-sized dims: "a 1 takes the other size, even 0")
  -> test_broadcast_shape_examples, test_broadcast_shape_agrees_with_torch_when_shapes_broadcast,
  test_broadcast_shape_agrees_with_torch_on_any_pair
- tuples, lists or torch.Size in; a tuple of Python ints out -> test_broadcast_shape_examples,
  test_broadcast_shape_accepts_torch_size_and_lists
- ValueError naming both shapes when they don't broadcast -> test_broadcast_shape_rejects_with_both_shapes_named,
  test_broadcast_shape_agrees_with_torch_on_any_pair
- by hand: no tensors (nor NumPy arrays), no torch or NumPy broadcasting helpers, whatever the alias
  -> test_broadcast_shape_works_out_the_rules_itself, test_broadcast_shape_of_huge_shapes
pairwise_sq_dist
- equals the loop definition, [N, M], any N, M, D (0 included), any layout of x and y
  -> test_pairwise_sq_dist_small_example, test_pairwise_sq_dist_matches_the_loop_definition,
  test_pairwise_sq_dist_of_edge_shapes
- in x's dtype (float32, float64, float16, bfloat16) -> test_pairwise_sq_dist_float64_and_gradients,
  test_pairwise_sq_dist_keeps_half_precision, test_pairwise_sq_dist_small_example
- no Python loop (over points or coordinates); faster than a row loop -> test_pairwise_sq_dist_runs_no_python_loop,
  test_pairwise_sq_dist_is_faster_than_a_row_loop
- never negative -> test_pairwise_sq_dist_is_never_negative
- accurate far from the origin, 0 for a point against itself -> test_pairwise_sq_dist_far_from_the_origin,
  test_pairwise_sq_dist_is_never_negative
- x and y are not modified -> test_pairwise_sq_dist_does_not_modify_its_inputs
- runs on the inputs' device -> test_pairwise_sq_dist_builds_nothing_on_the_default_device,
  test_runs_on_the_inputs_device (CUDA)
"""

import sys
from functools import partial

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch import nn

from grader.testing import assert_close, assert_no_loop, assert_speed, count_ops, describe, expect_raises, explained, grad_of
from grader.testing.differential import on_another_default_device
from grader.testing.memory import MiB, allocations, format_allocations
from grader.testing.strategies import ALL_LAYOUTS, with_layout

BUILD_FROM_INPUTS = (
    "Build everything from the inputs (torch.zeros_like, x.new_zeros, device=x.device), or better, let broadcasting do it.")

# --- helpers ---------------------------------------------------------------------------------


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

    def profile(frame, event, arg):
        if event == "call":
            module = frame.f_globals.get("__name__") or ""
            if module.partition(".")[0] in LIBRARIES:
                calls.append(f"{module}.{frame.f_code.co_name}")
        elif event == "c_call":
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
    """The seed's version, from the module's own weights: tile, concatenate, one Linear."""
    lead = torch_says(a.shape[:-1], b.shape[:-1])
    c = torch.cat([a.expand(*lead, -1), b.expand(*lead, -1)], -1)  # (*lead, F1 + F2)
    weight = torch.cat([merge.linear1.weight, merge.linear2.weight], 1)
    biases = [layer.bias for layer in (merge.linear1, merge.linear2) if layer.bias is not None]
    out = F.linear(c, weight, sum(biases) if biases else None)
    return out if merge.activation is None else merge.activation(out)


def explains_in_place(what: str):
    """The lesson's advice where PyTorch's error names the pitfall ("broadcast shape")."""
    return explained(
        what, when="broadcast shape",
        advice="an in-place `c += ...` writes into c, whose shape cannot grow to the "
        "broadcast shape when c is the stretched side. Write `c = linear1(a) + linear2(b)`.")


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


def row_loop_sq_dist(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The one-loop version a learner writes first: vectorised inside, a loop over x's rows."""
    return torch.stack([((row - y) ** 2).sum(1) for row in x])


# --- Merge -----------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_merge_on_the_seed_shapes(lesson):
    merge = make_merge(lesson, 5, 6, 10, activation=torch.relu)
    a, b = rand(5, 3, 5, seed=1), rand(5, 1, 6, seed=2)
    out = merge(a, b)
    what = "Merge(5, 6, 10, activation=torch.relu)(a, b) for a (5, 3, 5), b (5, 1, 6)"
    assert_close(out, tiled_merge(merge, a, b), what=what)


def test_merge_layers_are_what_the_docstring_says(lesson):
    merge = make_merge(lesson, 5, 6, 10)
    for name, fan_in in (("linear1", 5), ("linear2", 6)):
        layer = getattr(merge, name, None)
        assert isinstance(layer, nn.Linear), f"Merge.{name} should be an nn.Linear, found {type(layer).__name__}"
        assert (layer.in_features, layer.out_features) == (fan_in, 10), (
            f"Merge(5, 6, 10).{name} is Linear({layer.in_features}, {layer.out_features}); expected Linear({fan_in}, 10)"
        )
    assert merge.activation is None, "Merge(..., activation=None) must apply no activation"


@st.composite
def merge_shapes(draw):
    """Leading dims that broadcast (either side may hold the 1s, ranks may differ)."""
    (lead_a, lead_b), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
    return lead_a, lead_b, draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))


@given(merge_shapes(), st.sampled_from([None, "relu", "tanh"]))
@example(((5, 3), (5, 1), 5, 6, 10), "relu")  # the seed's shapes
@example(((4, 1), (4, 3), 2, 3, 2), None)  # a is the one stretched
@example(((2, 3, 4), (4,), 2, 3, 2), None)  # b has fewer dims
@example(((), (3,), 2, 2, 2), None)  # a has none at all
@example(((), (), 3, 2, 2), None)  # neither has any: a (3,), b (2,)
@example(((4, 1), (1, 3), 2, 3, 2), "tanh")  # each side stretched along one dim
@example(((3,), (2, 1, 3), 2, 3, 2), None)  # b has more dims than a
@example(((0, 3), (1, 1), 2, 3, 2), None)  # an empty leading dim
@example(((1,), (2, 0), 2, 3, 2), None)  # b's empty dim stretches a
@pytest.mark.points(2)
def test_merge_broadcasts_any_leading_dims(lesson, shapes, activation):
    lead_a, lead_b, f1, f2, out_features = shapes
    act = {"relu": torch.relu, "tanh": nn.Tanh(), None: None}[activation]
    merge = make_merge(lesson, f1, f2, out_features, activation=act)
    a, b = rand(*lead_a, f1, seed=1), rand(*lead_b, f2, seed=2)
    what = f"Merge({f1}, {f2}, {out_features}, activation={activation})(a, b) for a {tuple(a.shape)}, b {tuple(b.shape)}"
    with explains_in_place(what):
        out = merge(a, b)
    assert_close(out, tiled_merge(merge, a, b), what=what)


@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_trains_both_layers(lesson, stretched):
    merge = make_merge(lesson, 3, 4, 2, activation=torch.tanh)
    a, b = rand(6, 5, 3, seed=1), rand(6, 1, 4, seed=2)
    if stretched == "a":
        a, b = rand(6, 1, 3, seed=1), rand(6, 5, 4, seed=2)
    a.requires_grad_(), b.requires_grad_()
    names = {name for name, _ in merge.named_parameters()}
    assert {"linear1.weight", "linear2.weight"} <= names, (
        f"Merge.named_parameters() gives {sorted(names)}: both layers must be registered submodules "
        "(assign them as attributes of self after super().__init__())"
    )
    loss = merge(a, b).square().mean()
    loss.backward()
    for name, param in merge.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, f"{name} got no gradient from the loss"
    # The gradients are those of the tiled formula.
    expected = torch.autograd.grad(tiled_merge(merge, a, b).square().mean(), [*merge.parameters(), a, b])
    for (name, param), grad in zip(merge.named_parameters(), expected):
        assert_close(param.grad, grad, what=f"the gradient of {name} (a {tuple(a.shape)}, b {tuple(b.shape)})")
    for name, tensor, grad in (("a", a, expected[-2]), ("b", b, expected[-1])):
        assert tensor.grad is not None, f"Merge(...)(a, b): no gradient reached the input {name} (no .detach() on the inputs)"
        assert_close(tensor.grad, grad, what=f"the gradient of the input {name} of shape {tuple(tensor.shape)}")


ACTIVATIONS = {"torch.relu": torch.relu, "nn.Tanh()": nn.Tanh(), "torch.sigmoid": torch.sigmoid, "nn.Softplus()": nn.Softplus()}


class Recorded:
    """An activation that records the shape of each tensor it is given."""

    def __init__(self, fn):
        self.fn, self.shapes = fn, []

    def __call__(self, t):
        self.shapes.append(tuple(t.shape))
        return self.fn(t)


@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_applies_the_activation_to_the_sum(lesson, stretched):
    a, b = rand(4, 3, 3, seed=1), rand(4, 1, 2, seed=2)
    if stretched == "a":
        a, b = rand(4, 1, 3, seed=1), rand(4, 3, 2, seed=2)
    for name, fn in ACTIVATIONS.items():
        activation = Recorded(fn)
        merge = make_merge(lesson, 3, 2, 4, activation=activation)
        what = f"Merge(3, 2, 4, activation={name})(a, b) for a {tuple(a.shape)}, b {tuple(b.shape)}"
        out = merge(a, b)
        assert activation.shapes == [(4, 3, 4)], (
            f"{what} called the activation on tensors of shapes {activation.shapes}; expected one call, on the "
            "sum of the two projections, (4, 3, 4): the activation of Linear(cat(a, b)) is applied to the sum, "
            "not to each projection"
        )
        assert_close(out, tiled_merge(merge, a, b), what=what)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_merge_keeps_the_inputs_dtype(lesson, dtype):
    merge = make_merge(lesson, 3, 4, 2, activation=torch.tanh).to(dtype)
    a, b = rand(2, 5, 3, seed=1, dtype=dtype), rand(2, 1, 4, seed=2, dtype=dtype)
    out = merge(a, b)
    what = f"Merge(3, 4, 2, activation=torch.tanh).to({dtype}) on {dtype} inputs a (2, 5, 3), b (2, 1, 4)"
    assert isinstance(out, torch.Tensor) and out.dtype == dtype, (
        f"{what} returned {getattr(out, 'dtype', type(out).__name__)}; expected {dtype}, the inputs' dtype"
    )
    # The truth in float64, from the very same (rounded) weights and inputs.
    expected = tiled_merge(make_merge(lesson, 3, 4, 2, activation=torch.tanh).to(dtype).double(), a.double(), b.double())
    eps = torch.finfo(dtype).eps
    assert_close(out, expected.to(dtype), rtol=8 * eps, atol=8 * eps, what=what)


def test_merge_builds_nothing_on_the_default_device(lesson):
    merge = make_merge(lesson, 3, 4, 2, activation=torch.relu)
    for lead_a, lead_b in (((2, 5), (2, 1)), ((1, 5), (2, 1))):
        a, b = rand(*lead_a, 3, seed=1), rand(*lead_b, 4, seed=2)
        what = f"Merge(3, 4, 2, activation=torch.relu)(a, b) for CPU a {tuple(a.shape)}, b {tuple(b.shape)}"
        out = on_another_default_device(lambda: merge(a, b), what=what, fix=BUILD_FROM_INPUTS)
        assert_close(out, tiled_merge(merge, a, b), what=f"{what}, with the default device set to 'meta'")


@pytest.mark.points(2)
@pytest.mark.parametrize("stretched", ["b", "a"])
def test_merge_never_materialises_the_tiled_tensor(lesson, stretched):
    # Memory, not time: time moves with the load. On these shapes the tiled version allocates
    # several times what a broadcast one does, its biggest allocation a tiled copy of `big`
    # (the figures: docs/MEASUREMENTS.md, "Memory, not time, for broadcasting").
    merge = make_merge(lesson, 256, 256, 64)
    big, small = rand(64, 128, 256, seed=1), rand(64, 1, 256, seed=2)
    a, b = (big, small) if stretched == "b" else (small, big)
    tiled_bytes = big.numel() * big.element_size()
    found = allocations(lambda: merge(a, b))
    reference = allocations(lambda: tiled_merge(merge, a, b))
    total, reference_total = sum(x.nbytes for x in found), sum(x.nbytes for x in reference)
    assert found[0].nbytes < tiled_bytes and total < reference_total / 2, (
        f"Merge allocated {total / MiB:.1f} MiB for a {tuple(a.shape)}, b {tuple(b.shape)} "
        f"({format_allocations(found)}); the tiled version allocates {reference_total / MiB:.1f} MiB, "
        f"and a tiled copy of {'b' if stretched == 'b' else 'a'} is {tiled_bytes / MiB:.1f} MiB. "
        "Don't repeat, expand-and-copy or concatenate the inputs: project each one with its own "
        "Linear layer and let `+` broadcast the projections."
    )


# --- broadcast_shape -------------------------------------------------------------------------


def shape_id(shape) -> str:
    """(3, 1) -> "3x1", () -> "scalar": test ids that can be typed on a command line."""
    return "x".join(map(str, shape)) or "scalar"


@pytest.mark.public
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [((3, 2), (3, 1), (3, 2)), ((2, 1), (2,), (2, 2)), ((5, 3, 5), (5, 1, 5), (5, 3, 5)),
     ((5, 1, 6), (3, 1), (5, 3, 6)), ((), (4,), (4,)), ((0,), (1,), (0,)), ((2, 0), (2, 1), (2, 0)),
     ((), (), ()), ((3, 1), (), (3, 1)), ((1, 0), (3, 1), (3, 0)), ((1,), (1, 1), (1, 1)), ((0, 1), (0,), (0, 0))],
    ids=lambda shape: shape_id(shape),
)
def test_broadcast_shape_examples(lesson, shape_a, shape_b, expected):
    got = lesson.broadcast_shape(shape_a, shape_b)
    assert got == expected and isinstance(got, tuple), (
        f"broadcast_shape({shape_a}, {shape_b}) returned {got!r}; expected the tuple {expected}"
    )
    kinds = sorted({type(size).__name__ for size in got if type(size) is not int})
    assert not kinds, (
        f"broadcast_shape({shape_a}, {shape_b}) returned {got!r}, with sizes of type {', '.join(kinds)}; "
        "the docstring promises a tuple of Python ints (compare and pick the sizes themselves)"
    )


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
    got = lesson.broadcast_shape(shape_a, shape_b)
    assert got == expected, f"broadcast_shape({shape_a}, {shape_b}) returned {got!r}; torch says {expected}"


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
        got = lesson.broadcast_shape(shape_a, shape_b)
        assert got == expected, f"broadcast_shape({shape_a}, {shape_b}) returned {got!r}; torch says {expected}"


def test_broadcast_shape_accepts_torch_size_and_lists(lesson):
    got = lesson.broadcast_shape(torch.Size([4, 1, 3]), [2, 1])
    assert got == (4, 2, 3) and type(got) in (tuple, torch.Size), (
        f"broadcast_shape(torch.Size([4, 1, 3]), [2, 1]) returned {got!r}; expected (4, 2, 3) as a tuple"
    )


def test_broadcast_shape_works_out_the_rules_itself(lesson, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(
            "broadcast_shape called a library broadcasting helper; the exercise is to apply the "
            "rules yourself: compare the sizes from the right, one pair at a time."
        )

    import numpy as np

    for owner, name in ((torch, "broadcast_shapes"), (torch, "broadcast_tensors"), (np, "broadcast_shapes"),
                        (np, "broadcast"), (np, "broadcast_to"), (torch, "broadcast_to")):
        monkeypatch.setattr(owner, name, refuse)
    ops = count_ops(lambda: lesson.broadcast_shape((5, 1, 6), (3, 1)))
    assert not ops, (
        f"broadcast_shape ran tensor operations ({', '.join(sorted(ops))}); work with the shape tuples "
        "alone: building tensors to read the shape of their sum is not applying the rules"
    )
    # Any other spelling (torch.functional.broadcast_shapes, np.lib.stride_tricks, NumPy arrays
    # added together, ...) is a call into torch or NumPy: none is needed to compare sizes.
    for shape_a, shape_b in (((5, 1, 6), (3, 1)), (torch.Size([4, 1]), [2, 1, 3]), ((2,), (3,))):
        called = library_calls(lambda: lesson.broadcast_shape(shape_a, shape_b))
        if called:
            pytest.fail(
                f"broadcast_shape({shape_a}, {shape_b}) called {', '.join(dict.fromkeys(called[:3]))}; the exercise is "
                "to apply the rules yourself, on the shapes as tuples of ints: no tensors, no NumPy arrays, no "
                "library broadcasting helpers under any name", pytrace=False,
            )


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
        pytest.fail(f"{what} raised {type(exc).__name__}({str(exc)[:200]!r}); expected {expected}. These shapes "
                    "broadcast, but no array of them fits in memory: work with the sizes, not with tensors or "
                    "arrays of these shapes (and compare sizes with == and !=, never `is`: two equal ints "
                    "above 256 are often different objects)", pytrace=False)
    assert got == expected, f"{what} returned {got!r}; expected {expected}"


# --- pairwise_sq_dist ------------------------------------------------------------------------


@pytest.mark.public
def test_pairwise_sq_dist_small_example(lesson):
    x = torch.tensor([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]])
    y = torch.tensor([[0.0, 0.0], [3.0, 0.0]])
    expected = torch.tensor([[0.0, 9.0], [2.0, 5.0], [25.0, 16.0]])
    assert_close(lesson.pairwise_sq_dist(x, y), expected, what="pairwise_sq_dist(x (3, 2), y (2, 2))")


@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 5), st.sampled_from([1.0, 10.0, 1e3]),
       st.sampled_from(ALL_LAYOUTS), st.sampled_from(ALL_LAYOUTS), st.integers(0, 2**16))
@example(3, 4, 2, 1.0, "contiguous", "transposed", 0)  # y is the non-contiguous one
@example(4, 3, 3, 10.0, "strided", "expanded", 1)
@pytest.mark.points(2)
def test_pairwise_sq_dist_matches_the_loop_definition(lesson, n, m, d, scale, layout_x, layout_y, seed):
    x = with_layout(rand(n, d, seed=seed) * scale, layout_x)
    y = with_layout(rand(m, d, seed=seed + 1) * scale, layout_y)
    truth = loop_sq_dist(x, y)
    out = lesson.pairwise_sq_dist(x, y)
    # float32 rounding of squares of size ~scale**2 * d: relative error of a few eps of that.
    atol = 1e-5 * scale**2 * max(d, 1)
    assert_close(out, truth.float(), rtol=1e-4, atol=atol,
                 what=f"pairwise_sq_dist(x, y) for x of {describe(x)}, y of {describe(y)} ({layout_x}, {layout_y})")


def test_pairwise_sq_dist_of_edge_shapes(lesson):
    for n, m, d in ((0, 3, 2), (3, 0, 2), (0, 0, 2), (2, 3, 0), (1, 1, 1), (1, 4, 3), (4, 1, 3)):
        x, y = rand(n, d, seed=1) + 5, rand(m, d, seed=2) + 5
        what = f"pairwise_sq_dist(x, y) for x of shape {(n, d)}, y of shape {(m, d)}"
        assert_close(lesson.pairwise_sq_dist(x, y), loop_sq_dist(x, y).float(), rtol=1e-4, atol=1e-4,
                     what=f"{what} (no points give an empty (N, M) table; no coordinates give zeros)")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_pairwise_sq_dist_keeps_half_precision(lesson, dtype):
    x, y = rand(6, 4, seed=1, dtype=dtype), rand(5, 4, seed=2, dtype=dtype) + 1
    out = lesson.pairwise_sq_dist(x, y)
    what = f"pairwise_sq_dist(x, y) for {dtype} x (6, 4), y (5, 4)"
    assert isinstance(out, torch.Tensor) and out.dtype == dtype, (
        f"{what} returned {getattr(out, 'dtype', type(out).__name__)}; the docstring promises x's dtype, {dtype} "
        "(compute in it, or cast the result back)"
    )
    truth = loop_sq_dist(x, y)  # float64, from the very same rounded inputs
    eps = torch.finfo(dtype).eps
    assert_close(out, truth.to(dtype), rtol=8 * eps, atol=16 * eps * truth.max().item(), what=what)
    assert out.min().item() >= 0, f"{what} has negative entries (down to {out.min().item():.3g}): clamp at 0"


def test_pairwise_sq_dist_builds_nothing_on_the_default_device(lesson):
    for n, m in ((3, 4), (0, 2), (0, 0)):
        x, y = rand(n, 3, seed=1) + 10, rand(m, 3, seed=2) + 10
        what = f"pairwise_sq_dist(x, y) for CPU x of shape {(n, 3)}, y of shape {(m, 3)}"
        out = on_another_default_device(lambda: lesson.pairwise_sq_dist(x, y), what=what, fix=BUILD_FROM_INPUTS)
        assert_close(out, loop_sq_dist(x, y).float(), rtol=1e-4, atol=1e-3, what=f"{what}, with the default device set to 'meta'")


def test_pairwise_sq_dist_float64_and_gradients(lesson):
    x = rand(4, 3, seed=1, dtype=torch.float64).requires_grad_()
    y = rand(5, 3, seed=2, dtype=torch.float64).requires_grad_()
    out = lesson.pairwise_sq_dist(x, y)
    assert_close(out.detach(), loop_sq_dist(x.detach(), y.detach()), what="pairwise_sq_dist on float64 inputs")
    grad_of(out, x, "pairwise_sq_dist(x, y) for float64 x")  # the clear message first
    assert torch.autograd.gradcheck(lesson.pairwise_sq_dist, (x, y)), "pairwise_sq_dist: analytic and numerical gradients differ"


@pytest.mark.points(2)
def test_pairwise_sq_dist_is_never_negative(lesson):
    # |x|^2 - 2 x.y + |y|^2 for x == y rounds to tiny values of either sign.
    x = rand(64, 16, seed=3) * 10
    out = lesson.pairwise_sq_dist(x, x)
    worst = out.min().item()
    assert worst >= 0, (
        f"pairwise_sq_dist(x, x) for x of {describe(x)} has negative entries (down to {worst:.3g}); a "
        "squared distance is never negative. Rounding in |x|^2 - 2 x.y + |y|^2 leaves tiny negatives "
        "where the answer is 0: clamp them at 0 (and sqrt of a negative would be nan)."
    )
    assert_close(out.diagonal(), torch.zeros(64), atol=1e-2, rtol=0, what="pairwise_sq_dist(x, x).diagonal(), each point against itself")


@pytest.mark.points(2)
def test_pairwise_sq_dist_far_from_the_origin(lesson):
    # GPS-like coordinates: a small cloud centred at 1e4. |x|^2 is ~1.6e9 here, and float32
    # holds it to about +-100, so the expanded formula cancels away every digit of a distance
    # of ~30 unless the points are moved near the origin first.
    x, y = rand(100, 16, seed=4) + 1e4, rand(120, 16, seed=5) + 1e4
    for x_part, y_part in ((x, y), (x[:1], y[:6]), (x[:6], y[:1])):  # one point against a few, too
        what = f"pairwise_sq_dist(x, y) for points near 1e4 (shapes {tuple(x_part.shape)}, {tuple(y_part.shape)})"
        assert_close(lesson.pairwise_sq_dist(x_part, y_part), loop_sq_dist(x_part, y_part).float(), rtol=1e-3, atol=1e-2,
                     what=f"{what} (move both sets near the origin first: subtract their common mean)")
    same = lesson.pairwise_sq_dist(x, x).diagonal()
    assert_close(same, torch.zeros(100), atol=1e-2, rtol=0, what="pairwise_sq_dist(x, x).diagonal() for points near 1e4 (each point against itself)")


def test_pairwise_sq_dist_does_not_modify_its_inputs(lesson):
    x, y = rand(5, 3, seed=1) + 100, rand(4, 3, seed=2) + 100
    x0, y0 = x.clone(), y.clone()
    lesson.pairwise_sq_dist(x, y)
    assert_close(x, x0, what="x after pairwise_sq_dist(x, y) (the caller's tensor must not change)")
    assert_close(y, y0, what="y after pairwise_sq_dist(x, y) (the caller's tensor must not change)")


def test_pairwise_sq_dist_runs_no_python_loop(lesson):
    # Deterministic, unlike a timing: vectorised code runs the same ops for 8 points as for 64.
    assert_no_loop(
        lambda n: partial(lesson.pairwise_sq_dist, rand(n, 3, seed=1), rand(n, 3, seed=2)), 8, 64,
        what="pairwise_sq_dist", unit="points",
        hint="Broadcast instead: x[:, None, :] against y[None, :, :] compares every pair in one op.",
    )
    assert_no_loop(
        lambda d: partial(lesson.pairwise_sq_dist, rand(8, d, seed=1), rand(6, d, seed=2)), 2, 16,
        what="pairwise_sq_dist", unit="coordinates",
        hint="Sum the squared differences over the last dim in one reduction (or use a matrix product).",
    )


@pytest.mark.speed
def test_pairwise_sq_dist_is_faster_than_a_row_loop(lesson):
    # Many rows, few columns: the shape where a loop's per-op overhead shows. Measured: the
    # broadcast difference 29-37x and the centred expansion 70x faster than the loop here.
    x, y = rand(1024, 4, seed=1), rand(32, 4, seed=2)
    assert_speed(
        lambda: row_loop_sq_dist(x, y), lambda: lesson.pairwise_sq_dist(x, y),
        at_least=5, what="pairwise_sq_dist on (1024, 4) x (32, 4)", baseline_name="a loop over the rows of x",
        hint="Compute the whole [N, M] table with broadcasting or a matrix product, not row by row.",
    )


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    merge = make_merge(lesson, 3, 4, 2).cuda()
    a, b = rand(2, 5, 3).cuda(), rand(2, 1, 4).cuda()
    assert_close(merge(a, b), tiled_merge(merge, a, b), what="Merge on CUDA")
    x, y = rand(6, 3).cuda() + 1e3, rand(7, 3).cuda() + 1e3
    assert_close(lesson.pairwise_sq_dist(x, y), loop_sq_dist(x.cpu(), y.cpu()).float().cuda(),
                 rtol=1e-3, atol=1e-2, what="pairwise_sq_dist on CUDA")
