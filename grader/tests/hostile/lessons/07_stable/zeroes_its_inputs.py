"""Computes nothing: zeroes its input in place and returns the answer for zeros (red team, round 3: 30/60).

expect: points=0 held=0
in-process: points=22 held=0
"""


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    logits.detach().zero_()
    return torch.full_like(logits, 1.0 / logits.shape[dim]) if logits.dim() else torch.ones_like(logits)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    x.detach().zero_()
    size = x.shape[dim] if x.dim() else 1
    return torch.full_like(x.sum(dim) if x.dim() else x, float(size)).log()
