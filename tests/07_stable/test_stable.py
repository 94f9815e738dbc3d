"""Lesson 07, numerical stability: checks stable.py against PyTorch's own built-ins.

`lesson` is the module under test (the learner's, the reference, or a mutant).

Contract (lesson text, docstrings, hints) -> the tests that check it. "Edge" below is
test_edge_inputs_match_torch: all three functions against torch (values, dtype, shape,
requires_grad, gradients) on 0-d, one-element, size-1-dim, empty, +-1e4 and masked inputs, in
float32/float64/float16/bfloat16, contiguous, transposed, strided and expanded; every call
there is also checked for forbidden ops and for writes into its inputs.
- seed examples: softmax [1000, 0], logsumexp [1000, 1000] -> test_softmax_of_large_logits, test_logsumexp_of_large_values
- "any shape and any dim, negative ones too" (0-d and one element too) -> test_softmax_matches_torch,
  test_logsumexp_matches_torch, test_cross_entropy_matches_definition, Edge
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
"""

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import assert_close, assert_no_loop, assert_speed, describe, grad_of, tolerance
from grader.testing.differential import assert_same_as
from grader.testing.forbid import ops_run
from grader.testing.strategies import ALL_LAYOUTS, FLOATS, tensor_and_dim, with_layout

INF = float("inf")
LOW_PRECISION = (torch.float16, torch.bfloat16)


def probabilities(shape, dim, seed=0) -> torch.Tensor:
    """Labels: random probabilities that sum to 1 along `dim`."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g).softmax(dim)


def reference_cross_entropy(labels, logits, dim):
    return -(labels * torch.log_softmax(logits, dim)).sum(dim)


# The aten ops that compute a softmax, a log-softmax, a logsumexp or a cross entropy, with the
# Python spellings that reach them: the dispatcher sees every alias and method the same way.
FORBIDDEN_OPS = {
    "aten._softmax": "torch.softmax (or F.softmax, Tensor.softmax, torch.special.softmax, nn.Softmax, F.softmin)",
    "aten._safe_softmax": "torch._safe_softmax (the softmax inside scaled_dot_product_attention)",
    "aten._log_softmax": "torch.log_softmax (or F.log_softmax, Tensor.log_softmax, torch.special.log_softmax, "
                         "nn.LogSoftmax, F.cross_entropy, nn.CrossEntropyLoss)",
    "aten.logsumexp": "torch.logsumexp (or Tensor.logsumexp, torch.special.logsumexp)",
    "aten.logcumsumexp": "torch.logcumsumexp (its last entry is the logsumexp)",
    "aten.nll_loss_forward": "F.nll_loss or F.cross_entropy",
    "aten.nll_loss2d_forward": "F.nll_loss or F.cross_entropy",
}


def checked(fn, what, *watched, forbidding=True):
    """`fn` with the checks every call of the lesson's code gets here: it runs none of
    FORBIDDEN_OPS (unless `forbidding` is False), and it leaves its tensor arguments (and the
    `watched` tensors) unchanged."""
    def call(*args, **kwargs):
        __tracebackhide__ = True
        inputs = [t for t in (*args, *watched) if isinstance(t, torch.Tensor)]
        before = [t.detach().clone() for t in inputs]
        with ops_run() as ops:
            result = fn(*args, **kwargs)
        used = ops & FORBIDDEN_OPS.keys() if forbidding else ()
        if used:
            pytest.fail(
                f"{what} calls {'; '.join(FORBIDDEN_OPS[op] for op in sorted(used))}, which this lesson asks you to "
                "write yourself, in any spelling: build it from exp, log, max and sum, as the lesson text shows.",
                pytrace=False,
            )
        for t, old in zip(inputs, before):
            assert_close(t.detach(), old, what=f"an input of {what} after the call (the caller's tensor must not "
                         "change: no in-place `-=` or `sub_` on it; write `x = x - shift`)")
        return result
    return call


def in_float32(fn):
    """`fn` computed in float32 and rounded to the input's dtype for float16 and bfloat16 (the
    most accurate answer in that dtype); `fn` itself for the other dtypes."""
    def call(x, *args):
        if x.dtype in LOW_PRECISION:
            return fn(x.float(), *args).to(x.dtype)
        return fn(x, *args)
    return call


# --- the seed's examples ----------------------------------------------------------------------


@pytest.mark.public
def test_softmax_of_large_logits(lesson):
    out = lesson.stable_softmax(torch.tensor([1000.0, 0.0]))
    assert_close(out, torch.tensor([1.0, 0.0]), what="stable_softmax(tensor([1000., 0.]))")


@pytest.mark.public
def test_logsumexp_of_large_values(lesson):
    out = lesson.logsumexp(torch.tensor([1000.0, 1000.0]))
    expected = torch.tensor(1000.0) + torch.log(torch.tensor(2.0))
    assert_close(out, expected, what="logsumexp(tensor([1000., 1000.]))")


@pytest.mark.public
@pytest.mark.points(2)
def test_cross_entropy_of_large_logits_and_its_gradient(lesson):
    labels = torch.tensor([0.5, 0.5])
    logits = torch.tensor([1000.0, 0.0], requires_grad=True)
    xe = lesson.softmax_cross_entropy(labels, logits)
    what = "softmax_cross_entropy(tensor([0.5, 0.5]), tensor([1000., 0.]))"
    assert_close(xe.detach(), torch.tensor(500.0), what=what)
    assert_close(grad_of(xe, logits, what), torch.tensor([0.5, -0.5]), what=f"the gradient of {what}")


# --- agreement with torch on random and adversarial inputs --------------------------------------


@given(tensor_and_dim())
@example((torch.tensor([[88.8, 0.0], [-1e4, 1e4]]), -1))
@pytest.mark.points(2)
def test_softmax_matches_torch(lesson, case):
    x, dim = case
    assert_close(
        lesson.stable_softmax(x, dim=dim), torch.softmax(x, dim),
        what=f"stable_softmax(x, dim={dim}) for x of {describe(x)}",
    )


@given(tensor_and_dim())
@example((torch.tensor([[1e4, 1e4], [-1e4, -1e4]]), -1))
@pytest.mark.points(2)
def test_logsumexp_matches_torch(lesson, case):
    x, dim = case
    assert_close(
        lesson.logsumexp(x, dim=dim), torch.logsumexp(x, dim),
        what=f"logsumexp(x, dim={dim}) for x of {describe(x)}",
    )


@given(tensor_and_dim(), st.integers(0, 2**16))
@pytest.mark.points(2)
def test_cross_entropy_matches_definition(lesson, case, seed):
    logits, dim = case
    labels = probabilities(logits.shape, dim, seed)
    assert_close(
        lesson.softmax_cross_entropy(labels, logits, dim=dim), reference_cross_entropy(labels, logits, dim),
        what=f"softmax_cross_entropy(labels, logits, dim={dim}) for logits of {describe(logits)}",
    )


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_softmax_normalises_along_dim_of_a_square_input(lesson, dim):
    # A square input is where a missing keepdim broadcasts the sums along the wrong axis.
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(7)) * 3
    out = lesson.stable_softmax(x, dim=dim)
    what = f"stable_softmax(x, dim={dim}) for x of {describe(x)}"
    assert_close(out, torch.softmax(x, dim), what=what)
    assert_close(out.sum(dim), torch.ones(4), what=f"the sums along dim {dim} of {what}")


def test_rows_of_very_different_scale(lesson):
    base = torch.linspace(-3, 3, 6)
    x = torch.stack([base, base - 1e4, base * 1e3 + 5e3, base + 1e4])  # (4, 6)
    assert_close(lesson.stable_softmax(x), torch.softmax(x, -1), what="stable_softmax of rows near 0, -1e4, 5e3 and 1e4")
    assert_close(lesson.logsumexp(x), torch.logsumexp(x, -1), what="logsumexp of rows near 0, -1e4, 5e3 and 1e4")
    labels = probabilities(x.shape, -1)
    assert_close(
        lesson.softmax_cross_entropy(labels, x), reference_cross_entropy(labels, x, -1),
        what="softmax_cross_entropy of rows near 0, -1e4, 5e3 and 1e4",
    )


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_non_contiguous_input(lesson, layout):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 5, generator=g).t() * 50 if layout == "transposed" else torch.randn(10, 5, generator=g)[::2] * 50
    for dim in (0, 1):
        what = f"for x of {describe(x)}, dim={dim}"
        assert_close(lesson.stable_softmax(x, dim), torch.softmax(x, dim), what=f"stable_softmax {what}")
        assert_close(lesson.logsumexp(x, dim), torch.logsumexp(x, dim), what=f"logsumexp {what}")


def varied_calls(lesson, name):
    """(what, the call): `name` on inputs of every dtype, both dims, two layouts, a 0-d one and
    a non-leaf that requires grad (autograd lets code write into that one in place)."""
    base = torch.randn(4, 5, generator=torch.Generator().manual_seed(1)) * 100
    inputs = [(with_layout(base.to(dtype), layout), dim, f"{str(dtype).removeprefix('torch.')}, {layout}")
              for dtype in FLOATS for layout in ("contiguous", "transposed") for dim in (0, -1)]
    inputs += [(base.clone().requires_grad_() * 1, -1, "a non-leaf that requires grad"), (torch.tensor(2.5), 0, "0-d")]
    fn = getattr(lesson, name)
    for x, dim, what_x in inputs:
        if name == "softmax_cross_entropy":
            labels = with_layout(probabilities(x.shape, dim).to(x.dtype), "transposed")
            what = f"softmax_cross_entropy(labels, logits, dim={dim}) for logits of {what_x}"
            yield what, (lambda fn=fn, labels=labels, x=x, dim=dim: fn(labels, x, dim=dim)), (x, labels)
        else:
            yield f"{name}(x, dim={dim}) for x of {what_x}", (lambda fn=fn, x=x, dim=dim: fn(x, dim=dim)), (x,)


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_inputs_are_not_modified(lesson, name):
    for what, call, inputs in varied_calls(lesson, name):
        checked(call, what, *inputs, forbidding=False)()


# --- edge inputs in every dtype and layout: the same as torch, gradients too ---------------------

_LARGE = torch.tensor([[1e4, 0.0, -1e4, 5.0], [3.0, 2.0, 1.0, 11.2], [-1e4, -1e4, 1e4 + 1, 0.0]])
_MASKED = torch.tensor([[0.0, -INF, 1.0, 5.0], [-INF, -INF, -INF, -INF], [2.0, -INF, -INF, 1e3]])
EDGE_INPUTS = [  # (what x is, x, dim): for all three functions, in every dtype
    ("0-d", torch.tensor(3.5), 0),
    ("0-d", torch.tensor(-1e4), -1),
    ("of one element", torch.tensor([1e4]), 0),
    ("a single row", torch.tensor([[-3.0, 88.8, 0.5]]), -1),
    ("a single column", torch.tensor([[1.0], [1e3], [-2.0]]), 0),
    ("with a size-1 dim", torch.tensor([[[5.0, -1e3, 0.0]], [[88.8, 1.0, 2.0]]]), -1),
    ("empty", torch.empty(0), 0),
    ("empty along dim", torch.empty(3, 0), -1),
    ("empty along dim", torch.empty(2, 0, 4), 1),
    ("empty along another dim", torch.empty(0, 3), -1),
    ("empty along another dim", torch.empty(3, 0), 0),
]
LAYOUT_INPUTS = [  # in every memory layout too (float32 and float16)
    ("of logits up to +-1e4", _LARGE, 0),
    ("of logits up to +-1e4", _LARGE, -1),
    ("3-d", torch.linspace(-90, 90, 24).reshape(2, 3, 4).sin() * 90, -2),
]
MASKED_INPUTS = [  # softmax and logsumexp only: the cross entropy promises finite logits
    ("with rows partly and entirely -inf", _MASKED, -1),
    ("with columns partly and entirely -inf", _MASKED, 0),
]
INFINITE_INPUTS = [  # logsumexp only: "one holding +inf gives +inf"
    ("with slices holding +inf", torch.tensor([[INF, 0.0, 1.0], [INF, -INF, 0.0], [INF, INF, -INF]]), -1),
]
# float16 and bfloat16 results are compared with torch's float32 answer rounded to their dtype;
# a correct float16 computation rounds its exp, sum and division to 11 bits (bfloat16: 8).
HALF_TOLERANCE = {torch.float16: {"rtol": 4e-3, "atol": 2e-3}, torch.bfloat16: {"rtol": 2e-2, "atol": 1e-2}}


def check_like_torch(lesson, name, x, dim, what_x, layout):
    """`name` on x: the same result and gradient as torch's."""
    __tracebackhide__ = True
    tol = HALF_TOLERANCE.get(x.dtype)
    if name == "softmax_cross_entropy":
        # Each slice of labels along dim must sum to 1: an expanded copy may repeat only across another dim.
        labels = probabilities(x.shape, dim).to(x.dtype)
        labels = with_layout(labels, layout) if layout != "expanded" or dim % x.dim() != 0 else labels
        what = f"softmax_cross_entropy(labels, logits, dim={dim}) for logits {what_x} ({layout})"

        def mine(t, labels=labels):
            return lesson.softmax_cross_entropy(labels, t, dim=dim)

        def theirs(t, labels=labels):
            return reference_cross_entropy(labels.to(t.dtype), t, dim)
    elif name == "logsumexp":
        what, labels = f"logsumexp(x, dim={dim}) for x {what_x} ({layout})", None

        def mine(t):
            return lesson.logsumexp(t, dim=dim)

        def theirs(t):
            return torch.logsumexp(t, dim)
    else:
        # The gradient of sum(softmax) is 0 whatever the code: weigh the entries so it says something.
        weights = torch.linspace(0.5, 2.0, x.numel()).reshape(x.shape).to(x.dtype)
        what, labels = f"stable_softmax(x, dim={dim}) * weights for x {what_x} ({layout})", None

        def mine(t, weights=weights):
            return lesson.stable_softmax(t, dim=dim) * weights

        def theirs(t, weights=weights):
            return torch.softmax(t, dim) * weights
    watched = () if labels is None else (labels,)
    assert_same_as(checked(mine, what, *watched), in_float32(theirs), x, what=what, tolerance=tol, grads=True)


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


def _column(values):
    return torch.tensor(values).reshape(-1, 1)


CE_LABELS = [  # (what the labels are, labels (float32), logits shape, dim)
    ("of shape (4,): one distribution for every row", probabilities((4,), -1), (3, 4), -1),
    ("of shape (1, 4)", probabilities((1, 4), -1), (3, 4), -1),
    ("expanded from (1, 4) to (3, 4) (stride 0)", probabilities((1, 4), -1).expand(3, 4), (3, 4), -1),
    ("transposed (non-contiguous)", probabilities((4, 3), 0).t(), (3, 4), -1),
    ("every other row of a (6, 4) tensor", probabilities((6, 4), -1)[::2], (3, 4), -1),
    ("of shape (3, 4) for logits of shape (1, 4)", probabilities((3, 4), -1), (1, 4), -1),
    ("of shape (2, 1, 4) for logits of shape (3, 4)", probabilities((2, 1, 4), -1), (3, 4), -1),
    ("a column of shape (3, 1), dim=-2", _column([0.2, 0.3, 0.5]), (3, 4), -2),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_cross_entropy_labels_that_broadcast_or_are_not_contiguous(lesson, dtype):
    # "labels: broadcastable with `logits`"; the result has the broadcast shape without dim.
    logits_values = torch.linspace(-1e4, 1e4, 12).reshape(3, 4) + torch.arange(12.0).reshape(3, 4)
    for what_labels, labels, shape, dim in CE_LABELS:
        labels = labels.to(dtype) if dtype != torch.float32 else labels
        logits = logits_values[: shape[0]].to(dtype)
        what = f"softmax_cross_entropy(labels, logits, dim={dim}) for labels {what_labels}, logits of {describe(logits)}"

        def mine(t, labels=labels, dim=dim):
            return lesson.softmax_cross_entropy(labels, t, dim=dim)

        def theirs(t, labels=labels, dim=dim):
            return reference_cross_entropy(labels.to(t.dtype), t, dim)
        assert_same_as(checked(mine, what, labels), in_float32(theirs), logits, what=what, grads=True,
                       tolerance=HALF_TOLERANCE.get(dtype))


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_works_on_whole_tensors_without_a_python_loop(lesson, name):
    fn = getattr(lesson, name)
    for dim in (-1, 0):
        def call_at(n, dim=dim):
            x = torch.randn((n, 6) if dim == -1 else (6, n), generator=torch.Generator().manual_seed(n))
            labels = probabilities(x.shape, dim)
            return (lambda: fn(labels, x, dim=dim)) if name == "softmax_cross_entropy" else (lambda: fn(x, dim=dim))
        assert_no_loop(
            call_at, 2, 5, what=f"{name}(x, dim={dim})", unit="rows" if dim == -1 else "columns",
            hint="Work on whole tensors: amax, exp, sum and log along `dim` reduce every slice at once.",
        )


# --- masks, infinities and empty dims: match torch --------------------------------------------


@pytest.mark.public
def test_masked_and_fully_masked_rows(lesson):
    x = torch.tensor([[0.0, -INF, 1.0], [-INF, -INF, -INF], [2.0, 2.0, -INF]])
    what = "for rows partly and entirely masked with -inf"
    assert_close(lesson.stable_softmax(x), torch.softmax(x, -1), what=f"stable_softmax {what}")
    assert_close(lesson.logsumexp(x), torch.logsumexp(x, -1), what=f"logsumexp {what}")


@given(tensor_and_dim(masked=True))
@pytest.mark.points(2)
def test_random_masks_match_torch(lesson, case):
    x, dim = case
    what = f"(x, dim={dim}) for x of {describe(x)} with -inf entries"
    assert_close(lesson.stable_softmax(x, dim=dim), torch.softmax(x, dim), what=f"stable_softmax{what}")
    assert_close(lesson.logsumexp(x, dim=dim), torch.logsumexp(x, dim), what=f"logsumexp{what}")


def test_logsumexp_of_infinities(lesson):
    x = torch.tensor([[INF, 0.0], [INF, -INF], [-INF, -INF], [1.0, INF]])
    assert_close(lesson.logsumexp(x), torch.logsumexp(x, -1), what="logsumexp of rows holding +inf or -inf")


@pytest.mark.parametrize(("shape", "dim"), [((0,), 0), ((3, 0), -1), ((0, 3), -1), ((0, 3), 0), ((2, 0, 4), 1)])
def test_empty_dims(lesson, shape, dim):
    x = torch.empty(shape)
    what = f"(x, dim={dim}) for x of shape {shape}"
    assert_close(lesson.stable_softmax(x, dim), torch.softmax(x, dim), what=f"stable_softmax{what}")
    assert_close(lesson.logsumexp(x, dim), torch.logsumexp(x, dim), what=f"logsumexp{what}")


# --- low precision ---------------------------------------------------------------------------


@given(tensor_and_dim(dtypes=LOW_PRECISION, scales=(1.0, 5.0, 1e3)))
@pytest.mark.points(2)
def test_low_precision_keeps_dtype(lesson, case):
    x, dim = case
    tol = tolerance(x.dtype)
    what = f"(x, dim={dim}) for x of {describe(x)}"
    # Compare with torch's float32 result rounded to the input's dtype.
    expected = torch.softmax(x.float(), dim).to(x.dtype)
    assert_close(lesson.stable_softmax(x, dim=dim), expected, what=f"stable_softmax{what}", **tol)
    # logsumexp = shift + log(sum): the log term is rounded to x's dtype before the add, so a
    # result near 0 can be off by a few eps in absolute terms, not only relative ones.
    expected = torch.logsumexp(x.float(), dim).to(x.dtype)
    atol = 4 * torch.finfo(x.dtype).eps
    assert_close(lesson.logsumexp(x, dim=dim), expected, what=f"logsumexp{what}", rtol=tol["rtol"], atol=atol)


# --- gradients -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
@pytest.mark.parametrize("dim", [0, -1])
def test_gradients_match_torch_float64(lesson, name, dim):
    # Random upstream gradients (a vector-Jacobian product, as backward() computes inside a
    # model): the gradient of a plain sum of softmax outputs is 0 whatever the code does.
    x = (torch.randn(3, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 3).requires_grad_()
    labels = probabilities(x.shape, dim).double()
    fn = getattr(lesson, name)
    call = (lambda t: fn(labels, t, dim=dim)) if name == "softmax_cross_entropy" else (lambda t: fn(t, dim=dim))
    reference = {
        "stable_softmax": lambda t: torch.softmax(t, dim),
        "logsumexp": lambda t: torch.logsumexp(t, dim),
        "softmax_cross_entropy": lambda t: reference_cross_entropy(labels, t, dim),
    }[name]
    expected = reference(x)
    upstream = torch.randn(expected.shape, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    what = f"the gradient of {name}(x, dim={dim}) for float64 x of shape (3, 4), times random upstream gradients"
    assert_close(grad_of(call(x), x, what, upstream), grad_of(expected, x, what, upstream), what=what)


@pytest.mark.points(2)
def test_gradients_at_extreme_logits_are_finite_and_right(lesson):
    logits = torch.tensor([[1e4, 0.0, -1e4], [-1e4, -1e4, 1e4 + 1], [3.0, 2.0, 1.0]], requires_grad=True)
    labels = probabilities(logits.shape, -1)
    upstream = torch.randn(3, 3, generator=torch.Generator().manual_seed(2))
    cases = [
        ("stable_softmax", lambda t: lesson.stable_softmax(t), lambda t: torch.softmax(t, -1), upstream),
        ("logsumexp", lambda t: lesson.logsumexp(t), lambda t: torch.logsumexp(t, -1), upstream[:, 0]),
        ("softmax_cross_entropy", lambda t: lesson.softmax_cross_entropy(labels, t),
         lambda t: reference_cross_entropy(labels, t, -1), upstream[:, 0]),
    ]
    for name, fn, reference, up in cases:
        what = f"the gradient of {name} at logits of +-1e4"
        got = grad_of(fn(logits), logits, what, up)
        assert torch.isfinite(got).all(), f"{what} has non-finite entries:\n{got}"
        assert_close(got, grad_of(reference(logits), logits, what, up), what=what)


# --- the lesson's rule: no built-ins -----------------------------------------------------------


@pytest.mark.parametrize("name", ["stable_softmax", "logsumexp", "softmax_cross_entropy"])
def test_does_not_call_the_builtins(lesson, name):
    # At the dispatcher: every alias (torch.special.*, Tensor methods, nn modules, F.*) runs
    # the same aten op. (Every call in test_edge_inputs_match_torch is checked the same way.)
    for what, call, _ in varied_calls(lesson, name):
        checked(call, what)()


# --- speed and devices ------------------------------------------------------------------------


@pytest.mark.speed
def test_softmax_works_on_whole_tensors(lesson):
    x = torch.randn(512, 1024, generator=torch.Generator().manual_seed(6))
    assert_speed(
        lambda: torch.softmax(x, -1), lambda: lesson.stable_softmax(x),
        at_least=0.2, what="stable_softmax on a (512, 1024) tensor", baseline_name="torch.softmax",
        hint="Work on whole tensors along `dim`: no Python loop over rows or elements.",
    )


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    x = torch.randn(8, 16, device="cuda") * 100
    labels = probabilities(x.shape, -1).cuda()
    assert_close(lesson.stable_softmax(x), torch.softmax(x, -1), what="stable_softmax on CUDA")
    assert_close(lesson.logsumexp(x), torch.logsumexp(x, -1), what="logsumexp on CUDA")
    assert_close(
        lesson.softmax_cross_entropy(labels, x), reference_cross_entropy(labels, x, -1),
        what="softmax_cross_entropy on CUDA",
    )
