"""Makes dim=1 the default of logsumexp: left out, `dim` must be -1, the last dim, which is 1 only
for 2-d inputs."""

EXPECT = r"leaves out dim=-1"

import torch


def logsumexp(x, dim=1):
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True).detach()
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
