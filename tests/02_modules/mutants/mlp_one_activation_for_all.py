"""Makes one activation before the loop and puts it after every hidden Linear: a checkpoint with a slope per PReLU
loads without an error (strict sees every key) into one shared slope. That test must name the shared-activation
pitfall too, not only show the numbers."""

EXPECT = r"(?s)^the model after MLP\(\(3, 5, 4, 2\), activation=nn\.PReLU\)\.load_state_dict.*This is the shared-activation pitfall"

from collections import OrderedDict

from torch import nn


class MLP(nn.Sequential):
    def __init__(self, sizes, activation=nn.ReLU) -> None:
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"MLP needs at least two sizes, got {sizes}")
        act = activation()
        layers = OrderedDict()
        for i in range(len(sizes) - 1):
            layers[f"linear{i}"] = nn.Linear(sizes[i], sizes[i + 1])
            if i < len(sizes) - 2:
                layers[f"act{i}"] = act
        super().__init__(layers)
