"""Lesson 07, numerical stability: checks stable.py against PyTorch's own built-ins.

`lesson` is the module under test (the learner's, the reference, or a mutant).
"""

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import assert_close, assert_speed, describe, forbid, grad_of, tolerance
from grader.testing.strategies import tensor_and_dim, tensors

INF = float("inf")
LOW_PRECISION = (torch.float16, torch.bfloat16)


def probabilities(shape, dim, seed=0) -> torch.Tensor:
    """Labels: random probabilities that sum to 1 along `dim`."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g).softmax(dim)


def reference_cross_entropy(labels, logits, dim):
    return -(labels * torch.log_softmax(logits, dim)).sum(dim)


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


def test_inputs_are_not_modified(lesson):
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1)) * 100
    before = x.clone()
    lesson.stable_softmax(x)
    assert_close(x, before, what="logits after stable_softmax(logits) (the caller's tensor must not change)")
    lesson.logsumexp(x)
    assert_close(x, before, what="x after logsumexp(x) (the caller's tensor must not change)")
    lesson.softmax_cross_entropy(probabilities(x.shape, -1), x)
    assert_close(x, before, what="logits after softmax_cross_entropy (the caller's tensor must not change)")


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
def test_gradcheck_float64(lesson, name, dim):
    x = (torch.randn(3, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 3).requires_grad_()
    labels = probabilities(x.shape, dim).double()
    fn = getattr(lesson, name)
    call = (lambda t: fn(labels, t, dim=dim)) if name == "softmax_cross_entropy" else (lambda t: fn(t, dim=dim))
    grad_of(call(x), x, f"{name}(x, dim={dim}) for float64 x")  # the clear message first
    assert torch.autograd.gradcheck(call, (x,)), f"{name}: analytic and numerical gradients differ"


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
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4))
    args = (probabilities(x.shape, -1), x) if name == "softmax_cross_entropy" else (x,)
    with forbid(
        "torch.softmax", "torch.log_softmax", "torch.logsumexp", "torch.nn.functional.cross_entropy",
        what=name, why="build it from exp, log, max and sum, as the lesson text shows.",
    ):
        getattr(lesson, name)(*args)


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
