"""Lesson 01, PyTorch basics: checks basics.py against calculus, finite differences,
torch.optim.Adam run step by step, the true coefficients of a curve, and NumPy's view of the
same memory. `lesson` is the module under test (the learner's, the reference, or a mutant); under
`kata grade` what lends it tensors or looks at what it leaves runs beside it, in scenarios
(grader.testing.scenario), and every check of what they report is made here. The contract
table is CONTRACT, at the end."""

import contextlib
import inspect
import warnings

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import (assert_close, counted, describe, dtype_name, expect_raises, fail, numbers, reported,
                            returned, tolerance)
from grader.testing.errors import learners_line
from grader.testing.pitfalls import Pitfall, pitfall_of
from grader.testing.scenario import beside
from grader.testing.strategies import ALL_LAYOUTS, on_meta, shapes, tensors, with_layout


# --- derivative --------------------------------------------------------------------------------


@pytest.mark.public
def test_derivative_of_the_first_example(lesson):
    d = derivative_seen(lesson, "-x * x", torch.tensor(1.0), requires_grad=True)["d"]
    assert_close(d, torch.tensor(-2.0), what="derivative(lambda x: -x * x, tensor(1.)) (d/dx of -x*x is -2x)")


@given(
    tensors(shape=shapes(min_dims=1, max_dims=3, min_side=0), dtypes=(torch.float32, torch.float64),
            extremes=False, scales=(1.0, 3.0), layouts=ALL_LAYOUTS),
    st.deferred(lambda: st.sampled_from(sorted(CALCULUS))),
)
@example(torch.tensor([0.0, 1.0, -2.5]), "x.sin().sum()")
@example(torch.tensor(1.0), "(x ** 3).sum()")
@example(torch.tensor([-0.5]), "(x ** 3).sum()")
@example(torch.tensor([[0.5, 2.0, -1.0]]).expand(2, 3), "(x ** 3).sum()")
@pytest.mark.points(2)
def test_derivative_matches_calculus(lesson, x, name):
    expected = CALCULUS[name](x)
    what = f"derivative(lambda x: {name}, x) for x of {describe(x)}"
    seen = call(what, derivative_seen, lesson, name, x)
    d = seen["d"]
    assert_close(d, expected, what=what, explain=lambda: kept_dtype(d, x) or finite_differences(seen))


def test_derivative_matches_finite_differences_in_float64(lesson):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=g, dtype=torch.float64)
    weight = torch.randn(4, 5, generator=g, dtype=torch.float64)

    # Central differences, as torch.autograd.gradcheck computes them: error ~ h^2 in float64.
    h, flat = 1e-6, x.flatten()
    numerical = torch.stack([(network((flat + h * e).view_as(x), weight) - network((flat - h * e).view_as(x), weight))
                             / (2 * h) for e in torch.eye(flat.numel(), dtype=x.dtype)]).view_as(x)
    what = "derivative(fn, x) for x of shape (3, 4), float64 and fn a small network with float64 weights"
    seen = call(what, derivative_seen, lesson, "network(x, w)", x, w=weight, advice=when(
        RuntimeError, "same dtype", "float != double",
        then="fn multiplies its argument by float64 weights, and the argument it was handed is float32 where x is "
        "float64: hand fn a copy in x's dtype (x.detach().clone()), not a converted one (.float())."))
    d = seen["d"]
    assert_close(d, numerical, rtol=1e-6, atol=1e-8, what=f"{what}, against central differences",
                 explain=lambda: kept_dtype(d, x) or finite_differences(seen))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=dtype_name)
def test_derivative_keeps_dtype_and_shape_and_does_not_require_grad(lesson, dtype):
    x = torch.linspace(-2, 2, 12, dtype=dtype).reshape(3, 4)
    expected = x.float().cos().to(dtype)
    what = f"derivative(lambda x: x.sin().sum(), x) for x of {describe(x)} that requires grad"
    seen = call(what, derivative_seen, lesson, "x.sin().sum()", x, requires_grad=True, advice=lambda exc: (
        f"{dtype_name(dtype)} is floating point too: test x.is_floating_point(), not a list of dtypes."
        if isinstance(exc, TypeError) and dtype_name(dtype) in str(exc) else ""))
    d = seen["d"]
    if not isinstance(d, torch.Tensor):
        fail(f"{what} returned {type(d).__name__}, not a tensor")
    if seen["d_requires_grad"]:
        fail(f"{what} returned a tensor that requires grad: a gradient is a result, not part of a graph "
             "(do not pass create_graph=True, and do not return a tensor that is still attached).")
    assert_close(d, expected, what=what, explain=lambda: kept_dtype(d, x) or finite_differences(seen),
                 **tolerance(dtype))


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["plain", "requires grad", "requires grad, .grad already set"])
def test_derivative_leaves_the_callers_tensor_alone(lesson, kind):
    requires_grad = kind != "plain"
    old_grad = torch.tensor([7.0, 8.0, 9.0]) if kind.endswith("set") else None
    what = f"derivative(lambda x: (x ** 3).sum(), x) for x = tensor([0.5, -1., 2.]) ({kind})"
    seen = call(what, derivative_seen, lesson, CUBE, UNCHANGED.clone(), requires_grad=requires_grad, grad=old_grad)
    flag = seen["x_requires_grad"]
    if flag != requires_grad:
        fail(f"{what} changed x.requires_grad to {flag}: that is the caller's flag. Work on a private "
             "tensor (x.detach()) and switch gradients on there.")
    grad = seen["leaf_grad"]
    if old_grad is None and grad is not None:
        fail(f"{what} left x.grad set to {grad}: .backward() accumulates into .grad; "
             "torch.autograd.grad returns the gradient without storing it.")
    if old_grad is not None and not (seen["grad_kept"] and torch.equal(grad, torch.tensor([7.0, 8.0, 9.0]))):
        fail(f"{what} changed the caller's x.grad from [7., 8., 9.] to {grad}: leave it as it was (no "
             "x.grad = None, no backward() into it); torch.autograd.grad on a private leaf touches no .grad.")
    assert_close(seen["x"], UNCHANGED, what=f"x after {what} (the caller's values must not change)")
    assert_close(seen["d"], CUBE_GRAD(UNCHANGED), what=what, explain=lambda: finite_differences(seen))


@pytest.mark.parametrize("closed_over", ["a leaf that requires grad", "a non-leaf computed from one"])
def test_derivative_fills_no_grad_anywhere(lesson, closed_over):
    what = f"derivative(lambda x: (x * w).pow(2).sum(), x) with w {closed_over}, used by fn"
    seen = call(what, derivative_seen, lesson, "(x * w).pow(2).sum()", UNCHANGED.clone(), w=W.clone(), w_is=closed_over)
    assert_close(seen["d"], 2 * UNCHANGED * W**2, what=f"{what} (d/dx of (x w)^2 is 2 x w^2)",
                 explain=lambda: finite_differences(seen))
    for name, grad in (("w", seen["w_grad"]), ("the tensor fn uses", seen["used_grad"])):
        if grad is not None:
            fail(f"{what} filled {name}.grad with {grad}: .backward() adds into the .grad of every tensor in "
                 "the graph that requires grad, the caller's included. torch.autograd.grad(out, leaf) returns "
                 "the gradient for the leaf only and stores nothing anywhere.")


def test_derivative_gives_the_same_answer_every_time(lesson):
    what = "derivative(lambda x: (x ** 3).sum(), x)"
    first, kept, second, calls = call(what, derivative_twice, lesson, CUBE, UNCHANGED.clone())
    expected = CUBE_GRAD(UNCHANGED)
    if isinstance(second, torch.Tensor) and second.shape == expected.shape and torch.allclose(second, 2 * expected):
        fail(f"the second call of {what} returned {second.tolist()}, twice the gradient {expected.tolist()}: "
             "this is backward() accumulating into a .grad that outlives the call. torch.autograd.grad "
             "returns the gradient and stores it nowhere.")
    assert_close(second, expected, what=f"the second call of {what}", explain=lambda: finite_differences(calls))
    if isinstance(first, torch.Tensor) and first.shape == kept.shape and not torch.equal(first, kept):
        fail(f"the first result of {what} changed from {kept.tolist()} to {first.tolist()} when derivative was "
             "called again: it is a .grad that the second backward() added into. Return a gradient of its "
             "own (torch.autograd.grad), not a .grad.")


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["a plain tensor", "a leaf that requires grad", "computed inside a graph"])
def test_derivative_of_an_in_place_fn(lesson, kind):
    what = f"derivative(lambda t: t.mul_(3).pow(2).sum(), x) with x {kind}"
    seen = call(  # "computed inside a graph": x = base * 1, a non-leaf computed from a leaf `base`
        what, derivative_seen, lesson, "t.mul_(3).pow(2).sum()", UNCHANGED.clone(),
        requires_grad=kind != "a plain tensor", times=1 if kind == "computed inside a graph" else None, advice=when(
            RuntimeError, "leaf Variable", "in-place",
            then="fn writes into its argument, and you handed it a leaf that requires grad (a tensor cloned before "
            "requires_grad_() is a leaf too). This is the in-place pitfall: hand fn leaf.clone(), a copy made after "
            "requires_grad_(): memory of your own that fn may write into, whose gradient autograd carries back to "
            "your leaf."))
    after = seen["x"]
    if torch.equal(after, 3 * UNCHANGED):
        fail(f"x after {what} is {after.tolist()}, 3 times the caller's values: fn wrote into the caller's "
             "memory. This is the in-place pitfall: hand fn a .clone(), memory of your own, never x (nor a "
             "detached x, which shares x's memory).")
    assert_close(after, UNCHANGED, what=f"x after {what} (the caller's values must not change)")
    assert_close(seen["d"], torch.tensor([9.0, -18.0, 36.0]), what=f"{what} (d/dx of (3x)^2 is 18x)",
                 explain=lambda: finite_differences(seen))
    if seen["leaf_grad"] is not None:
        fail(f"{what} filled .grad of the tensor x was computed from: {seen['leaf_grad']}")


def test_derivative_does_not_reach_into_the_callers_graph(lesson):
    what = "derivative(lambda x: (x ** 3).sum(), x) for x = a * 2, with a requiring grad"
    seen = call(what, derivative_seen, lesson, CUBE, UNCHANGED.clone(), requires_grad=True, times=2)  # a, then x
    if seen["leaf_grad"] is not None:
        fail(f"{what} filled a.grad with {seen['leaf_grad']}: the gradient flowed back through the caller's graph. "
             "Differentiate with respect to a detached copy of x.")
    assert_close(seen["d"], CUBE_GRAD(2 * UNCHANGED), what=what, explain=lambda: finite_differences(seen))


def test_derivative_inside_no_grad(lesson):
    what = "derivative(lambda x: (x ** 3).sum(), x) called inside torch.no_grad()"
    seen = call(what, derivative_seen, lesson, CUBE, UNCHANGED.clone(), no_grad=True, advice=when(
        RuntimeError, "does not require grad",
        then="Under torch.no_grad() nothing is recorded, so fn's result has no graph: this is the caller's "
        "context pitfall. Switch recording back on around the call of fn with torch.enable_grad()."))
    d = seen["d"]
    expected = CUBE_GRAD(UNCHANGED)
    if isinstance(d, torch.Tensor) and d.shape == expected.shape and not d.any():
        fail(f"{what} returned zeros, but d/dx of x^3 is 3x^2 = {expected.tolist()}. Under torch.no_grad() nothing "
             "is recorded, so fn's result looked as if it did not depend on x: this is the caller's context "
             "pitfall. Switch recording back on around the call of fn with torch.enable_grad().")
    assert_close(d, expected, what=what, explain=lambda: finite_differences(seen))


@pytest.mark.parametrize("kind", ["a constant", "a tensor fn closes over, not its argument"])
def test_derivative_of_an_fn_that_ignores_x(lesson, kind):
    fn = "torch.tensor(2.0)" if kind == "a constant" else "(w * w).sum()"
    x = UNCHANGED.to(torch.float64)
    what = f"derivative(fn, x) for x of {describe(x)} and an fn that returns {kind}"
    seen = call(what, derivative_seen, lesson, fn, x, w=W.clone(), w_is="a leaf that requires grad",
                advice=unused_advice)
    d = seen["d"]
    if d is None:
        fail(f"{what} returned None: allow_unused=True makes torch.autograd.grad answer None for an unused input, "
             "but the derivative of a function that ignores x is zeros of x's shape (materialize_grads=True).")
    if seen["d_requires_grad"]:
        fail(f"{what} returned a tensor that requires grad")
    assert_close(d, torch.zeros_like(x), what=f"{what} (the derivative of a function that ignores x is zero)")
    if seen["w_grad"] is not None:
        fail(f"{what} filled w.grad with {seen['w_grad']}: derivative stores nothing anywhere.")


@pytest.mark.parametrize(("fn_text", "x_shape", "shape"), [
    pytest.param(fn_text, x_shape, shape, id=f"{fn_text}, x of shape {x_shape}") for fn_text, x_shape, shape in (
        ("x * 2", (2, 3), (2, 3)),
        ("x * 2", (4, 1), (4, 1)),
        ("x.sum(dim=0)", (2, 3), (3,)),
        ("x[:0].sum(dim=1)", (2, 3), (0,)),
    )
])
def test_derivative_of_a_non_scalar_fn_is_a_value_error(lesson, fn_text, x_shape, shape):
    what = f"derivative(lambda x: {fn_text}, x) for x of shape {x_shape}, fn returning shape {shape}"
    message = str(expect_raises(lambda: derivative_seen(lesson, fn_text, torch.ones(x_shape))["d"], ValueError,
                                what=what, why="fn must return a scalar (one element); say which shape it returned."))
    forms = {str(shape), str(list(shape)), ", ".join(map(str, shape)) if len(shape) > 1 else str(shape)}
    if not any(form in message for form in forms):
        fail(f"{what}: the ValueError should name the shape fn returned, {shape}; it says: {message}")


@pytest.mark.parametrize(("shape", "fn_text", "expected"), [
    pytest.param(shape, fn_text, expected, id=f"{fn_text}, x of shape {shape}") for shape, fn_text, expected in (
        ((), "x.reshape(1) * 3", lambda x: torch.full_like(x, 3.0)),
        ((1,), "x * 3", lambda x: torch.full_like(x, 3.0)),
        ((2, 3), "(x ** 2).sum().reshape(1, 1)", lambda x: 2 * x),
    )
])
def test_derivative_of_a_one_element_fn(lesson, shape, fn_text, expected):
    x = torch.linspace(-1, 2, max(1, int(np.prod(shape)))).reshape(shape)
    what = f"derivative(lambda x: {fn_text}, x) for x of {describe(x)}"
    seen = call(what, derivative_seen, lesson, fn_text, x.clone(), advice=when(
        ValueError, then="fn returned one element, a scalar in all but shape, which the docstring accepts: "
        "count the elements (numel() == 1), not the dims (dim() == 0)."))
    assert_close(seen["d"], expected(x), what=what, explain=lambda: finite_differences(seen))


def test_derivative_on_the_meta_device(lesson):
    x = on_meta(torch.empty(2, 3, dtype=torch.float64))
    what = "derivative(lambda x: x.sin().sum(), x) for x of shape (2, 3), float64, on the meta device"
    seen = call(what, derivative_seen, lesson, "x.sin().sum()", x, advice=on_device_advice)
    d = seen["d"]
    if not (isinstance(d, torch.Tensor) and (d.device.type, d.shape, d.dtype) == ("meta", x.shape, x.dtype)):
        got = f"a tensor of {describe(d)}, on the {d.device.type} device" if isinstance(d, torch.Tensor) else returned(d)
        fail(f"{what} returned {got}; expected a tensor of shape (2, 3), float64, on the meta device (x's)")
    if seen["d_requires_grad"]:
        fail(f"{what} returned a tensor that requires grad")


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.complex64], ids=dtype_name)
def test_derivative_of_a_non_floating_x_is_a_type_error(lesson, dtype):
    x = torch.arange(3).to(dtype)
    what = f"derivative(lambda x: x.sum(), x) for x of {describe(x)}"
    message = str(expect_raises(lambda: derivative_seen(lesson, "x.sum()", x)["d"], TypeError, what=what,
                                why="gradients need floating point; check x's dtype before anything else."))
    if "floating" not in message.lower():
        fail(f"{what}: the TypeError should say that gradients need floating point; it says: {message}")


# --- to_numpy and from_numpy -----------------------------------------------------------------


@pytest.mark.public
def test_to_numpy_shares_memory(lesson):
    t = torch.arange(6.0).reshape(2, 3)
    check_shared(to_numpy_seen(lesson, t), "to_numpy(torch.arange(6.).reshape(2, 3))", "array")


@pytest.mark.public
def test_from_numpy_shares_memory(lesson):
    a = np.arange(6.0).reshape(2, 3)
    check_shared(from_numpy_seen(lesson, a), "from_numpy(np.arange(6.).reshape(2, 3))", "tensor")


@pytest.mark.points(2)
def test_to_numpy_of_a_tensor_that_requires_grad(lesson):
    t = torch.linspace(0, 1, 5)
    grad = torch.full((5,), 3.0)
    what = "to_numpy(t) for t = torch.linspace(0, 1, 5, requires_grad=True) with t.grad filled with 3.0"
    seen = call(what, to_numpy_seen, lesson, t, requires_grad=True, grad=grad, advice=NUMPY_REFUSES)
    check_shared(seen, what, "array")
    if not seen["requires_grad"]:
        fail(f"{what} switched off the caller's t.requires_grad to get past .numpy()'s refusal. "
             "t.detach() is a tensor over the same memory whose flag is its own: leave t's alone.")
    if not (seen["grad_kept"] and bool((seen["grad"] == 3.0).all())):
        fail(f"{what} changed t.grad to {seen['grad']}; t.detach() leaves it alone")


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.float16, torch.bool], ids=dtype_name)
def test_dtypes_are_kept_both_ways(lesson, dtype):
    t = torch.arange(6).reshape(2, 3).to(dtype)
    check_shared(to_numpy_seen(lesson, t), f"to_numpy(t) for t of {describe(t)}", "array")
    a = np.arange(6).reshape(2, 3).astype(torch.empty(0, dtype=dtype).numpy().dtype)
    check_shared(from_numpy_seen(lesson, a), f"from_numpy(a) for a of dtype {a.dtype}", "tensor")


@pytest.mark.parametrize("view", ["every other column", "transposed"])
def test_non_contiguous_views_stay_views(lesson, view):
    t = VIEWS[view](torch.arange(24.0).reshape(4, 6))
    shared = to_numpy_seen(lesson, t.contiguous())["same_address"]  # what the call does with a contiguous one
    check_shared(to_numpy_seen(lesson, t), f"to_numpy(t) for t of {describe(t)} ({view})", "array", shared)
    shared = from_numpy_seen(lesson, np.arange(24.0).reshape(4, 6))["same_address"]
    seen = from_numpy_seen(lesson, np.arange(24.0).reshape(4, 6), view)
    check_shared(seen, f"from_numpy(a) for a non-contiguous array ({view})", "tensor", shared)


@given(
    shapes(min_dims=0, max_dims=3, min_side=0), st.deferred(lambda: st.sampled_from(SHARED_DTYPES)), st.sampled_from(ALL_LAYOUTS),
    st.booleans(),
)
def test_to_numpy_and_back_share_one_buffer(lesson, shape, dtype, layout, requires_grad):
    t = with_layout((torch.arange(int(np.prod(shape))) % 5 - 2).reshape(shape).to(dtype), layout)
    requires_grad = requires_grad and (t.is_floating_point() or t.is_complex())
    what = f"to_numpy(t) for t of {describe(t)}, requires_grad={requires_grad}"
    check_shared(call(what, to_numpy_seen, lesson, t, requires_grad, advice=NUMPY_REFUSES), what, "array")
    # Then from_numpy of such an array, in a scenario of its own: reached once to_numpy's is known to share t's memory.
    back = to_numpy_seen(lesson, t, requires_grad, back=True)
    check_shared(back, f"from_numpy(to_numpy(t)) for t of {describe(t)}", "tensor")


def test_to_numpy_of_bfloat16_is_a_type_error(lesson):
    t = torch.ones(3, dtype=torch.bfloat16)
    expect_raises(lambda: lesson.to_numpy(t), TypeError, what="to_numpy(t) for t of dtype bfloat16",
                  why="NumPy has no bfloat16; a silent conversion would be a copy in another dtype.")


@pytest.mark.parametrize("view", ["contiguous", "every other column"])
def test_from_numpy_of_a_read_only_array(lesson, view):
    a = np.arange(12.0).reshape(3, 4)
    shape = VIEWS[view](a).shape
    what = f"from_numpy(a) for a read-only float64 array a of shape {shape}" + (
        "" if view == "contiguous" else f", {view} of a {a.shape} array")
    seen = call(what, from_numpy_seen, lesson, a, view, read_only=True)
    if not seen["is_tensor"]:
        fail(f"{what} returned {seen['types'][0]}; expected a torch.Tensor")
    if seen["dtype"] != torch.float64:
        fail(f"{what} returned a {dtype_name(seen['dtype'])} tensor; expected float64, a's dtype. This is a dtype "
             "conversion (.float(), .to(...), .astype(...)), which copies: share the memory as it is.")
    if seen["shape"] != shape:
        fail(f"{what} returned a tensor of shape {seen['shape']}; expected {shape}, a's shape.")
    if not seen["same_address"]:
        fail(f"{what} returned a copy: a read-only array is shared too (torch.from_numpy only warns). "
             "Copying it (np.array, .copy(), torch.tensor) to silence the warning breaks 'no copy'.")
    if seen["array_strides"] != seen["strides"]:
        fail(f"{what}: strides {seen['array_strides']} bytes in NumPy, {seen['strides']} in torch")


def test_from_numpy_of_negative_strides_is_a_value_error(lesson):
    expect_raises(lambda: from_numpy_seen(lesson, np.arange(5.0), "reversed")["returned"], ValueError,
                  what="from_numpy(np.arange(5.)[::-1])",
                  why="a tensor cannot have negative strides, so it cannot share this array's memory; "
                  "a silent copy would break 'a write through one is seen through the other'.")


# --- fit_polynomial ----------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_fit_recovers_a_noisy_parabola(lesson):
    x, y = noisy_parabola()
    what = "fit_polynomial(x, y, 2) for 100 samples of 5x^2 + 3 plus N(0, 1) noise, x in [-10, 10]"
    w = call(what, fit_seen, lesson, x, y, 2, seed=0)["w"]
    if not (isinstance(w, torch.Tensor) and w.shape == (3,)):
        fail(f"{what} returned {w!r}; expected a tensor of shape (3,)")
    target = torch.tensor([5.0, 0.0, 3.0])
    off = (w.detach() - target).abs()
    if not (off <= torch.tensor(CURVE_TOLERANCE)).all():
        mistake = curve_mistake(w, target, atol=1.0)
        if not mistake:  # replay the known wrong fits from the same start (1000 steps each: only on failure)
            start = call("fit_polynomial(x, y, 2, steps=0)", fit_seen, lesson, x, y, 2, 0, seed=0)["w"]
            mistake = fit_mistake(w.detach(), start, x, y, 2, 1000, 0.1, rtol=1e-3, atol=1e-3)
        fail(f"{what} returned {numbers(w)}; expected [5, 0, 3] within {numbers(CURVE_TOLERANCE)} (off by "
             f"{numbers(off)})." + (f"\n{mistake}" if mistake else ""))


def test_fit_other_degrees(lesson):
    for coefficients in OTHER_DEGREES:
        check_fits_a_curve(lesson, coefficients)


@pytest.mark.points(2)
@pytest.mark.parametrize("case", ["1 step", "30 steps", "30 steps at lr 0.3", "degree 0", "one sample",
                                  "non-contiguous x and y", "tiny gradients"])
def test_fit_follows_adam_step_by_step(lesson, case):
    x, y, degree, steps, lr, atol = adam_case(case)
    inputs = f"for x and y of {describe(y)}" + (", y within 1e-7 of 0 (gradients near Adam's eps)" if case == "tiny gradients" else "")
    what = f"fit_polynomial(x, y, {degree}, steps={steps}, lr={lr}) {inputs}"
    # strict: the text promises no warnings, one fails the call; the same seed: the same start, zeros or random.
    start = call(f"fit_polynomial(x, y, {degree}, steps=0) {inputs}", fit_seen, lesson, x, y, degree, 0, seed=0,
                 strict=True, advice=warned)["w"]
    w = call(what, fit_seen, lesson, x, y, degree, steps, lr, seed=0, strict=True, advice=warned)["w"]
    if isinstance(start, torch.Tensor) and start.dtype != x.dtype:  # Adam from it would mix dtypes
        fail(f"fit_polynomial(x, y, {degree}, steps=0) for float64 x and y returned "
             f"{dtype_name(start.dtype)} coefficients; expected x's dtype, float64. Keep x's dtype: "
             "make the coefficients with dtype=x.dtype, and do not convert x or y (.float()).")
    expected = adam_by_hand(start, x, y, degree, steps, lr)
    try:
        assert_close(w, expected, rtol=1e-6, atol=atol, what=(
            f"{what}, compared with torch.optim.Adam(lr={lr}) run for {counted(steps, 'step')} on the mean squared "
            "error over all samples, from the start that steps=0 returns after the same torch.manual_seed"))
        return
    except AssertionError as exc:
        failed = str(exc)
    mistake = fit_mistake(w, start, x, y, degree, steps, lr, rtol=1e-6, atol=atol) or random_steps(
        lesson, x, y, degree, steps, lr, start, w)
    fail(failed + (f"\n{mistake}" if mistake else ""))


def test_fit_defaults(lesson):
    parameters = inspect.signature(lesson.fit_polynomial).parameters
    defaults = {name: parameters[name].default for name in ("steps", "lr") if name in parameters}
    if defaults != {"steps": 1000, "lr": 0.1}:
        fail(f"fit_polynomial's defaults are {defaults}; the text promises steps=1000 and lr=0.1 (keep the signature).")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_name)
def test_fit_keeps_half_precision(lesson, dtype):
    x = torch.linspace(-1, 1, 9, dtype=dtype)
    what = f"fit_polynomial(x, y, 2, steps=3) for x and y of {describe(x)}"
    w = call(what, lesson.fit_polynomial, x, (x * x).to(dtype), 2, 3)
    if not (isinstance(w, torch.Tensor) and (w.shape, w.dtype) == ((3,), dtype)):
        got = f"a tensor of {describe(w)}" if isinstance(w, torch.Tensor) else repr(w)
        fail(f"{what} returned {got}; expected shape (3,), {dtype_name(dtype)} (x's dtype)")


def test_fit_on_the_meta_device(lesson):
    x, y = on_meta(torch.empty(10)), on_meta(torch.empty(10))
    what = "fit_polynomial(x, y, 2, steps=3) for x and y of shape (10,), float32, on the meta device"
    seen = call(what, fit_seen, lesson, x, y, 2, 3, advice=on_device_advice)
    w = seen["w"]
    if not (isinstance(w, torch.Tensor) and (w.device.type, w.shape, w.dtype) == ("meta", (3,), torch.float32)):
        got = f"a tensor of {describe(w)} on {w.device}" if isinstance(w, torch.Tensor) else repr(w)
        fail(f"{what} returned {got}; expected shape (3,), float32, on the meta device (x's)")
    if seen["w_requires_grad"]:
        fail(f"{what} returned a tensor that requires grad")


def test_fit_leaves_its_inputs_alone_and_returns_a_detached_tensor(lesson):
    x, y = noisy_parabola(n=30, dtype=torch.float64)
    x_before, y_before = x.clone(), y.clone()
    what = "fit_polynomial(x, y, 2, steps=20) for float64 x and y, both requiring grad"
    seen = call(what, fit_seen, lesson, x, y, 2, 20, inputs_require_grad=True, advice=reached_into_x)
    w = seen["w"]
    if not (isinstance(w, torch.Tensor) and w.shape == (3,)):
        fail(f"{what} returned {w!r}; expected a tensor of shape (3,)")
    if w.dtype != torch.float64:
        fail(f"{what} returned a {dtype_name(w.dtype)} tensor; expected float64, x's dtype")
    if seen["w_requires_grad"]:
        fail(f"{what} returned a tensor that requires grad: return the coefficients detached")
    for name in ("x", "y"):
        if seen[f"{name}_grad"] is not None:
            fail(f"{what} filled {name}.grad: the samples are data, not parameters (detach them)")
        if not seen[f"{name}_requires_grad"]:
            fail(f"{what} switched off {name}.requires_grad: that is the caller's flag")
    assert_close(seen["x"], x_before, what=f"x after {what}")
    assert_close(seen["y"], y_before, what=f"y after {what}")


def test_fit_emits_no_warnings(lesson):
    x, y = noisy_parabola(n=30)
    what = "fit_polynomial(x, y, 2, steps=5)"
    found = call(what, fit_seen, lesson, x, y, 2, 5)["warnings"]
    if found:
        mistake = warning_mistake(found[0])
        fail(f"{what} warned: {found[0]}" + (f"\n{mistake}" if mistake else ""))


def test_fit_is_reproducible(lesson):
    x, y = noisy_parabola(n=30)
    first = fit_seen(lesson, x, y, 2, steps=10, seed=1)["w"]
    second = fit_seen(lesson, x, y, 2, steps=10, seed=1)["w"]
    if not torch.equal(first, second):
        fail(f"fit_polynomial gave {first.tolist()}, then {second.tolist()} after the same torch.manual_seed")


# --- devices ---------------------------------------------------------------------------------


@pytest.mark.cuda
def test_on_cuda(lesson):
    x = torch.linspace(-2, 2, 7, device="cuda", requires_grad=True)
    d = lesson.derivative(lambda t: t.sin().sum(), x)
    assert_close(d, x.detach().cos(), what="derivative(lambda x: x.sin().sum(), x) for x on CUDA")
    xs, ys = (t.cuda() for t in noisy_parabola())
    w = lesson.fit_polynomial(xs, ys, 2)
    if w.device != xs.device:
        fail(f"fit_polynomial on CUDA returned a tensor on {w.device}")
    if not ((w.cpu() - torch.tensor([5.0, 0.0, 3.0])).abs() <= torch.tensor(CURVE_TOLERANCE)).all():
        fail(f"fit_polynomial(x, y, 2) on CUDA returned {numbers(w)}; expected [5, 0, 3] within {numbers(CURVE_TOLERANCE)}")
    a = lesson.to_numpy(x)  # a copy: NumPy cannot see GPU memory
    if not (isinstance(a, np.ndarray) and a.dtype == np.float32):
        fail(f"to_numpy(cuda tensor) returned {a!r}")
    np.testing.assert_array_equal(a, x.detach().cpu().numpy())
    if not (x.requires_grad and x.is_cuda):
        fail("to_numpy(t) changed the caller's CUDA tensor")


# --- the helpers, scenarios and tables the tests use ---------------------------------------------


def network(t: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """A little network: every output depends on every input."""
    return torch.logsumexp(torch.tanh(t @ weight), dim=1).pow(2).mean() + t.sin().prod()


# Each fn the tests differentiate, by its text: a function of its argument x and of w, the
# tensor it closes over (None where it closes over none). A scenario cannot be handed a
# function (only data crosses to the code's process): it is handed the text, and finds the
# function here.
FNS = {
    "-x * x": lambda x, w: -x * x,
    "x.sin().sum()": lambda x, w: x.sin().sum(),
    "x.exp().sum()": lambda x, w: x.exp().sum(),
    "(x ** 3).sum()": lambda x, w: (x**3).sum(),
    "x.sum()": lambda x, w: x.sum(),
    "t.mul_(3).pow(2).sum()": lambda x, w: x.mul_(3).pow(2).sum(),
    "(x * w).pow(2).sum()": lambda x, w: (x * w).pow(2).sum(),
    "(w * w).sum()": lambda x, w: (w * w).sum(),
    "torch.tensor(2.0)": lambda x, w: torch.tensor(2.0),
    "x * 2": lambda x, w: x * 2,
    "x.sum(dim=0)": lambda x, w: x.sum(dim=0),
    "x[:0].sum(dim=1)": lambda x, w: x[:0].sum(dim=1),
    "x.reshape(1) * 3": lambda x, w: x.reshape(1) * 3,
    "x * 3": lambda x, w: x * 3,
    "(x ** 2).sum().reshape(1, 1)": lambda x, w: (x**2).sum().reshape(1, 1),
    "network(x, w)": network,
}


# d/dx of each function, summed so that fn is scalar-valued.
CALCULUS = {"x.sin().sum()": torch.cos, "x.exp().sum()": torch.exp, "(x ** 3).sum()": lambda t: 3 * t**2}
CUBE = "(x ** 3).sum()"
CUBE_GRAD = CALCULUS[CUBE]
UNCHANGED = torch.tensor([0.5, -1.0, 2.0])  # what the caller-safety tests lend to derivative
W = torch.tensor([1.0, -2.0, 0.5])  # the tensor an fn closes over
SHARED_DTYPES = (torch.float32, torch.float64, torch.float16, torch.int32, torch.int64, torch.int8, torch.uint8,
                 torch.bool, torch.complex64)


def call(what: str, fn, *args, advice=None, **kwargs):
    """fn(*args, **kwargs), with an exception other than a TODO failing the test with the call
    named (grader.testing.reported).

    advice: a function of the exception that returns what the pitfall behind it is and its fix,
    or "" when the exception is not that pitfall's signature. An error from a .grad that was
    None is told as such (none_grad).
    """
    __tracebackhide__ = True
    with reported(what, advice=lambda exc: (advice(exc) if advice else "") or none_grad(exc)):
        return fn(*args, **kwargs)


def none_grad(exc: BaseException) -> str:
    """What to tell when the learner's line read a .grad that was None ("x.grad.detach()": an
    AttributeError on None, the line read from the learner's own source), else ""."""
    attribute = getattr(exc, "name", None)
    if not (isinstance(exc, AttributeError) and "'NoneType' object" in str(exc) and attribute):
        return ""
    if f".grad.{attribute}" not in learners_line(exc):
        return ""
    return ("That .grad is None: backward() fills .grad only on a leaf that requires grad and that fn's result "
            "uses (x computed inside a graph is not a leaf; an fn that ignores x never reaches it), and it adds "
            "into the caller's tensors on the way. Ask torch.autograd.grad(out, leaf) for the gradient of a "
            "private leaf (a detached copy of x): it returns it and stores nothing.")


def when(exc_type: type[BaseException], *pieces: str, then: str):
    """Advice for call(): `then` when the exception is an exc_type whose message holds every piece."""
    return lambda exc: then if isinstance(exc, exc_type) and all(p in str(exc) for p in pieces) else ""


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The NumPy dtype that .numpy() gives a tensor of `dtype`."""
    return torch.empty(0, dtype=dtype).numpy().dtype


# derivative is called beside the code (grader.testing.scenario): the caller's tensors, fn and
# the tensors fn closes over are made there, from the data and the names the test hands over,
# and what the call returned and left behind comes back as data, checked here. The caller's
# tensor cannot be lent from this process: a plain call in another process gets a copy, and
# the flag, .grad and values it leaves there would not be seen here.
def closed_over(w: torch.Tensor | None, kind: str | None) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """w as `kind` says ("a leaf that requires grad", "a non-leaf computed from one", None: data),
    and the tensor fn uses: w, or the non-leaf computed from it."""
    if kind is None:
        return w, w
    w.requires_grad_()
    if kind != "a non-leaf computed from one":
        return w, w
    used = w * 1
    used.retain_grad()  # a non-leaf that keeps its gradient: backward() would fill it
    return w, used


def fn_named(name: str, w: torch.Tensor | None = None, calls: list | None = None):
    """The fn of FNS called `name`, closing over w; each call noted in `calls` (whether autograd
    recorded it: grad mode on and an argument that requires grad)."""
    def fn(t):
        if calls is not None:
            calls.append(torch.is_grad_enabled() and isinstance(t, torch.Tensor) and t.requires_grad)
        return FNS[name](t, w)
    return fn


def differenced(calls: list) -> dict:
    """What the calls of fn that fn_named noted tell: how many, and whether autograd recorded any."""
    return {"fn_calls": len(calls), "fn_recorded": any(calls)}


def finite_differences(seen: dict) -> str:
    """What to tell when derivative called fn more than once and autograd recorded none of the
    calls: a numerical derivative (finite differences), else ""."""
    if seen.get("fn_calls", 0) > 1 and not seen.get("fn_recorded", True):
        return (f"derivative called fn {seen['fn_calls']} times, none of them recorded by autograd (no argument "
                "that requires grad): that is a numerical derivative (finite differences), right to a few digits "
                "only. Ask autograd: call fn once on a leaf that requires grad, then torch.autograd.grad(out, leaf).")
    return ""


@beside
def derivative_seen(lesson, fn: str, x: torch.Tensor, *, requires_grad=False, grad=None, times=None, w=None,
                    w_is=None, no_grad=False) -> dict:
    """derivative(FNS[fn], x), the caller's side made as the test says: x made to require grad,
    `grad` set as its .grad, and (`times`) x then computed as leaf * times, inside a graph; w
    closed over as `w_is` says (closed_over); the call made inside torch.no_grad().

    Returns what the call returned ("d", and whether it requires grad) and what it left: x's
    values and flag, the .grad of x's leaf (x, or what x was computed from) and whether that is
    still the very tensor set as `grad`, and the .grad of w and of the tensor fn used."""
    leaf = x.requires_grad_(requires_grad)
    if grad is not None:
        leaf.grad = grad
    x = leaf if times is None else leaf * times
    w, used = closed_over(w, w_is)
    calls = []
    with torch.no_grad() if no_grad else contextlib.nullcontext():
        d = lesson.derivative(fn_named(fn, used, calls), x)
    return {**differenced(calls), "d": d, "d_requires_grad": isinstance(d, torch.Tensor) and d.requires_grad, "x": x.detach(),
            "x_requires_grad": x.requires_grad, "leaf_grad": leaf.grad, "grad_kept": leaf.grad is grad,
            "w_grad": None if w is None else w.grad, "used_grad": None if used is None else used.grad}


@beside
def derivative_twice(lesson, fn: str, x: torch.Tensor) -> tuple:
    """derivative(FNS[fn], x) called twice: the first result as it is after the second call, a
    copy of it taken when it was returned, the second result, and what fn's calls in the second
    tell (differenced)."""
    first = lesson.derivative(fn_named(fn), x)
    kept = first.detach().clone() if isinstance(first, torch.Tensor) else first
    calls = []
    second = lesson.derivative(fn_named(fn, calls=calls), x)
    return first, kept, second, differenced(calls)


def kept_dtype(d, x: torch.Tensor) -> str:
    """What to tell when the derivative d came back in another floating dtype than x's, else ""."""
    if isinstance(d, torch.Tensor) and d.is_floating_point() and d.dtype != x.dtype:
        return ("The gradient must be in x's dtype, as torch.autograd.grad gives it for a leaf in x's dtype: copy x "
                "with x.detach().clone(), with no .float() or .to(...).")
    return ""


UNUSED = ("fn does not use its argument, so d fn/d x is zero everywhere (torch.func.grad says so too), but autograd "
          "refuses to differentiate with respect to a tensor the result does not depend on. Return zeros of x's "
          "shape, dtype and device: check whether fn's result requires grad at all, and ask torch.autograd.grad for "
          "zeros for an unused input (materialize_grads=True).")


def unused_advice(exc: BaseException) -> str:
    """Advice for call(): UNUSED, when autograd refused a tensor the result does not depend on."""
    refused = "does not require grad" in str(exc) or "not have been used in the graph" in str(exc)
    return UNUSED if isinstance(exc, RuntimeError) and refused else ""


def on_device_advice(exc: BaseException) -> str:
    """Advice for an error about devices, in a test that runs on the meta device."""
    if "meta" in str(exc) or "device" in str(exc):
        return ("Work on x's device: make every new tensor with device=x.device (or from x: zeros_like, "
                "new_zeros), and read no values into Python (.item(), .tolist(), .cpu()).")
    return ""


# Memory shared between a tensor and an array is shared within one process only: the
# conversions run beside the code (grader.testing.scenario), which reports what memory_seen
# sees of the tensor and the array there, and check_shared judges it here. An array handed to
# a scenario arrives as a contiguous copy, so the views the tests need are made there (VIEWS).
VIEWS = {"contiguous": lambda a: a, "every other column": lambda a: a[:, ::2], "transposed": lambda a: a.T,
         "reversed": lambda a: a[::-1]}


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def memory_seen(t, a, write=True) -> dict:
    """What check_shared looks at, seen where t and a live: whether they are a tensor and an
    array (and their types), and if so their dtypes, shapes, layouts and strides in bytes and
    whether they start at one address; then, where those say one buffer (and `write`), a value
    written through each of them with what the other reads."""
    seen = {"is_tensor": isinstance(t, torch.Tensor), "is_array": isinstance(a, np.ndarray),
            "types": (type(t).__name__, type(a).__name__)}
    if not (seen["is_tensor"] and seen["is_array"]):
        return seen
    seen.update(dtype=t.dtype, array_dtype=str(a.dtype), shape=tuple(t.shape), array_shape=a.shape, numel=t.numel(),
                same_address=address(a) == t.data_ptr(), contiguous=t.is_contiguous(),
                array_contiguous=a.flags.c_contiguous, strides=tuple(s * t.element_size() for s in t.stride()),
                array_strides=a.strides)
    if write and t.numel() and seen["same_address"] and seen["strides"] == seen["array_strides"]:
        index = (0,) * t.dim()
        new = 0 if a[index] else 1  # a value it does not hold, for any dtype
        a[index] = new
        seen["array_write"] = (new, t[index].item())
        with torch.no_grad():  # t may require grad: no in-place op on it otherwise
            t[index] = 1 - new
        seen["tensor_write"] = (1 - new, a[index].item())
    return seen


@beside
def to_numpy_seen(lesson, t: torch.Tensor, requires_grad=False, grad=None, back=False) -> dict:
    """to_numpy(t), t made to require grad and given `grad` as its .grad as asked: what
    memory_seen sees of t and the array, and of t then its flag, its .grad and whether that is
    still the very tensor set as `grad`. `back`: what memory_seen sees of from_numpy(array) and
    the array instead."""
    t.requires_grad_(requires_grad)
    if grad is not None:
        t.grad = grad
    a = lesson.to_numpy(t)
    if back:
        return memory_seen(lesson.from_numpy(a), a)
    return {**memory_seen(t, a), "requires_grad": t.requires_grad, "grad": t.grad, "grad_kept": t.grad is grad}


@beside
def from_numpy_seen(lesson, a: np.ndarray, view="contiguous", read_only=False) -> dict:
    """from_numpy of the VIEWS[view] of a (made read-only as asked): what it returned, and what
    memory_seen sees of it and the array."""
    a = VIEWS[view](a)
    with warnings.catch_warnings():
        if read_only:
            a.flags.writeable = False
            warnings.simplefilter("ignore", UserWarning)  # torch warns that the tensor is writable: expected
        t = lesson.from_numpy(a)
    return {"returned": t, **memory_seen(t, a, write=not read_only)}


def check_shared(seen: dict, what: str, made: str, contiguous_shared: bool = False) -> None:
    """What memory_seen saw: the tensor and the array of the same dtype, shape, strides and
    memory; a write through one shows in the other.

    made: "array" or "tensor", the one the call under test returned (the other is its input);
    contiguous_shared: the same call shared a contiguous input (then a copy of a non-contiguous
    one is the .contiguous() pitfall, not a copy of everything).
    """
    __tracebackhide__ = True
    tensor_type, array_type = seen["types"]
    if not seen["is_array"]:
        fail(f"{what}: expected a numpy.ndarray, got {array_type}")
    if not seen["is_tensor"]:
        fail(f"{what}: expected a torch.Tensor, got {tensor_type}")
    dtype, array_dtype = seen["dtype"], np.dtype(seen["array_dtype"])
    if array_dtype != numpy_dtype(dtype):
        if made == "tensor":  # the array is the input: its dtype decides
            said = (f"returned a {dtype_name(dtype)} tensor; expected "
                    f"{dtype_name(torch.from_numpy(np.empty(0, dtype=array_dtype)).dtype)}, the array's dtype")
        else:
            said = f"returned a {array_dtype} array; expected {numpy_dtype(dtype)}, the tensor's dtype"
        fail(f"{what} {said}. This is a dtype conversion (.float(), .to(...), .astype(...)), which copies: share the "
             "memory as it is.")
    if seen["array_shape"] != seen["shape"]:
        source, result = ("array", "tensor") if made == "tensor" else ("tensor", "array")
        got, expected = (seen["shape"], seen["array_shape"]) if made == "tensor" else (seen["array_shape"], seen["shape"])
        added = " (np.ascontiguousarray and np.atleast_1d give at least one dim)" if expected == () and got == (1,) else ""
        fail(f"{what} returned a {result} of shape {got}; expected {expected}, the {source}'s shape{added}: share the "
             f"{source} as it is, whatever its shape.")
    if seen["numel"] == 0:
        return
    if not seen["same_address"]:
        source_contiguous = seen["array_contiguous"] if made == "tensor" else seen["contiguous"]
        result_contiguous = seen["contiguous"] if made == "tensor" else seen["array_contiguous"]
        if result_contiguous and not source_contiguous and contiguous_shared:
            fail(f"{what}: the {made} is a contiguous copy of a non-contiguous view (a different address). "
                 "This is the .contiguous() pitfall (np.ascontiguousarray in NumPy): it copies every view "
                 "that is not contiguous. Strides carry over, so share the view as it is.")
        fail(f"{what}: the array and the tensor are at different addresses, so the {made} is a copy. "
             "torch.tensor(a), np.array(t), .clone() and .astype(...) (even to the same dtype) all copy; share "
             "the memory instead.")
    if seen["array_strides"] != seen["strides"]:
        fail(f"{what}: strides {seen['array_strides']} bytes in NumPy, {seen['strides']} in torch")
    written, read = seen["array_write"]
    if read != written:
        fail(f"{what}: a write through the array is not seen through the tensor")
    written, read = seen["tensor_write"]
    if read != written:
        fail(f"{what}: a write through the tensor is not seen through the array")


NUMPY_REFUSES = when(
    RuntimeError, "requires grad",
    then="NumPy cannot record operations, so .numpy() refuses a tensor that requires grad. Hand it t.detach(): "
    "the same memory, no history, and t keeps its flag.")


CURVE_TOLERANCE = [0.05, 0.05, 1.0]  # measured, see fit_polynomial's docstring


# Where a test depends on more than fit_polynomial's result, the call runs in a scenario, beside
# the code: torch's global RNG there (torch.manual_seed here does not seed the code's process, and
# the lesson allows a random start), the warnings it emits there, and the flags and .grad it
# leaves on the x and y it was lent there.
@beside
def fit_seen(lesson, x, y, *args, seed=None, strict=False, inputs_require_grad=False, **kwargs) -> dict:
    """fit_polynomial(x, y, *args, **kwargs) after torch.manual_seed(seed) (None: none), x and y
    made to require grad as asked, UserWarnings raised as errors (`strict`) or recorded.

    Returns what it returned ("w", and whether it requires grad), the texts of the UserWarnings it
    emitted, and x's and y's values, flags and .grad after the call."""
    if seed is not None:
        torch.manual_seed(seed)
    x.requires_grad_(inputs_require_grad), y.requires_grad_(inputs_require_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error" if strict else "always", UserWarning)
        w = lesson.fit_polynomial(x, y, *args, **kwargs)
    return {"w": w, "w_requires_grad": isinstance(w, torch.Tensor) and w.requires_grad,
            "warnings": [str(c.message) for c in caught if issubclass(c.category, UserWarning)],
            "x": x.detach(), "x_requires_grad": x.requires_grad, "x_grad": x.grad,
            "y": y.detach(), "y_requires_grad": y.requires_grad, "y_grad": y.grad}


def noisy_parabola(n: int = 100, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """The tests' curve 5x^2 + 3, sampled at x uniform in [-10, 10], plus N(0, 1) noise."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, generator=g, dtype=dtype) * 20 - 10
    return x, 5 * x * x + 3 + torch.randn(n, generator=g, dtype=dtype)


HIGHEST_FIRST = ("These are the right coefficients in reverse: lowest power first. Return them highest power "
                 "first, w[0] x^degree + ... + w[degree].")
DIVERGED = ("The fit diverged to inf/nan. Adam's steps are about lr long whatever the gradient, so it does not "
            "do that; plain gradient descent (SGD), whose steps grow with the gradient, does. Use torch.optim.Adam.")


def curve_mistake(w: torch.Tensor, target: torch.Tensor, atol: float) -> str:
    """What the pitfall behind a wrong fit of a known curve is, when its signature shows, else ""."""
    w = w.detach().float().cpu()
    if not torch.isfinite(w).all():
        return DIVERGED

    def within(a, b):
        return bool((a - b).abs().max() <= atol)
    reversed_ = Pitfall(lambda target: target.flip(0), HIGHEST_FIRST)
    return pitfall_of(w, target, [reversed_], target, explains=lambda got, wrong, right: (
        got.shape == right.shape and within(got, wrong) and not within(got, right))) or ""


# One noise-free curve of each degree the docstring names, highest power first. Each is a
# 1000-step fit (0.3-0.5 s): three fixed ones, not property examples, of which hypothesis's
# first is always all zeros, a fit that starts there and has nothing to learn.
OTHER_DEGREES = ([2.0, -1.0], [-2.875, 0.0, -0.25], [0.5, -1.0, 2.0, -1.0])


def check_fits_a_curve(lesson, coefficients: list[float]) -> None:
    __tracebackhide__ = True
    c = torch.tensor(coefficients)  # highest power first
    degree = len(coefficients) - 1
    x = torch.linspace(-2, 2, 41)
    y = torch.stack([x**p for p in range(degree, -1, -1)], dim=1) @ c
    what = f"fit_polynomial(x, y, {degree}) for noise-free samples of coefficients {coefficients}, x in [-2, 2]"
    seen = call(what, fit_seen, lesson, x, y, degree, seed=0)
    w = seen["w"]
    try:
        assert_close(w, c, rtol=0, atol=1e-3, what=what)
        return
    except AssertionError as exc:
        failed = str(exc)
    # The pitfall, as test_fit_recovers_a_noisy_parabola names it: the curve's signature, a warning's
    # text, else a known wrong fit replayed from the same start (1000 steps each: only on failure).
    mistake = (curve_mistake(w, c, atol=1e-3) if isinstance(w, torch.Tensor) else "") or next(
        (m for m in map(warning_mistake, seen["warnings"]) if m), "")
    if not mistake:
        start = call(f"fit_polynomial(x, y, {degree}, steps=0)", fit_seen, lesson, x, y, degree, 0, seed=0)["w"]
        mistake = fit_mistake(w, start, x, y, degree, 1000, 0.1, rtol=1e-3, atol=1e-3)
    fail(failed + (f"\n{mistake}" if mistake else ""))


def adam_by_hand(start, x, y, degree, steps, lr, *, optimizer=torch.optim.Adam, zero_grad=True, loss="mean",
                 column=False):
    """The expected fit: torch.optim.Adam on the full-batch mean squared error, from `start`.

    The keywords make the known wrong fits, to recognise them: another optimizer, no zero_grad,
    the sum of the squared errors, and coefficients kept as a column of shape (degree + 1, 1).
    """
    w = start.detach().clone().reshape(-1, 1) if column else start.detach().clone().reshape(-1)
    w.requires_grad_()
    features = torch.stack([x**p for p in range(degree, -1, -1)], dim=1)
    opt = optimizer([w], lr=lr)
    for _ in range(steps):
        if zero_grad:
            opt.zero_grad()
        squared = (features @ w - y) ** 2  # (N, N) when w is a column
        (squared.sum() if loss == "sum" else squared.mean()).backward()
        opt.step()
    return w.detach().reshape(-1)


def replayed(told: str, **keywords) -> Pitfall:
    """A known wrong fit, as the adam_by_hand `keywords` replay it from (start, x, y, degree,
    steps, lr), with what the learner must read."""
    return Pitfall(lambda start, x, y, degree, steps, lr: adam_by_hand(start, x, y, degree, steps, **{"lr": lr, **keywords}),
                   told)


# Known wrong fits, in the order they are looked for; the last is Adam's own fit read in reverse.
FIT_MISTAKES = (
    replayed("This is the accumulating-gradient pitfall: backward() adds into .grad, so with no optimizer.zero_grad() "
             "each step follows the sum of all the gradients so far. Clear the gradients at the start of every step.",
             zero_grad=False),
    replayed("This is the shape pitfall: predictions of shape (N, 1) against y of shape (N,) broadcast to an (N, N) "
             "matrix of differences, every prediction against every target. Keep the coefficients of shape "
             "(degree + 1,), so that the prediction has shape (N,).", column=True),
    replayed("This is the sum of the squared errors, not the mean: Adam's eps (1e-8) makes the two step differently "
             "when gradients are tiny. Minimise the mean (F.mse_loss).", loss="sum"),
    replayed("These are the steps of Adam at its default lr, 1e-3: pass the caller's lr to torch.optim.Adam.", lr=1e-3),
    replayed("These are the steps of plain gradient descent (torch.optim.SGD): use torch.optim.Adam.",
             optimizer=torch.optim.SGD),
    Pitfall(lambda start, x, y, degree, steps, lr: adam_by_hand(start, x, y, degree, steps, lr).flip(0), HIGHEST_FIRST,
            shows=lambda start, x, y, degree, steps, lr: degree > 0),
)


def fit_mistake(w, start, x, y, degree, steps, lr, *, rtol, atol) -> str:
    """What the pitfall behind a fit that is not Adam's is, when a known wrong fit replays it, else ""."""
    if not isinstance(w, torch.Tensor) or not isinstance(start, torch.Tensor):
        return ""
    if w.dim() == 0 and degree == 0:
        return ("The coefficients came back as a 0-d tensor: a squeeze() drops every dim of size 1, the one "
                "of degree + 1 = 1 coefficient too. Keep the coefficients of shape (degree + 1,) from the "
                "start, and nothing needs squeezing.")
    if start.numel() != degree + 1 or w.numel() != degree + 1:
        return ""
    if not torch.isfinite(w).all():
        return DIVERGED
    if steps > 0 and torch.equal(w.reshape(-1), start.reshape(-1)):  # a loop that never ran returns the start as is
        return (f"It returned the same coefficients for steps={steps} as for steps=0: the "
                "loop does not run `steps` times. Take exactly `steps` Adam steps (steps=0 returns the start).")
    return pitfall_of(w, None, FIT_MISTAKES, start, x, y, degree, steps, lr, explains=lambda got, wrong, right: (
        torch.allclose(got.reshape(-1), wrong, rtol=rtol, atol=atol))) or ""


def warning_mistake(text: str) -> str:
    """What the pitfall behind one of fit_polynomial's warnings is, when its text shows it, else ""."""
    if "To copy construct from a tensor" in text:
        return ("This is the torch.tensor(tensor) pitfall: torch.tensor copies its argument, and warns when that "
                "is a tensor. Make the coefficients with the flag (torch.zeros(..., requires_grad=True)) or "
                "with t.detach().clone().requires_grad_().")
    if "Using a target size" in text and "input size (torch.Size([]))" in text:
        return ("The prediction is a 0-d tensor: a squeeze() drops every dim of size 1, the one of a single "
                "sample too. Keep the coefficients of shape (degree + 1,), so that the prediction has y's "
                "shape (N,) and nothing needs squeezing.")
    if "Using a target size" in text and ", 1]))" in text:
        return ("This is the shape pitfall: predictions of shape (N, 1) against y of shape (N,) broadcast to an "
                "(N, N) matrix of differences, every prediction against every target. Keep the coefficients "
                "of shape (degree + 1,), so that the prediction has shape (N,).")
    return ""


def warned(exc: BaseException) -> str:
    """Advice for call(): the pitfall behind a warning turned into an error, if its text shows it."""
    return warning_mistake(str(exc)) if isinstance(exc, UserWarning) else ""


def adam_case(case: str):
    """(x, y, degree, steps, lr, atol) for one row of test_fit_follows_adam_step_by_step, all float64."""
    x = torch.linspace(-3, 3, 25, dtype=torch.float64)
    y = x**3 - 2 * x + 1 + 0.1 * torch.sin(7 * x)
    if case == "degree 0":
        return x, y, 0, 10, 0.1, 1e-9
    if case == "one sample":
        return x[3:4], y[3:4], 2, 10, 0.1, 1e-9
    if case == "non-contiguous x and y":
        big = torch.stack([x, y], dim=1)  # (25, 2): each column a stride-2 view
        return big[:, 0], big[:, 1], 3, 10, 0.1, 1e-9
    if case == "tiny gradients":  # |grad| ~ 1e-7, near Adam's eps = 1e-8: the mean and the sum step apart
        return x / 3, 1e-7 * torch.sin(2 * x), 2, 5, 1e-7, 1e-16
    steps, lr = {"1 step": (1, 0.05), "30 steps": (30, 0.05), "30 steps at lr 0.3": (30, 0.3)}[case]
    return x, y, 3, steps, lr, 1e-9


def random_steps(lesson, x, y, degree, steps, lr, start, w) -> str:
    """What to tell when the steps themselves draw random numbers (the start the same under another
    torch.manual_seed, the result not), else "": full-batch Adam from a given start has nothing random."""
    if not (isinstance(start, torch.Tensor) and isinstance(w, torch.Tensor)):
        return ""
    other = call(f"fit_polynomial(x, y, {degree}, steps=0) after torch.manual_seed(1)", fit_seen, lesson, x, y, degree,
                 0, seed=1)["w"]
    if not (isinstance(other, torch.Tensor) and other.shape == start.shape and torch.equal(other, start)):
        return ""
    again = call(f"fit_polynomial(x, y, {degree}, steps={steps}, lr={lr}) after torch.manual_seed(1)", fit_seen,
                 lesson, x, y, degree, steps, lr, seed=1)["w"]
    if isinstance(again, torch.Tensor) and again.shape == w.shape and not torch.equal(again, w):
        return (f"steps=0 returns the same start after torch.manual_seed(0) and (1), but steps={steps} does not "
                f"return the same coefficients: the steps draw random numbers. Adam on the mean over all {len(x)} "
                "samples has nothing random: every step uses the whole batch (x, y), not a random subset of it.")
    return ""


def reached_into_x(exc: BaseException) -> str:
    """Advice for call(), in a fit whose x and y require grad: autograd's error from reaching into their graph."""
    if not isinstance(exc, RuntimeError):
        return ""
    if "a second time" in str(exc):  # the features built once from x, before the loop: one graph, freed
        how = ("(and features built once from x, before the loop, share one graph that the first backward() "
               "frees)")
    elif "gradient computation" in str(exc):  # a version check in the backward through x
        how = "(and the backward through x's part of it failed)"
    else:
        return ""
    return (f"x and y require grad here, so every loss built from them reaches back into the caller's graph {how}: "
            "the samples are data, not parameters: detach them first (x, y = x.detach(), y.detach()).")



CONTRACT = """Contract (each promise of the lesson text, the docstrings and the hints -> its tests):
derivative
- d fn/d x for x of any shape (0-d, empty, one element, non-contiguous, expanded)
  -> test_derivative_of_the_first_example, test_derivative_matches_calculus,
  test_derivative_matches_finite_differences_in_float64
- "fn may ignore its argument: the derivative is zero" (a constant, or only closed-over tensors), "autograd
  complains instead" -> test_derivative_of_an_fn_that_ignores_x
- "returns a scalar tensor (one element)": shapes (), (1,), (1, 1) all accepted -> test_derivative_of_a_one_element_fn
- "any floating dtype": result in x's dtype and shape, not requiring grad (float64/16, bfloat16)
  -> test_derivative_keeps_dtype_and_shape_and_does_not_require_grad
- "on any device", result on x's device -> test_derivative_on_the_meta_device, test_on_cuda
- "x left exactly as it was: values, requires_grad flag and .grad" (a .grad already there too)
  -> test_derivative_leaves_the_callers_tensor_alone
- "stores nothing: no .grad anywhere" (tensors fn closes over) -> test_derivative_fills_no_grad_anywhere,
  test_derivative_does_not_reach_into_the_callers_graph
- "fn may modify its argument in place" -> test_derivative_of_an_in_place_fn
- "repeated calls give the same answer" -> test_derivative_gives_the_same_answer_every_time
- "the caller may be inside torch.no_grad()" -> test_derivative_inside_no_grad
- "ValueError naming the shape fn returned when not a single element" (empty too)
  -> test_derivative_of_a_non_scalar_fn_is_a_value_error
- "TypeError when x is not floating point" (integer, bool, complex) -> test_derivative_of_a_non_floating_x_is_a_type_error
fit_polynomial
- "highest power first"; recovers 5x^2 + 3 within the measured tolerance -> test_fit_recovers_a_noisy_parabola
- "noise-free, |x| <= 2, degrees 1 to 3: within 1e-3" -> test_fit_other_degrees
- "Adam at lr for steps steps on the full-batch mean squared error" (the mean, not the sum: tiny
  gradients show Adam's eps), "steps=0 returns the start", degree 0, one sample, non-contiguous
  x and y, no warnings -> test_fit_follows_adam_step_by_step
- defaults steps=1000, lr=0.1 -> test_fit_defaults
- "returns shape (degree + 1,), in x's dtype (half precision too), detached"
  -> test_fit_follows_adam_step_by_step, test_fit_leaves_its_inputs_alone_and_returns_a_detached_tensor,
  test_fit_keeps_half_precision
- "on x's device" -> test_fit_on_the_meta_device, test_on_cuda
- "x and y not modified" (x and y requiring grad: no .grad) -> test_fit_leaves_its_inputs_alone_and_returns_a_detached_tensor
- "no warnings" -> test_fit_emits_no_warnings, test_fit_follows_adam_step_by_step
- "the same torch.manual_seed, the same result" -> test_fit_is_reproducible
to_numpy / from_numpy
- "shares memory: same data address, writes seen both ways" -> test_to_numpy_shares_memory,
  test_from_numpy_shares_memory, test_to_numpy_and_back_share_one_buffer
- "dtype, shape and strides kept" (0-d, empty, every dtype) -> test_dtypes_are_kept_both_ways,
  test_to_numpy_and_back_share_one_buffer
- "non-contiguous views stay views" (expanded too) -> test_non_contiguous_views_stay_views,
  test_to_numpy_and_back_share_one_buffer
- "works on a tensor that requires grad, which keeps its flag and .grad" -> test_to_numpy_of_a_tensor_that_requires_grad
- "bfloat16: TypeError" -> test_to_numpy_of_bfloat16_is_a_type_error
- "read-only arrays are shared too" -> test_from_numpy_of_a_read_only_array
- "negative strides: ValueError" -> test_from_numpy_of_negative_strides_is_a_value_error
- "a CUDA tensor is copied to the host" -> test_on_cuda
the pitfalls the lesson names, each recognised by its signature and named in the failure
- "backward() adds: call it twice and .grad holds twice the gradient" -> test_derivative_gives_the_same_answer_every_time
- "its flag" (x.requires_grad_(); "tidying up afterwards does not undo a .grad the caller already had"), "its
  graph" -> test_derivative_leaves_the_callers_tensor_alone,
  test_derivative_does_not_reach_into_the_callers_graph
- "its memory": an in-place fn on the caller's memory (detached tensors share it) or on a leaf that requires grad
  -> test_derivative_of_an_in_place_fn
- "its context": torch.no_grad() records nothing (an error from autograd, or zeros from a check for an fn that
  ignores x) -> test_derivative_inside_no_grad
- "unless something empties .grad in between, the optimizer follows the running sum of all the gradients so
  far"; Adam's default lr
  -> test_fit_follows_adam_step_by_step
- "(N, 1) minus (N,) broadcasts to (N, N)", hand-written (replayed) or F.mse_loss (its warning); "squeezing
  afterwards is a fragile cure: one sample, or degree 0" -> test_fit_follows_adam_step_by_step, test_fit_emits_no_warnings
- "plain SGD at lr 0.1 ... diverges to inf and nan" -> test_fit_recovers_a_noisy_parabola, test_fit_follows_adam_step_by_step
- "the mean squared error" (mean or sum: Adam's eps) -> test_fit_follows_adam_step_by_step
- "torch.tensor(tensor, requires_grad=True) copies, and warns" -> test_fit_emits_no_warnings,
  test_fit_follows_adam_step_by_step
- highest power first (the reverse recognised) -> test_fit_recovers_a_noisy_parabola, test_fit_other_degrees
- "the tensor-to-array conversion refuses a tensor that requires grad"; "tensors that require grad accepted and
  left unchanged (flag and .grad)" -> test_to_numpy_of_a_tensor_that_requires_grad,
  test_to_numpy_and_back_share_one_buffer
- "what copies": .contiguous() of a view, dtype conversions, torch.tensor/np.array/.clone() -> check_shared in
  test_non_contiguous_views_stay_views, test_dtypes_are_kept_both_ways, test_to_numpy_shares_memory,
  test_from_numpy_shares_memory
"""
