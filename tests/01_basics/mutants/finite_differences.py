"""Central finite differences instead of autograd: one fn call per element and only ~3 right digits in float32."""

import torch


def derivative(fn, x):
    if not (x.is_floating_point() or x.is_complex()):
        raise TypeError(f"gradients need floating point, got {x.dtype}")
    h = 1e-3
    base = x.detach().flatten()
    grad = torch.empty_like(base)
    with torch.no_grad():
        for i in range(base.numel()):
            step = torch.zeros_like(base)
            step[i] = h
            grad[i] = (fn((base + step).view_as(x)) - fn((base - step).view_as(x))) / (2 * h)
    return grad.view_as(x)
