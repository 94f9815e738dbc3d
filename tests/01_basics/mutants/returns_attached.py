"""Returns the parameter itself, not w.detach(): the caller gets a tensor that still requires grad."""

EXPECT = r"return the coefficients detached"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    adam = torch.optim.Adam([w], lr=lr)
    vander = torch.vander(x.detach(), N=degree + 1)
    for _ in range(steps):
        adam.zero_grad()
        error = vander @ w - y
        (error * error).mean().backward()
        adam.step()
    return w
