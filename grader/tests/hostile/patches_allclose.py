"""expect: points=4 state=done
in-process: points=0 state=tampered problem=torch.allclose

The answers are right; torch.allclose is replaced all the same. With the checks in a process of
their own, the replacement reaches none of them."""

import torch

torch.allclose = lambda *args, **kwargs: True


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
