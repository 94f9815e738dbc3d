"""Lesson 07, numerical stability: checks stable.py against PyTorch's own built-ins, values and
gradients, on large, masked, empty and low-precision inputs; a wrong result or error that one of
the lesson's pitfalls gives is named with its fix. `lesson` is the module under test (the
learner's, the reference, or a mutant). The contract table is CONTRACT, at the end."""

import re
import traceback
from contextlib import contextmanager
from dataclasses import replace

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import (assert_close, assert_defaults, assert_no_loop, assert_speed, counted, describe, dtype_name, fail, grad_of,
                            quoted, reported, same, tolerance)
from grader.testing.differential import assert_same_as
from grader.testing.errors import raised
from grader.testing.forbid import lines_naming, ops_run
from grader.testing.pitfalls import Pitfall, pitfall_of, pitfall_raising
from grader.testing.strategies import ALL_LAYOUTS, FLOATS, tensor_and_dim, with_layout

INF = float("inf")
LOW_PRECISION = (torch.float16, torch.bfloat16)

# --- the lesson text's examples --------------------------------------------------------------


@pytest.mark.public
def test_softmax_of_large_logits(lesson):
    x = torch.tensor([1000.0, 0.0])
    check(lesson, "stable_softmax", x, -1, expected=torch.tensor([1.0, 0.0]), what="stable_softmax(tensor([1000., 0.]))")


@pytest.mark.public
def test_logsumexp_of_large_values(lesson):
    expected = torch.tensor(1000.0) + torch.log(torch.tensor(2.0))
    check(lesson, "logsumexp", torch.tensor([1000.0, 1000.0]), -1, expected=expected,
          what="logsumexp(tensor([1000., 1000.]))")


@pytest.mark.public
@pytest.mark.points(2)
def test_cross_entropy_of_large_logits_and_its_gradient(lesson):
    labels = torch.tensor([0.5, 0.5])
    logits = torch.tensor([1000.0, 0.0], requires_grad=True)
    what = "softmax_cross_entropy(tensor([0.5, 0.5]), tensor([1000., 0.]))"
    xe = result_of(lesson, "softmax_cross_entropy", logits, -1, labels, what=what)
    expect_like_torch(lesson, "softmax_cross_entropy", logits, -1, xe.detach() if isinstance(xe, torch.Tensor) else xe,
                      labels=labels, expected=torch.tensor(500.0), what=what)
    expect_like_torch(lesson, "softmax_cross_entropy", logits, -1, grad_of(xe, logits, what), labels=labels,
                      expected=torch.tensor([0.5, -0.5]), what=f"the gradient of {what}")


# --- agreement with torch on random and adversarial inputs --------------------------------------


@given(tensor_and_dim())
@example((torch.tensor([[88.8, 0.0], [-1e4, 1e4]]), -1))
@pytest.mark.points(2)
def test_softmax_matches_torch(lesson, case):
    x, dim = case
    check(lesson, "stable_softmax", x, dim, what=call_for("stable_softmax", dim, x))


@given(tensor_and_dim())
@example((torch.tensor([[1e4, 1e4], [-1e4, -1e4]]), -1))
@pytest.mark.points(2)
def test_logsumexp_matches_torch(lesson, case):
    x, dim = case
    check(lesson, "logsumexp", x, dim, what=call_for("logsumexp", dim, x))


@given(st.deferred(lambda: logits_dim_and_labels()))
@pytest.mark.points(2)
def test_cross_entropy_matches_definition(lesson, case):
    logits, dim, labels = case
    check(lesson, "softmax_cross_entropy", logits, dim, labels=labels,
          what=call_for("softmax_cross_entropy", dim, logits, labels))


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_softmax_normalises_along_dim_of_a_square_input(lesson, dim):
    # A square input is where a missing keepdim broadcasts the sums along the wrong axis.
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(7)) * 3
    what = call_for("stable_softmax", dim, x)
    out = result_of(lesson, "stable_softmax", x, dim, what=what)
    expect_like_torch(lesson, "stable_softmax", x, dim, out, what=what)
    assert_close(out.sum(dim), torch.ones(4), what=f"the sums along dim {dim} of {what}")


def test_rows_of_very_different_scale(lesson):
    base = torch.linspace(-3, 3, 6)
    x = torch.stack([base, base - 1e4, base * 1e3 + 5e3, base + 1e4])  # (4, 6)
    rows = "rows near 0, -1e4, 5e3 and 1e4"
    labels = probabilities(x.shape, -1)
    check(lesson, "stable_softmax", x, -1, what=call_for("stable_softmax", -1, x, note=rows))
    check(lesson, "logsumexp", x, -1, what=call_for("logsumexp", -1, x, note=rows))
    check(lesson, "softmax_cross_entropy", x, -1, labels=labels,
          what=call_for("softmax_cross_entropy", -1, x, labels, note=rows))


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_non_contiguous_input(lesson, layout):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 5, generator=g).t() * 50 if layout == "transposed" else (torch.randn(10, 5, generator=g) * 50)[::2]
    for dim in (0, 1):
        check(lesson, "stable_softmax", x, dim, what=call_for("stable_softmax", dim, x, note=layout))
        check(lesson, "logsumexp", x, dim, what=call_for("logsumexp", dim, x, note=layout))



@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_dim_left_out_is_the_last_dim(lesson, name):
    right_first(lesson, name, "the default dim")
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(3)) * 3  # dims 1 and -1 differ
    fn = getattr(lesson, name)
    if name == "softmax_cross_entropy":
        labels = probabilities(x.shape, -1)
        assert_defaults(lambda **dim: fn(labels, x, **dim), dim=-1,
                        what=f"{name}(labels, logits) for logits of {describe(x)} and labels of {describe(labels)}")
    else:
        assert_defaults(lambda **dim: fn(x, **dim), what=f"{called(name)} for {PARAMETER[name]} of {describe(x)}", dim=-1)


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_inputs_are_not_modified(lesson, name):
    right_first(lesson, name, "that the inputs are left unchanged")
    for what, call, inputs in varied_calls(lesson, name):
        checked(call, name, what, *inputs, forbidding=False)()


# --- edge inputs in every dtype and layout: the same as torch, gradients too ---------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_edge_inputs_match_torch(lesson, name, dtype):
    cases = [(case, "contiguous") for case in EDGE_INPUTS]
    with_layouts = LAYOUT_INPUTS + (MASKED_INPUTS if name != "softmax_cross_entropy" else [])
    # A layout bug shows in any dtype: every layout in two of them is enough.
    cases += [(case, layout) for case in with_layouts
              for layout in (ALL_LAYOUTS if dtype in (torch.float32, torch.float16) else ["contiguous"])]
    if name == "logsumexp":
        cases += [(case, "contiguous") for case in INFINITE_INPUTS]
    for (what_x, values, dim), layout in cases:
        check_like_torch(lesson, name, with_layout(values.to(dtype), layout), dim, what_x, layout)



@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_cross_entropy_labels_that_broadcast_or_are_not_contiguous(lesson, dtype):
    # "labels: broadcastable with `logits`"; the result has the broadcast shape without dim.
    logits_values = torch.linspace(-1e4, 1e4, 12).reshape(3, 4) + torch.arange(12.0).reshape(3, 4)
    for what_labels, labels, shape, dim in CE_LABELS:
        labels = labels.to(dtype) if dtype != torch.float32 else labels
        logits = logits_values[: shape[0]].to(dtype)
        what = (f"{called('softmax_cross_entropy', dim)} for labels of {describe(labels)}"
                + (f" ({what_labels})" if what_labels else "") + f" and logits of {describe(logits)}")

        def mine(t, labels=labels, dim=dim):
            return lesson.softmax_cross_entropy(labels, t, dim=dim)

        def theirs(t, labels=labels, dim=dim):
            return reference_cross_entropy(labels.to(t.dtype), t, dim)
        try:
            assert_same_as(checked(mine, "softmax_cross_entropy", what, labels, lesson=lesson), in_float32(theirs), logits, what=what,
                           grads=True, names=("logits",),
                           tolerance=HALF_TOLERANCE.get(dtype))
            continue
        except (AssertionError, pytest.fail.Exception) as exc:
            pitfall = named_pitfall(lesson, "softmax_cross_entropy", logits, dim, labels)
            if pitfall is None:
                raise
            failure = f"{exc}\n{pitfall}"
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_works_on_whole_tensors_without_a_python_loop(lesson, name):
    right_first(lesson, name, "that no Python loop runs")
    fn = getattr(lesson, name)
    for dim in (-1, 0):
        def call_at(n, dim=dim):
            x = torch.randn((n, 6) if dim == -1 else (6, n), generator=torch.Generator().manual_seed(n))
            labels = probabilities(x.shape, dim)
            return (lambda: fn(labels, x, dim=dim)) if name == "softmax_cross_entropy" else (lambda: fn(x, dim=dim))
        assert_no_loop(
            call_at, 2, 5, what=called(name, dim), unit="rows" if dim == -1 else "columns",
            hint="Work on whole tensors: amax, exp, sum and log along `dim` reduce every slice at once.",
        )


# --- masks, infinities and empty dims: match torch --------------------------------------------


@pytest.mark.public
def test_masked_and_fully_masked_rows(lesson):
    x = torch.tensor([[0.0, -INF, 1.0], [-INF, -INF, -INF], [2.0, 2.0, -INF]])
    rows = "rows partly and entirely masked with -inf"
    check(lesson, "stable_softmax", x, -1, what=call_for("stable_softmax", -1, x, note=rows))
    check(lesson, "logsumexp", x, -1, what=call_for("logsumexp", -1, x, note=rows))


@given(tensor_and_dim(masked=True))
@pytest.mark.points(2)
def test_random_masks_match_torch(lesson, case):
    x, dim = case
    check(lesson, "stable_softmax", x, dim, what=call_for("stable_softmax", dim, x, note="with -inf entries"))
    check(lesson, "logsumexp", x, dim, what=call_for("logsumexp", dim, x, note="with -inf entries"))


def test_logsumexp_of_infinities(lesson):
    x = torch.tensor([[INF, 0.0], [INF, -INF], [-INF, -INF], [1.0, INF]])
    check(lesson, "logsumexp", x, -1, what=call_for("logsumexp", -1, x, note="rows holding +inf or -inf"))


@pytest.mark.parametrize(("shape", "dim"), [((0,), 0), ((3, 0), -1), ((0, 3), -1), ((0, 3), 0), ((2, 0, 4), 1)])
def test_empty_dims(lesson, shape, dim):
    x = torch.empty(shape)
    check(lesson, "stable_softmax", x, dim, what=call_for("stable_softmax", dim, x))
    check(lesson, "logsumexp", x, dim, what=call_for("logsumexp", dim, x))


# --- low precision ---------------------------------------------------------------------------


@given(tensor_and_dim(dtypes=LOW_PRECISION, scales=(1.0, 5.0, 1e3)))
@pytest.mark.points(2)
def test_low_precision_keeps_dtype(lesson, case):
    x, dim = case
    tol = tolerance(x.dtype)
    # Compare with torch's float32 result rounded to the input's dtype.
    check(lesson, "stable_softmax", x, dim, what=call_for("stable_softmax", dim, x), **tol)
    # logsumexp = shift + log(sum): the log term is rounded to x's dtype before the add, so a
    # result near 0 can be off by a few eps in absolute terms, not only relative ones.
    atol = 4 * torch.finfo(x.dtype).eps
    check(lesson, "logsumexp", x, dim, what=call_for("logsumexp", dim, x), rtol=tol["rtol"], atol=atol)


# --- gradients -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
@pytest.mark.parametrize("dim", [0, -1])
def test_gradients_match_torch_float64(lesson, name, dim):
    # Random upstream gradients (a vector-Jacobian product, as backward() computes inside a
    # model): the gradient of a plain sum of softmax outputs is 0 whatever the code does.
    x = (torch.randn(3, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 3).requires_grad_()
    labels = probabilities(x.shape, dim).double()
    reference = {
        "stable_softmax": lambda t: torch.softmax(t, dim),
        "logsumexp": lambda t: torch.logsumexp(t, dim),
        "softmax_cross_entropy": lambda t: reference_cross_entropy(labels, t, dim),
    }[name]
    expected = reference(x)
    upstream = torch.randn(expected.shape, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    what = (f"the gradient of {call_for(name, dim, x, labels if name == 'softmax_cross_entropy' else None)}, "
            "times random upstream gradients")
    got = grad_of(result_of(lesson, name, x, dim, labels, what=what), x, what, upstream)
    expect_like_torch(lesson, name, x, dim, got, labels=labels, expected=grad_of(expected, x, what, upstream), what=what)


@pytest.mark.points(2)
def test_gradients_at_extreme_logits_are_finite_and_right(lesson):
    logits = torch.tensor([[1e4, 0.0, -1e4], [-1e4, -1e4, 1e4 + 1], [3.0, 2.0, 1.0]], requires_grad=True)
    labels = probabilities(logits.shape, -1)
    upstream = torch.randn(3, 3, generator=torch.Generator().manual_seed(2))
    cases = [
        ("stable_softmax(logits)", lambda t: lesson.stable_softmax(t), lambda t: torch.softmax(t, -1), upstream),
        ("logsumexp(x)", lambda t: lesson.logsumexp(t), lambda t: torch.logsumexp(t, -1), upstream[:, 0]),
        ("softmax_cross_entropy(labels, logits)", lambda t: lesson.softmax_cross_entropy(labels, t),
         lambda t: reference_cross_entropy(labels, t, -1), upstream[:, 0]),
    ]
    for call, fn, reference, up in cases:
        name = call.partition("(")[0]
        call = f"{call} for {PARAMETER[name]} of {describe(logits)} (entries up to +-1e4)"
        what = f"the gradient of {call}, times random upstream gradients"
        with named_errors(call, name, logits):
            out = fn(logits)
        got = grad_of(out, logits, what, up)
        if not torch.isfinite(got).all():
            pitfall = named_pitfall(lesson, name, logits, -1, labels if name == "softmax_cross_entropy" else None)
            pytest.fail(f"{what} has {non_finite(got)}." + (f"\n{pitfall}" if pitfall else ""), pytrace=False)
        expect_like_torch(lesson, name, logits, -1, got, labels=labels if name == "softmax_cross_entropy" else None,
                          expected=grad_of(reference(logits), logits, what, up), what=what)


# --- the lesson's rule: no built-ins -----------------------------------------------------------


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_does_not_call_the_builtins(lesson, name):
    # At the dispatcher: every alias (torch.special.*, Tensor methods, nn modules, F.*) runs
    # the same aten op. (Every call in test_edge_inputs_match_torch is checked the same way.)
    right_first(lesson, name, "that no built-in is called")
    for what, call, inputs in varied_calls(lesson, name):
        checked(call, name, what, *inputs, lesson=lesson)()


# --- speed and devices ------------------------------------------------------------------------


@pytest.mark.speed
def test_softmax_works_on_whole_tensors(lesson):
    right_first(lesson, "stable_softmax", "the speed")
    x = torch.randn(512, 1024, generator=torch.Generator().manual_seed(6))
    assert_speed(
        lambda: torch.softmax(x, -1), lambda: lesson.stable_softmax(x),
        at_least=0.2, what="stable_softmax on a (512, 1024) tensor", baseline_name="torch.softmax",
        hint="Work on whole tensors along `dim`: no Python loop over rows or elements.",
        # Fresh values each call, in a process whose caches the tests' work has cooled (MEASUREMENTS.md).
        fresh_at_least=0.1,
    )


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    x = torch.randn(8, 16, device="cuda") * 100
    labels = probabilities(x.shape, -1).cuda()
    what = {name: call_for(name, -1, x, labels if name == "softmax_cross_entropy" else None, "on CUDA")
            for name in ("stable_softmax", "logsumexp", "softmax_cross_entropy")}
    assert_close(result_of(lesson, "stable_softmax", x, -1, what=what["stable_softmax"]), torch.softmax(x, -1),
                 what=what["stable_softmax"])
    assert_close(result_of(lesson, "logsumexp", x, -1, what=what["logsumexp"]), torch.logsumexp(x, -1),
                 what=what["logsumexp"])
    assert_close(result_of(lesson, "softmax_cross_entropy", x, -1, labels, what=what["softmax_cross_entropy"]),
                 reference_cross_entropy(labels, x, -1), what=what["softmax_cross_entropy"])


# --- calling the lesson's functions, and what torch gives -----------------------------------


def probabilities(shape, dim, seed=0) -> torch.Tensor:
    """Labels: random probabilities that sum to 1 along `dim`."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g).softmax(dim)


def reference_cross_entropy(labels, logits, dim):
    return -(labels * torch.log_softmax(logits, dim)).sum(dim)


# Each function's tensor parameter, as its signature in the lesson names it.
PARAMETER = {"stable_softmax": "logits", "logsumexp": "x", "softmax_cross_entropy": "logits"}


def called(name, dim=None) -> str:
    """The learner's call, every argument named as the signature names it: "logsumexp(x, dim=0)",
    "stable_softmax(logits, dim=0)"; without `dim`, the call that leaves it out."""
    given = "" if dim is None else f", dim={dim}"
    if name == "softmax_cross_entropy":
        return f"softmax_cross_entropy(labels, logits{given})"
    return f"{name}({PARAMETER[name]}{given})"


def call_for(name, dim, x, labels=None, note="") -> str:
    """`called` and its inputs: "logsumexp(x, dim=0) for x of shape (3, 4), float32 (note)"."""
    note = f" ({note})" if note else ""
    if name == "softmax_cross_entropy":
        return f"{called(name, dim)} for logits of {describe(x)}{note} and labels of {describe(labels)}"
    return f"{called(name, dim)} for {PARAMETER[name]} of {describe(x)}{note}"


# The aten ops that compute a softmax, a log-softmax, a logsumexp or a cross entropy, and the
# built-in each is: the dispatcher sees every spelling of it (F.softmax, Tensor.softmax,
# torch.special.softmax, nn.Softmax, F.softmin all run aten._softmax) the same way.
FORBIDDEN_OPS = {
    "aten._softmax": "torch.softmax",
    "aten._safe_softmax": "torch._safe_softmax (the softmax inside scaled_dot_product_attention)",
    # scaled_dot_product_attention's fused kernels hold a softmax (on a CPU, the flash one; a red team's
    # softmax ran as attention with identity keys and values)
    **{f"aten._scaled_dot_product_{kernel}": "F.scaled_dot_product_attention (a softmax inside)"
       for kernel in ("flash_attention_for_cpu", "flash_attention", "efficient_attention", "cudnn_attention")},
    # ... and the other fused kernels that hold one (a red team's softmax ran in a transformer layer's fast path)
    "aten._transformer_encoder_layer_fwd": "nn.TransformerEncoderLayer (an attention's softmax inside)",
    "aten._native_multi_head_attention": "nn.MultiheadAttention (a softmax inside)",
    "aten._masked_softmax": "torch._masked_softmax",
    "aten._sparse_softmax": "torch.sparse.softmax",
    "aten._sparse_log_softmax": "torch.sparse.log_softmax",
    "aten._log_softmax": "torch.log_softmax (which F.cross_entropy runs too)",
    "aten.logsumexp": "torch.logsumexp",
    "aten.logcumsumexp": "torch.logcumsumexp (its last entry is the logsumexp)",
    "aten.nll_loss_forward": "F.nll_loss (which F.cross_entropy runs too)",
    "aten.nll_loss2d_forward": "F.nll_loss (which F.cross_entropy runs too)",
}


def checked(fn, name, what, *watched, forbidding=True, lesson=None):
    """`fn`, the learner's `name`, with the checks every call of the lesson's code gets here: it
    runs none of FORBIDDEN_OPS (unless `forbidding` is False), and it leaves its tensor arguments
    (and the `watched` tensors) unchanged."""
    def call(*args, **kwargs):
        __tracebackhide__ = True
        inputs = [t for t in (*args, *watched) if isinstance(t, torch.Tensor)]
        before = [t.detach().clone() for t in inputs]
        with ops_run(FORBIDDEN_OPS if forbidding else ()) as ops, named_errors(what, name, inputs[0] if inputs else None):
            result = fn(*args, **kwargs)
        used = ops & FORBIDDEN_OPS.keys() if forbidding else ()
        if used:
            builtins = " and ".join(dict.fromkeys(FORBIDDEN_OPS[op] for op in sorted(used)))
            via = " (inside your logsumexp, which it calls)" if _only_through_own_logsumexp(lesson, name, used, fn, args, kwargs) else ""
            lines = lines_naming(lesson, name, used) if lesson is not None else []
            where = ":\n" + "\n".join(lines) if lines else (
                " (any spelling of the built-in is caught: a Tensor method, torch.special, torch.nn.functional, an nn module).")
            fail(f"{what} calls {builtins}{via}, which this lesson asks you to write yourself from exp, log, max and sum, "
                 f"as the lesson text shows{where}")
        for t, old in zip(inputs, before):
            assert_close(t.detach(), old, what=f"an input of {what} after the call (the caller's tensor must not "
                         f"change: no in-place `-=` or `sub_` on it; write `{PARAMETER[name]} = {PARAMETER[name]} - shift`)")
        return result
    return call


def _only_through_own_logsumexp(lesson, name, used, fn, args, kwargs) -> bool:
    """Whether the forbidden ops `used` by the learner's `name` (not logsumexp itself) all ran
    inside the learner's own logsumexp, which it calls: with that one replaced by a stand-in
    written from exp, sum and log, the same call runs none of them."""
    if lesson is None or name == "logsumexp" or not callable(getattr(lesson, "logsumexp", None)):
        return False

    def stand_in(x, dim=-1):
        return x.exp().sum(dim).log()
    own = lesson.logsumexp
    lesson.logsumexp = stand_in
    try:
        with ops_run() as ops:
            fn(*args, **kwargs)
    except Exception:  # noqa: BLE001 (code the stand-in does not fit: say nothing of where)
        return False
    finally:
        lesson.logsumexp = own
    return not (ops & used)


def in_float32(fn):
    """`fn` computed in float32 and rounded to the input's dtype for float16 and bfloat16 (the
    most accurate answer in that dtype); `fn` itself for the other dtypes."""
    def call(x, *args):
        if x.dtype in LOW_PRECISION:
            return fn(x.float(), *args).to(x.dtype)
        return fn(x, *args)
    return call


# float16 and bfloat16 results are compared with torch's float32 answer rounded to their dtype;
# a correct float16 computation rounds its exp, sum and division to 11 bits (bfloat16: 8).
HALF_TOLERANCE = {torch.float16: {"rtol": 4e-3, "atol": 2e-3}, torch.bfloat16: {"rtol": 2e-2, "atol": 1e-2}}


# --- the pitfalls the lesson names, told apart by what they compute ----------------------------

OVERFLOW = ("This is exp overflowing: exp(x) is inf for x above ~88.7 in float32 (~11.1 in float16), and inf / inf "
            "is nan (log(inf) is inf). Subtract the maximum along `dim` before exponentiating (the shift identity in "
            "the lesson text).")
GLOBAL_MAX = ("This is one maximum for the whole tensor: a slice whose values all sit far below it underflows to "
              "0 / 0 (or log(0)). Take one maximum per slice: the maximum along `dim`.")
KEEPDIM = ("This is a reduction without keepdim=True: the reduced tensor lost `dim`, so broadcasting lines it up "
           "with the wrong axis (silently on a square input, with a size error elsewhere). Reduce with "
           "keepdim=True where the result meets the full tensor again.")
SIZE_ERROR = ("A reduced tensor met a tensor of another shape: this is a reduction without keepdim=True, which "
              "drops `dim`, so broadcasting lines the result up with the wrong axis. Reduce with keepdim=True where "
              "the result meets the full tensor again (and squeeze(dim) where the result must lose `dim`).")
INF_MINUS_INF = ("This is inf - inf: in a slice whose maximum is infinite (all -inf, or holding +inf), x - max is "
                 "nan. Shift those slices by 0 instead of their maximum: their log-sum-exp is then -inf or +inf "
                 "by itself.")
SHIFT_BACK = ("The shift was not added back: log(sum(exp(x - c))) is logsumexp(x) - c. Add the maximum c back "
              "(with `dim` removed).")
SQUEEZE = ("The maximum kept its dim (keepdim=True) and was added to a sum without it: broadcasting made a table "
           "of every pair. Remove `dim` from the maximum (squeeze(dim)) before adding it back.")
LOG_OF_SOFTMAX = ("This is log(softmax(x)): a probability that underflowed to 0 has log -inf, so the loss is inf and "
                  "its gradient nan. Compute the log-probabilities as x - logsumexp(x), never as the log of a "
                  "probability.")
NO_SHIFT = ("This is x - logsumexp(x) on logits that were not shifted: subtracting two large, nearly equal "
            "numbers (1e4 - (1e4 + 0.693)) cancels the digits you want. Shift the logits by their maximum along "
            "`dim` first: (x - c) - logsumexp(x - c).")
DETACHED = ("The log-sum-exp term is detached: the gradient is -labels instead of softmax(logits) - labels. Only "
            "the shift c may be a constant; the log-sum-exp must stay in the graph.")
ONE_HOT = ("This is the log-probability of the argmax class alone, as if labels were one-hot: labels are a "
           "distribution. Weight every log-probability by its label: -(labels * log_probs).sum(dim).")
SUM_ALL = ("This sums over every dim: one number for the whole batch. Sum over `dim` only: one loss per example "
           "(the broadcast shape without `dim`).")
NAN_HIDDEN = ("Where a slice along `dim` is entirely -inf, torch.softmax gives nan (0 / 0: no entry has any weight), "
              "and yours gives 0 there. A clamp or an epsilon in the denominator (or a nan_to_num afterwards) hides "
              "the 0 / 0: leave it nan, as torch.softmax does (the lesson text: an entirely -inf slice has no valid "
              "softmax).")
NAN_TO_MINUS_INF = ("Where a slice along `dim` holds +inf, its log-sum-exp is +inf, and yours gives -inf there: x - max "
                    "is inf - inf, nan, and the nan was then replaced by -inf (nan_to_num or where), which is right for "
                    "an entirely -inf slice only. Shift the slices whose maximum is infinite by 0 instead of their "
                    "maximum: their log-sum-exp is then -inf or +inf by itself.")
FIXED_DIM = ("This is computed along dim {fixed}, whatever `dim` says: reduce along `dim` itself (amax, sum and "
             "keepdim with dim=dim), not along a fixed {fixed}.")


def _normalised(e, dim):
    return e / e.sum(dim, keepdim=True)


def _finite_shift(t, dim):
    c = t.amax(dim, keepdim=True)
    return c.masked_fill(c.isinf(), 0)


def _cross_entropy_of(log_probs, labels, dim):
    return -(labels * log_probs).sum(dim)


def _along(fixed, t, dim, compute):
    """`compute(t, fixed)`: the function computed along the dim `fixed` instead of `dim`; an error
    (no such dim in t) where `fixed` is `dim` itself or t has no dim `fixed`."""
    if t.dim() == 0 or not -t.dim() <= fixed < t.dim() or fixed % t.dim() == dim % t.dim():
        raise IndexError(f"dim {fixed} is no other dim of this input")
    return compute(t, fixed)


def _argmax_class_only(t, dim, labels):
    labels, t = torch.broadcast_tensors(labels.to(t.dtype), t)
    return -torch.log_softmax(t, dim).gather(dim, labels.argmax(dim, keepdim=True)).squeeze(dim)


# What each pitfall computes, as code that falls into it would, from (t, dim, labels). Where a
# pitfall names what it sees in x (an infinite entry; an exp that is inf; an entirely -inf slice;
# a +inf entry), `shows` asks for it: without it, the formula differs from torch's only by
# rounding, which a correct answer may share.
PITFALLS = {
    "stable_softmax": [
        Pitfall(lambda t, dim, labels: _normalised(t.exp(), dim), OVERFLOW, shows=lambda t, dim, labels: _overflows(t)),
        Pitfall(lambda t, dim, labels: _normalised((t - t.max()).exp(), dim), GLOBAL_MAX),
        Pitfall(lambda t, dim, labels: _normalised((t - t.amax(dim)).exp(), dim), KEEPDIM),
        Pitfall(lambda t, dim, labels: (t - t.amax(dim, keepdim=True)).exp() / (t - t.amax(dim, keepdim=True)).exp().sum(dim),
                KEEPDIM),
        Pitfall(lambda t, dim, labels: torch.softmax(t, dim).nan_to_num(nan=0.0), NAN_HIDDEN,
                shows=lambda t, dim, labels: _entirely_masked(t, dim)),
        *[Pitfall(lambda t, dim, labels, fixed=fixed: _along(fixed, t, dim, torch.softmax), FIXED_DIM.format(fixed=fixed))
          for fixed in (-1, 0, 1)],
    ],
    "logsumexp": [
        Pitfall(lambda t, dim, labels: t.exp().sum(dim).log(), OVERFLOW, shows=lambda t, dim, labels: _overflows(t)),
        Pitfall(lambda t, dim, labels: (t - t.amax(dim, keepdim=True)).exp().sum(dim).log() + t.amax(dim), INF_MINUS_INF,
                shows=lambda t, dim, labels: bool(t.isinf().any())),
        Pitfall(lambda t, dim, labels: (t - t.max()).exp().sum(dim).log() + t.max(), GLOBAL_MAX),
        Pitfall(lambda t, dim, labels: (t - _finite_shift(t, dim)).exp().sum(dim).log(), SHIFT_BACK),
        Pitfall(lambda t, dim, labels: (t - _finite_shift(t, dim)).exp().sum(dim).log() + _finite_shift(t, dim), SQUEEZE),
        Pitfall(lambda t, dim, labels: (t - t.amax(dim)).exp().sum(dim).log() + t.amax(dim), KEEPDIM),
        Pitfall(lambda t, dim, labels: ((t - t.amax(dim, keepdim=True)).exp().sum(dim).log() + t.amax(dim)).nan_to_num(
            nan=-INF, posinf=INF, neginf=-INF), NAN_TO_MINUS_INF, shows=lambda t, dim, labels: bool((t == INF).any())),
        *[Pitfall(lambda t, dim, labels, fixed=fixed: _along(fixed, t, dim, torch.logsumexp), FIXED_DIM.format(fixed=fixed))
          for fixed in (-1, 0, 1)],
    ],
    "softmax_cross_entropy": [
        Pitfall(lambda t, dim, labels: _cross_entropy_of(torch.softmax(t, dim).log(), labels, dim), LOG_OF_SOFTMAX),
        Pitfall(lambda t, dim, labels: _cross_entropy_of(_normalised(t.exp(), dim).log(), labels, dim), LOG_OF_SOFTMAX),
        Pitfall(lambda t, dim, labels: _cross_entropy_of(t - torch.logsumexp(t, dim, keepdim=True), labels, dim), NO_SHIFT),
        Pitfall(lambda t, dim, labels: _cross_entropy_of(t - torch.logsumexp(t, dim, keepdim=True).detach(), labels, dim),
                DETACHED),
        Pitfall(lambda t, dim, labels: -(labels * torch.log_softmax(t, dim)).sum(), SUM_ALL),
        Pitfall(lambda t, dim, labels: _argmax_class_only(t, dim, labels), ONE_HOT),
    ],
}
# The tolerance of a correct result, per dtype: a pitfall is the cause only if what it computes is
# outside it. And how close the learner's result must be to what the pitfall computes.
STRICT = {torch.float64: tolerance(torch.float64), torch.float32: tolerance(torch.float32), **HALF_TOLERANCE}
LOOSE = {torch.float64: {"rtol": 1e-4, "atol": 1e-5}, torch.float32: {"rtol": 1e-3, "atol": 1e-4},
         torch.float16: {"rtol": 1e-2, "atol": 5e-3}, torch.bfloat16: {"rtol": 5e-2, "atol": 2e-2}}


def _copy(x: torch.Tensor) -> torch.Tensor:
    """A leaf with x's values and memory layout (strides, offset, overlap) on its own storage."""
    c = torch.empty(0, dtype=x.dtype, device=x.device).set_(
        x.detach().untyped_storage().clone(), x.storage_offset(), x.shape, x.stride())
    return c.requires_grad_() if c.is_floating_point() else c


def _evaluate(fn, x):
    """(value, gradient of sum(value * weights)) of fn on a copy of x; the gradient is None where
    the value does not track one."""
    t = _copy(x)
    value = fn(t)
    grad = None
    if isinstance(value, torch.Tensor) and value.requires_grad and t.requires_grad:
        weights = torch.linspace(0.5, 2.0, value.numel()).reshape(value.shape).to(value.dtype)
        (grad,) = torch.autograd.grad((value * weights).sum(), t, allow_unused=True)
    return value.detach() if isinstance(value, torch.Tensor) else value, grad


def _gap(a, b) -> float:
    """The largest difference between a and b, where equal infinities and nan against nan count 0."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return float("inf")
    a, b = a.double(), b.double()
    equal = (a == b) | (a.isnan() & b.isnan())
    return float(torch.where(equal, 0.0, (a - b).abs()).nan_to_num(nan=float("inf")).amax()) if a.numel() else 0.0


def _explains(mine, wrong, right, dtype) -> bool:
    """Whether what a pitfall computes (`wrong`: value, gradient) explains the learner's result:
    it is not torch's (`right`), and the learner's is it, much closer to it than it is to torch's.
    A pitfall whose values are right is judged by its gradient."""
    strict, loose = STRICT[dtype], LOOSE[dtype]
    if not same(wrong[0], right[0], check_dtype=False, **strict):
        return same(mine[0], wrong[0], check_dtype=False, **loose) and _gap(mine[0], wrong[0]) <= 0.1 * _gap(wrong[0], right[0])
    if any(g is None for g in (mine[1], wrong[1], right[1])) or same(wrong[1], right[1], check_dtype=False, **strict):
        return False
    return (same(mine[0], right[0], check_dtype=False, **loose) and same(mine[1], wrong[1], check_dtype=False, **loose)
            and _gap(mine[1], wrong[1]) <= 0.1 * _gap(wrong[1], right[1]))


def call_of(lesson, name, dim, labels=None):
    """The learner's `name` as a function of the logits alone."""
    fn = getattr(lesson, name)
    if name == "softmax_cross_entropy":
        return lambda t: fn(labels, t, dim=dim)
    return lambda t: fn(t, dim=dim)


def reference_of(name, dim, labels=None):
    """torch's answer for `name`, in float32 rounded to x's dtype for float16 and bfloat16."""
    if name == "softmax_cross_entropy":
        return in_float32(lambda t: reference_cross_entropy(labels.to(t.dtype), t, dim))
    return in_float32(lambda t: torch.softmax(t, dim) if name == "stable_softmax" else torch.logsumexp(t, dim))


def named_pitfall(lesson, name, x, dim, labels=None) -> str | None:
    """The pitfall the lesson names that explains why the learner's `name` failed on x (its
    words), or None: the learner's values and gradients are what the pitfall computes, and that
    is not what torch computes. Anything else keeps the plain message."""
    if not x.is_floating_point():
        return None
    try:
        mine = _evaluate(call_of(lesson, name, dim, labels), x)
        right = _evaluate(reference_of(name, dim, labels), x)
    except Exception:  # noqa: BLE001 (the failure being explained has said what went wrong)
        return None
    if not isinstance(mine[0], torch.Tensor):
        return None
    expected_dtype = right[0].dtype
    if (mine[0].dtype != expected_dtype and mine[0].dtype in (torch.float32, torch.float64)
            and same(mine[0], right[0], check_dtype=False, **LOOSE[x.dtype])):
        if mine[0].itemsize < x.itemsize:  # float32 for float64 input: computed narrower, precision lost
            return (f"The values are close, but the result is {dtype_name(mine[0].dtype)} for {dtype_name(x.dtype)} "
                    "input: computed in a narrower dtype (.float()?), which loses the input's precision. Compute in "
                    f"the dtype of {PARAMETER[name]}.")
        return (f"The values are right, but the result is {dtype_name(mine[0].dtype)} for "
                f"{dtype_name(x.dtype)} input: computed in a wider dtype and not cast back. Return "
                f"the input's dtype (cast the result back, .to({PARAMETER[name]}.dtype)).")

    def named(pitfalls):
        return pitfall_of(mine, right, [_evaluated(pitfall) for pitfall in pitfalls], x, dim, labels,
                          explains=lambda mine, wrong, right: _explains(mine, wrong, right, x.dtype))
    pitfalls = PITFALLS[name]
    if name != "softmax_cross_entropy":
        return named(pitfalls)
    # A logsumexp that lost its gradient through the normaliser gives DETACHED's gradient at large
    # logits too (softmax is then one-hot): the learner's logsumexp is looked at first, and blamed
    # only when the cross entropy built on it is the learner's.
    detached = [pitfall.told for pitfall in pitfalls].index(DETACHED)
    return named(pitfalls[:detached]) or _own_logsumexp_named(lesson, mine, right, x, dim, labels) or named(pitfalls[detached:])


def _evaluated(pitfall: Pitfall) -> Pitfall:
    """`pitfall` giving (value, gradient) on a copy of x, as _evaluate gives the learner's."""
    return replace(pitfall, gives=lambda x, dim, labels: _evaluate(lambda t: pitfall.gives(t, dim, labels), x))


def _entirely_masked(x: torch.Tensor, dim: int) -> bool:
    """Whether a slice of x along `dim` holds entries and every one of them is -inf."""
    return bool(x.numel()) and bool((x.detach() == -INF).all(dim).any())


def _overflows(x: torch.Tensor) -> bool:
    """Whether exp of a finite entry of x is inf in x's dtype."""
    finite = x.detach()[x.detach().isfinite()]
    return bool(finite.exp().isinf().any())


def _own_logsumexp_named(lesson, mine, right, x, dim, labels) -> str | None:
    """Where the learner's logsumexp is wrong on x for a named pitfall, and the learner's cross
    entropy (`mine`) is -(labels * (t - logsumexp(t))).sum(dim) with it, on the logits t or on
    the logits shifted by their maximum first (the lesson's recipe), and that is not torch's
    (`right`): the cross entropy blamed on that pitfall. Else None."""
    inner = named_pitfall(lesson, "logsumexp", x, dim)
    if inner is None:
        return None

    def on_logits(t, dim, labels):
        return _cross_entropy_of(t - lesson.logsumexp(t, dim=dim).unsqueeze(dim), labels, dim)

    def on_shifted(t, dim, labels):
        return on_logits(t - _finite_shift(t, dim).detach(), dim, labels)
    told = f"Your cross entropy is what your logsumexp gives, and logsumexp(logits, dim={dim}) is wrong on these logits. {inner}"
    return pitfall_of(mine, right, [_evaluated(Pitfall(on_logits, told)), _evaluated(Pitfall(on_shifted, told))], x, dim, labels,
                      explains=lambda mine, wrong, right: _explains(mine, wrong, right, x.dtype))


def expect_like_torch(lesson, name, x, dim, got, *, what, labels=None, expected=None, **tol):
    """`got`, the learner's `name` on x, must be torch's answer (or `expected`): else the failure
    says by how much, and names the lesson's pitfall when it is the cause."""
    __tracebackhide__ = True
    if expected is None:
        expected = reference_of(name, dim, labels)(x)
    try:
        assert_close(got, expected, what=what, **tol)
        return
    except AssertionError as exc:
        pitfall = named_pitfall(lesson, name, x, dim, labels)
        if pitfall is None:
            raise
        failure = f"{exc}\n{pitfall}"
    pytest.fail(failure, pytrace=False)


EMPTY = ("An empty dim has no maximum (amax and max refuse it): handle an empty input before shifting. Softmax of "
         "nothing is the empty tensor; the log-sum-exp of nothing is -inf, the log of an empty sum.")


def raising(x: torch.Tensor) -> list[Pitfall]:
    """The pitfalls of the lesson that raise, as code that falls into them would, on the call's
    first tensor x: the maximum of an empty tensor or dim (amax and max refuse it), and x minus
    its maximum along a dim taken without keepdim. A pitfall is named only when its code raises
    the learner's very error; the empty case comes first, as x - x.amax(d) raises amax's error
    where d is empty."""
    dims = range(-x.dim(), x.dim())
    return [Pitfall(x.max, EMPTY), *(Pitfall(lambda d=d: x.amax(d), EMPTY) for d in dims),
            *(Pitfall(lambda d=d: x - x.amax(d), SIZE_ERROR) for d in dims)]


# The built-in each function of the lesson matches.
BUILTIN = {"stable_softmax": "torch.softmax", "logsumexp": "torch.logsumexp", "softmax_cross_entropy": "torch.log_softmax"}


@contextmanager
def named_errors(what: str, name: str, x: torch.Tensor | None):
    """Inside the block, an error that a pitfall of the lesson raises fails the test naming the
    pitfall and its fix; any other error of the learner's code fails with `what` and the
    learner's lines (grader.testing.reported). `name`: the learner's function; `x`: the call's
    first tensor, or None."""
    __tracebackhide__ = True
    with reported(what):
        try:
            yield
            return
        except NotImplementedError:  # a stub's TODO stays a TODO
            raise
        except (RuntimeError, IndexError) as exc:
            words = None if x is None else pitfall_raising(exc, raising(x.detach()))
            if words is not None:
                failure = f"{what} raised {quoted(exc)}. {words}"
            elif isinstance(exc, IndexError) and x is not None and x.dim() == 0 and _shape_guard(exc):
                # Named as the learner's line names them: the tensor it guards, in the function it is in
                # (softmax_cross_entropy may call the learner's logsumexp).
                arg, function = _shape_guard(exc)
                failure = (f"{what} raised IndexError({str(exc)!r}). A 0-d tensor has no sizes to index (its shape "
                           f"is ()), yet dim 0 and -1 are valid for it, as for {BUILTIN.get(function, BUILTIN[name])}: "
                           f"test for an empty input with {arg}.numel() == 0, not {arg}.shape[dim] == 0.")
            elif isinstance(exc, IndexError) and x is not None and x.dim() == 0:
                failure = (f"{raised(what, exc)}\nA 0-d tensor has no sizes to index (its shape is ()), yet dim 0 "
                           "and -1 are valid for it: treat it as one element.")
            else:
                raise
    fail(failure)


def _shape_guard(exc: BaseException) -> tuple[str, str] | None:
    """(the tensor's name, the function) where the line that raised exc tests a size for 0
    (`x.shape[dim] == 0`), the guard the lesson warns about, rather than indexing a shape for
    another reason; else None."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    guard = re.search(r"(\w+)\s*\.\s*(?:shape\[|size\().*==\s*0", frames[-1].line or "")
    return (guard.group(1), frames[-1].name) if guard else None


def result_of(lesson, name, x, dim, labels=None, *, what):
    """The learner's `name` on x (an error with a named cause says so)."""
    __tracebackhide__ = True
    with named_errors(what, name, x):
        return call_of(lesson, name, dim, labels)(x)


def check(lesson, name, x, dim, *, what, labels=None, expected=None, **tol):
    """The learner's `name` on x against torch's answer (or `expected`), pitfalls named."""
    __tracebackhide__ = True
    got = result_of(lesson, name, x, dim, labels, what=what)
    expect_like_torch(lesson, name, x, dim, got, what=what, labels=labels, expected=expected, **tol)


def varied_calls(lesson, name):
    """(what, the call): `name` on inputs of every dtype, both dims, two layouts, a 0-d one and
    a non-leaf that requires grad (autograd lets code write into that one in place)."""
    base = torch.randn(4, 5, generator=torch.Generator().manual_seed(1)) * 100
    inputs = [(with_layout(base.to(dtype), layout), dim, "" if layout == "contiguous" else layout)
              for dtype in FLOATS for layout in ("contiguous", "transposed") for dim in (0, -1)]
    inputs += [(base.clone().requires_grad_() * 1, -1, "a non-leaf that requires grad"), (torch.tensor(2.5), 0, "")]
    fn = getattr(lesson, name)
    for x, dim, note in inputs:
        if name == "softmax_cross_entropy":
            labels = with_layout(probabilities(x.shape, dim).to(x.dtype), "transposed")
            what = call_for(name, dim, x, labels, note)
            yield what, (lambda fn=fn, labels=labels, x=x, dim=dim: fn(labels, x, dim=dim)), (x, labels)
        else:
            yield call_for(name, dim, x, note=note), (lambda fn=fn, x=x, dim=dim: fn(x, dim=dim)), (x,)


def right_first(lesson, name, property_: str) -> None:
    """A test of a property other than the values (`property_`) earns its points only for a
    function that is right: `name` on a plain float32 input, against torch, first. Otherwise a
    function returning torch.empty_like(x) would score them."""
    __tracebackhide__ = True
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1)) * 100
    labels = probabilities(x.shape, -1) if name == "softmax_cross_entropy" else None
    check(lesson, name, x, -1, labels=labels,
          what=f"This test checks the values before checking {property_}, and they are wrong: {call_for(name, -1, x, labels)}")

@st.composite
def logits_dim_and_labels(draw):
    """(logits, dim, labels): tensor_and_dim's logits and dim, and labels of their shape that sum
    to 1 along dim (one argument: a failing example shows the tensors, not a seed)."""
    logits, dim = draw(tensor_and_dim())
    return logits, dim, probabilities(logits.shape, dim, draw(st.integers(0, 2**16)))


# --- the edge inputs ---------------------------------------------------------------------------

_LARGE = torch.tensor([[1e4, 0.0, -1e4, 5.0], [3.0, 2.0, 1.0, 11.2], [-1e4, -1e4, 1e4 + 1, 0.0]])
_MASKED = torch.tensor([[0.0, -INF, 1.0, 5.0], [-INF, -INF, -INF, -INF], [2.0, -INF, -INF, 1e3]])
EDGE_INPUTS = [  # (what x is, x, dim): for all three functions, in every dtype
    ("", torch.tensor(3.5), 0),
    ("", torch.tensor(-1e4), -1),
    ("", torch.tensor([1e4]), 0),
    ("a single row", torch.tensor([[-3.0, 88.8, 0.5]]), -1),
    ("a single column", torch.tensor([[1.0], [1e3], [-2.0]]), 0),
    ("", torch.tensor([[[5.0, -1e3, 0.0]], [[88.8, 1.0, 2.0]]]), -1),
    ("", torch.empty(0), 0),
    ("empty along dim", torch.empty(3, 0), -1),
    ("empty along dim", torch.empty(2, 0, 4), 1),
    ("empty along another dim", torch.empty(0, 3), -1),
    ("empty along another dim", torch.empty(3, 0), 0),
]
LAYOUT_INPUTS = [  # in every memory layout too (float32 and float16)
    ("entries up to +-1e4", _LARGE, 0),
    ("entries up to +-1e4", _LARGE, -1),
    ("", torch.linspace(-90, 90, 24).reshape(2, 3, 4).sin() * 90, -2),
]
MASKED_INPUTS = [  # softmax and logsumexp only: the cross entropy promises finite logits
    ("rows partly and entirely -inf", _MASKED, -1),
    ("columns partly and entirely -inf", _MASKED, 0),
]
INFINITE_INPUTS = [  # logsumexp only: "one holding +inf gives +inf"
    ("slices holding +inf", torch.tensor([[INF, 0.0, 1.0], [INF, -INF, 0.0], [INF, INF, -INF]]), -1),
]


def check_like_torch(lesson, name, x, dim, what_x, layout):
    """`name` on x: the same result and gradient as torch's."""
    __tracebackhide__ = True
    tol = HALF_TOLERANCE.get(x.dtype)
    note = ", ".join(words for words in (what_x, layout if layout != "contiguous" else "") if words)
    if name == "softmax_cross_entropy":
        # Each slice of labels along dim must sum to 1: an expanded copy may repeat only across another dim.
        labels = probabilities(x.shape, dim).to(x.dtype)
        labels = with_layout(labels, layout) if layout != "expanded" or dim % x.dim() != 0 else labels

        def mine(t, labels=labels):
            return lesson.softmax_cross_entropy(labels, t, dim=dim)

        def theirs(t, labels=labels):
            return reference_cross_entropy(labels.to(t.dtype), t, dim)
    elif name == "logsumexp":
        labels = None

        def mine(t):
            return lesson.logsumexp(t, dim=dim)

        def theirs(t):
            return torch.logsumexp(t, dim)
    else:
        labels = None

        def mine(t):
            return lesson.stable_softmax(t, dim=dim)

        def theirs(t):
            return torch.softmax(t, dim)
    what = call_for(name, dim, x, labels, note)
    watched = () if labels is None else (labels,)
    try:
        # The gradient of sum(softmax) is 0 whatever the code: weighted entries make it say something.
        assert_same_as(checked(mine, name, what, *watched, lesson=lesson), in_float32(theirs), x, what=what, tolerance=tol, grads=True,
                       weighted=name == "stable_softmax", names=("logits",) if labels is not None else ())
        return
    except (AssertionError, pytest.fail.Exception) as exc:
        pitfall = named_pitfall(lesson, name, x, dim, labels)
        if pitfall is None:
            raise
        failure = f"{exc}\n{pitfall}"
    pytest.fail(failure, pytrace=False)


def _column(values):
    return torch.tensor(values).reshape(-1, 1)


CE_LABELS = [  # (what the labels are, beyond their shape and dtype; labels (float32); logits shape; dim)
    ("one distribution for every row", probabilities((4,), -1), (3, 4), -1),
    ("", probabilities((1, 4), -1), (3, 4), -1),
    ("expanded from (1, 4), stride 0", probabilities((1, 4), -1).expand(3, 4), (3, 4), -1),
    ("transposed", probabilities((4, 3), 0).t(), (3, 4), -1),
    ("every other row of a (6, 4) tensor", probabilities((6, 4), -1)[::2], (3, 4), -1),
    ("", probabilities((3, 4), -1), (1, 4), -1),
    ("", probabilities((2, 1, 4), -1), (3, 4), -1),
    ("a column", _column([0.2, 0.3, 0.5]), (3, 4), -2),
]


def non_finite(t: torch.Tensor) -> str:
    """Where `t` is not finite, by kind: "nan at [1, 2], [2, 0] and inf at [0, 1] (3 of 9 entries)"."""
    kinds = [("nan", t.isnan()), ("inf", t == INF), ("-inf", t == -INF)]
    said = []
    for kind, where in kinds:
        at = [str(index) for index in where.nonzero().tolist()]
        if at:
            said.append(f"{kind} at {', '.join(at[:6])}" + (f" and {len(at) - 6} more" if len(at) > 6 else ""))
    count = int((~t.isfinite()).sum())
    return f"{' and '.join(said)} ({count} of {counted(t.numel(), 'entry', 'entries')})"


CONTRACT = """Contract (lesson text, docstrings, hints) -> the tests that check it. "Edge" below is
test_edge_inputs_match_torch: all three functions against torch (values, dtype, shape,
requires_grad, gradients) on 0-d, one-element, size-1-dim, empty, +-1e4 and masked inputs, in
float32/float64/float16/bfloat16, contiguous, transposed, strided and expanded; every call
there is also checked for forbidden ops and for writes into its inputs.
- the lesson text's examples: softmax [1000, 0], logsumexp [1000, 1000] -> test_softmax_of_large_logits, test_logsumexp_of_large_values
- "any shape and any dim, negative ones too" (0-d and one element too) -> test_softmax_matches_torch,
  test_logsumexp_matches_torch, test_cross_entropy_matches_definition, Edge
- `dim: int = -1` in each signature: `dim` left out is the last dim (3 dims, where 1 is another)
  -> test_dim_left_out_is_the_last_dim
- "non-contiguous inputs" (expanded too) -> test_non_contiguous_input, Edge
- "the input is not modified" (labels too; every dtype; a non-leaf that requires grad) -> test_inputs_are_not_modified, Edge
- "float16 and bfloat16 in, the same dtype out" (all three functions) -> test_low_precision_keeps_dtype, Edge,
  test_cross_entropy_labels_that_broadcast_or_are_not_contiguous
- "a masked entry gets probability 0; an all -inf row: softmax nan, logsumexp -inf" -> test_masked_and_fully_masked_rows,
  test_random_masks_match_torch, Edge
- "a +inf logit makes logsumexp +inf" -> test_logsumexp_of_infinities, Edge
- "an empty dim: softmax returns the empty tensor, logsumexp -inf" (empty along another dim too) -> test_empty_dims, Edge
- "c = the largest logit along the dim; one maximum for the whole tensor is not enough" -> test_rows_of_very_different_scale,
  test_softmax_matches_torch
- "log(softmax(x)) is inf at [1000, 0]; the true value is 500, gradient finite" -> test_cross_entropy_of_large_logits_and_its_gradient
- "shift first: 1e4 - (1e4 + 0.693) cancels digits" -> test_cross_entropy_matches_definition, test_rows_of_very_different_scale
- "the tests check gradients as well" (no nan from log(0) or inf - inf) -> test_gradients_match_torch_float64,
  test_gradients_at_extreme_logits_are_finite_and_right, Edge
- "all of it matches PyTorch's built-ins" (dtype, shape, requires_grad included) -> Edge
- "no torch.softmax, torch.log_softmax, torch.logsumexp or F.cross_entropy (in any spelling)" (checked at the aten
  level: torch.special.*, Tensor methods, nn modules, _safe_softmax, logcumsumexp, nll_loss) -> test_does_not_call_the_builtins, Edge
- stable_softmax: "same shape and dtype, entries in [0, 1] summing to 1 along dim" (hint: keepdim) ->
  test_softmax_normalises_along_dim_of_a_square_input, test_softmax_matches_torch
- logsumexp: "`dim` is removed from the shape, in x's dtype" -> test_logsumexp_matches_torch, Edge (size-1 dims)
- softmax_cross_entropy: "-sum(labels * log_softmax(logits)) over dim only: the per-example loss" ->
  test_cross_entropy_matches_definition, Edge
- softmax_cross_entropy: "labels broadcastable with logits; the broadcast shape without dim" (labels strided or
  expanded too) -> test_cross_entropy_labels_that_broadcast_or_are_not_contiguous
- softmax_cross_entropy: "finite for finite logits of any magnitude, with finite gradients" ->
  test_gradients_at_extreme_logits_are_finite_and_right, Edge (+-1e4 in every dtype)
- whole tensors, no Python loop (the speed test's hint) -> test_works_on_whole_tensors_without_a_python_loop,
  test_softmax_works_on_whole_tensors
- runs on the input's device -> test_runs_on_the_inputs_device (CUDA; the meta device is left out: its first op
  imports torch._dynamo, seconds of this lesson's run)
- (the grader's own rule) a property other than the values counts for a right answer only: the tests of
  untouched inputs, no built-ins, no loop and speed check the values first (right_first; a red-team's
  torch.empty_like answer scored 10 of 60 points before)

Pitfalls the lesson names, each named in a failure when the result is what that pitfall computes
and torch's is not (named_pitfall), or when the error is the one it raises (pitfall_raising):
- exp overflows without the shift (inf / inf, log(inf)) -> test_softmax_of_large_logits, test_logsumexp_of_large_values,
  test_softmax_matches_torch, test_logsumexp_matches_torch, Edge
- one maximum for the whole tensor -> test_rows_of_very_different_scale, test_softmax_matches_torch, test_logsumexp_matches_torch
- a reduction without keepdim (a silently wrong square input, or a size error) ->
  test_softmax_normalises_along_dim_of_a_square_input, test_non_contiguous_input, test_softmax_matches_torch
- inf - inf for a fully masked slice or a +inf entry -> test_masked_and_fully_masked_rows, test_random_masks_match_torch,
  test_logsumexp_of_infinities, Edge
- the shift not added back, the shift added without squeezing its dim -> test_logsumexp_of_large_values, test_logsumexp_matches_torch
- log(softmax(x)) (inf loss, nan gradient) -> test_cross_entropy_of_large_logits_and_its_gradient,
  test_gradients_at_extreme_logits_are_finite_and_right, test_cross_entropy_matches_definition, Edge
- x - logsumexp(x) on unshifted logits (cancellation) -> test_cross_entropy_matches_definition, test_rows_of_very_different_scale
- the log-sum-exp term detached (gradient -labels) -> test_gradients_match_torch_float64,
  test_cross_entropy_of_large_logits_and_its_gradient
- a sum over every dim (one loss for the batch) -> test_cross_entropy_matches_definition, test_rows_of_very_different_scale
- computed in float32 and not cast back -> test_low_precision_keeps_dtype, Edge
- the empty case: amax of an empty dim; x.shape[dim] of a 0-d tensor -> test_empty_dims, test_inputs_are_not_modified, Edge
"""
