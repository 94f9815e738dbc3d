"""Validates len(sizes) < 1 instead of < 2: breaks "at least two entries, else ValueError" (sizes=[4] builds an empty MLP that returns its input)."""

from collections import OrderedDict

from torch import nn


class MLP(nn.Sequential):
    def __init__(self, sizes, activation=nn.ReLU) -> None:
        sizes = list(sizes)
        if not sizes:
            raise ValueError(f"MLP needs sizes, got sizes={sizes}")
        layers = OrderedDict()
        last = len(sizes) - 2
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers[f"linear{i}"] = nn.Linear(n_in, n_out)
            if i < last:
                layers[f"act{i}"] = activation()
        super().__init__(layers)
