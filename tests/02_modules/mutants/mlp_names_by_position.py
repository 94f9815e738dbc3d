"""Numbers layers by their position in the Sequential: breaks "linear0, act0, linear1, act1, linear2" naming (gives linear0, act1, linear2, act3, linear4, so state_dict keys differ)."""

from collections import OrderedDict

from torch import nn


class MLP(nn.Sequential):
    def __init__(self, sizes, activation=nn.ReLU) -> None:
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"MLP needs at least two sizes, got sizes={sizes}")
        layers = OrderedDict()
        n_linear = len(sizes) - 1
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers[f"linear{len(layers)}"] = nn.Linear(n_in, n_out)
            if i < n_linear - 1:
                layers[f"act{len(layers)}"] = activation()
        super().__init__(layers)
