"""Creates the activation once and reuses it: breaks "called with no arguments once per hidden layer, so each activation is its own instance (with its own parameters, if any)". A checkpoint with a slope per PReLU then loads without an error (strict sees every key) into one shared slope: that test must name the pitfall too, not only show the numbers."""

EXPECT = r"(?s)^the model after MLP\(\(3, 5, 4, 2\), activation=nn\.PReLU\)\.load_state_dict.*This is the shared-activation pitfall"

from collections import OrderedDict

from torch import nn


class MLP(nn.Sequential):
    def __init__(self, sizes, activation=nn.ReLU) -> None:
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"MLP needs at least two sizes, got sizes={sizes}")
        act = activation()  # stateless for ReLU anyway
        layers = OrderedDict()
        last = len(sizes) - 2
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers[f"linear{i}"] = nn.Linear(n_in, n_out)
            if i < last:
                layers[f"act{i}"] = act
        super().__init__(layers)
