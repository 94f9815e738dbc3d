"""Plain SGD at lr 0.1 instead of Adam: the x^2 column reaches 100, every step overshoots more, and the fit diverges to inf/nan."""

EXPECT = r"[Uu]se torch\.optim\.Adam"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    w = x.new_zeros(degree + 1).requires_grad_()
    sgd = torch.optim.SGD([w], lr=lr)
    for _ in range(steps):
        sgd.zero_grad()
        prediction = sum(c * x**p for c, p in zip(w, range(degree, -1, -1)))
        torch.nn.functional.mse_loss(prediction, y).backward()
        sgd.step()
    return w.detach()
