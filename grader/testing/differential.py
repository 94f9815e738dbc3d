"""Differential checks: the learner's function against its PyTorch counterpart, call for call.

    assert_same_as(lesson.logsumexp, torch.logsumexp, x, 1, what=f"logsumexp(x, dim=1) for x of {describe(x)}")

Compares what a caller can see: the result's values, dtype, shape and device (all of them,
with torch.testing.assert_close), the gradients it gives its floating inputs, and, where the
counterpart refuses the input, that the learner's code refuses it too, with the same exception type.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable

import torch

from grader.quoting import quoted
from grader.testing.compare import assert_close, fail
from grader.testing.errors import reported, returned

# Gradients in half precision: each path rounds its intermediates (exp, the sum, the division)
# to 11 (float16) or 8 (bfloat16) bits, and two correct orders differ by a few of those steps.
_HALF_GRAD_TOLERANCE = MappingProxyType(
    {torch.float16: {"rtol": 1e-2, "atol": 1e-3}, torch.bfloat16: {"rtol": 5e-2, "atol": 1e-2}}
)


def assert_same_as(
    actual: Callable,
    expected: Callable,
    *args,
    what: str,
    grads: bool = False,
    weighted: bool = False,
    tolerance: dict | None = None,
    names: tuple[str, ...] = (),
    **kwargs,
) -> object:
    """`actual(*args, **kwargs)` must behave as `expected(*args, **kwargs)`.

    what: the learner's call and its inputs, every argument named, e.g.
    "logsumexp(x, dim=1) for x of shape (3, 4), float32": each message starts with it as it is.
    Each call gets its own copies of the tensor arguments (detached leaves; `grads=True` makes
    the floating ones require grad and compares the gradients of ``result.sum()``, or with
    `weighted` of the sum of the result's entries times weights from 0.5 to 2.0, for a result
    whose plain sum has the same gradient whatever the code, as a softmax's; a complex result's
    real part). Where `expected` raises, `actual` must raise the same exception type; an error
    `actual` raises where `expected` does not fails with `what` and the learner's lines
    (grader.testing.errors.reported). Returns `actual`'s result.

    A gradient is named by its argument: `names`, the names of `args` in order, else those the
    call in `what` gives them where it lists as many ("logits" for "f(logits, dim=0)"), else
    its place ("argument 2").
    """
    __tracebackhide__ = True
    mine, theirs = _copies(args, grads), _copies(args, grads)
    try:
        want = expected(*theirs, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 (the counterpart's refusal is what to match)
        refusal = f"PyTorch raises {quoted(exc)} for this input"
        try:
            got = actual(*mine, **kwargs)
        except NotImplementedError:
            raise
        except type(exc):
            return None
        except Exception as wrong:  # noqa: BLE001 (any other error is the wrong refusal)
            fail(f"{what} raised {quoted(wrong)}; {refusal}")
        fail(f"{what} returned {returned(got)}; {refusal}")
    with reported(what):
        got = actual(*mine, **kwargs)
    assert_close(got, want, what=what, **(tolerance or {}))
    if grads:
        _compare_grads(got, want, mine, theirs, what, tolerance, weighted, names)
    return got


def _copies(args, grads: bool):
    def copy(a):
        if not isinstance(a, torch.Tensor):
            return a
        c = a.detach()
        if c.device.type != "meta":
            # A copy of the whole storage, viewed as `a` is: the same strides, offset and overlap
            # (a step-2 slice stays one, an expanded view keeps its stride of 0).
            c = torch.empty(0, dtype=a.dtype, device=a.device).set_(
                c.untyped_storage().clone(), c.storage_offset(), c.shape, c.stride()
            )
        if grads and (a.is_floating_point() or a.is_complex()):
            c.requires_grad_()
        return c

    return tuple(copy(a) for a in args)


def _compare_grads(got, want, mine, theirs, what, tolerance, weighted, names) -> None:
    __tracebackhide__ = True
    if not (isinstance(want, torch.Tensor) and want.requires_grad):
        return
    if not (isinstance(got, torch.Tensor) and got.requires_grad):
        fail(
            f"{what}: the result does not require grad, so no gradient reaches the input; PyTorch's does. "
            "Build it from the input with differentiable operations (no .detach(), .item(), .numpy() or torch.no_grad())."
        )
    if want.device.type == "meta":
        return
    summed = ""
    if weighted:
        weights = torch.linspace(0.5, 2.0, want.numel(), dtype=torch.float64).reshape(want.shape).to(want)
        want, got = want * weights, got * weights
        summed = ", its entries weighted from 0.5 to 2.0 and summed,"
    (want.real if want.is_complex() else want).sum().backward()
    (got.real if got.is_complex() else got).sum().backward()
    if not names:  # the call's own names, only where it lists one for each argument given here
        listed = _arguments(what)
        names = tuple(listed) if len(listed) == len(mine) else ()
    for number, (a, b) in enumerate(zip(mine, theirs)):
        if isinstance(b, torch.Tensor) and b.grad is not None:
            # the name the call gives it ("logits"), or its place where it has none ("argument 2")
            which = names[number] if number < len(names) and names[number].isidentifier() else f"argument {number + 1}"
            assert_close(
                a.grad,
                b.grad,
                what=f"the gradient of {what}{summed} with respect to {which} (got: yours, expected: PyTorch's)",
                **(tolerance or _HALF_GRAD_TOLERANCE.get(b.dtype, {})),
            )


def _arguments(what: str) -> list[str]:
    """The positional arguments of the call `what` opens with, as written: ["logits", "labels"]
    for "softmax_cross_entropy(logits, labels) for ...", [] when it opens with no call."""
    opening = what.find("(")
    if opening < 0:
        return []
    arguments, depth, start = [], 0, opening + 1
    for at, char in enumerate(what[start:], start):
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth > 0:
            depth -= 1
        elif char in ",)" and depth == 0:
            arguments.append(what[start:at].strip())
            start = at + 1
            if char == ")":
                break
    return [argument for argument in arguments if "=" not in argument]


def on_another_default_device(call: Callable[[], object], *, what: str, fix: str) -> object:
    """`call()` on CPU inputs with torch's default device set to "meta"; returns its result.

    A tensor the code builds without ``device=`` (``torch.zeros(shape)``, ``torch.tensor(0.0)``)
    lands on meta, away from the inputs, as it would next to inputs on a GPU: the call fails, or
    returns a tensor that is not on the CPU, and the test fails saying so and how to `fix` it.
    Cheaper than inputs on meta, whose first elementwise op imports torch._dynamo (seconds).
    An error the call raises on the usual default device too is not the device's doing: that
    error fails the test with `what` and the learner's lines (grader.testing.errors.reported).
    """
    __tracebackhide__ = True
    try:
        # Not set_default_device(previous) afterwards: that would leave a "cpu" default set,
        # whose mode then sits in front of every op of every later test.
        with torch.device("meta"):
            out = call()
    except NotImplementedError:
        raise
    except RuntimeError as exc:
        out = exc
    if isinstance(out, RuntimeError):
        with reported(what):
            call()  # raises again (then it is not the default device's doing), or the device is to blame
    if isinstance(out, RuntimeError) or (isinstance(out, torch.Tensor) and out.device.type != "cpu"):
        found = f"raised {quoted(out)}" if isinstance(out, RuntimeError) else f"returned a tensor on {out.device}"
        fail(
            f"{what} {found} while torch's default device was 'meta': it builds a tensor on the default "
            "device instead of the inputs' (on a GPU: 'Expected all tensors to be on the same device'). "
            f"{fix}"
        )
    return out
