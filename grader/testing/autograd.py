"""Gradients for tests, with a message that says why there is none."""

from __future__ import annotations

import torch


def grad_of(
    output: torch.Tensor, inputs: torch.Tensor, what: str, upstream: torch.Tensor | None = None
) -> torch.Tensor:
    """d(sum(output * upstream)) / d(inputs); `upstream` defaults to ones.

    Fails with a clear message, not autograd's "element 0 of tensors does not require grad",
    when the learner's code cut `output` off from the graph.
    """
    __tracebackhide__ = True
    if not getattr(output, "requires_grad", False):
        raise AssertionError(
            f"{what}: the result does not track gradients. Stay in torch operations: .detach(), "
            ".numpy(), .item() or torch.no_grad() cut the result off from autograd."
        )
    # The gradient of the scalar sum(output * upstream), not autograd.grad(output, inputs,
    # upstream): the same vector-Jacobian product, without the import of torch's symbolic
    # shapes (and sympy) that passing grad_outputs costs on first use (docs/PERFORMANCE.md, section 1).
    scalar = output.sum() if upstream is None else (output * upstream).sum()
    (grad,) = torch.autograd.grad(scalar, inputs)
    return grad
