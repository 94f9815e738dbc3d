"""expect: points=0 state=tampered problem=torch.allclose"""

import torch

torch.allclose = lambda *args, **kwargs: True


def add(a, b):
    return a + b


def scale(x, k=2):
    return x * k
