"""MLP built with nn.Sequential(*layers): the layers are named "0", "1", ..., so the state_dict keys are "0.weight"."""

EXPECT = r"positional-names pitfall"

from torch import nn

_Reference = MLP  # noqa: F821 (the reference's class)


class MLP(nn.Sequential):
    def __init__(self, sizes, activation=nn.ReLU):
        super().__init__(*_Reference(sizes, activation))  # the same layers, without their names
