"""MLP puts an activation after the last Linear too: a ReLU output can never be negative."""

EXPECT = r"no activation after the\s+output layer"

from torch import nn

_Reference = MLP  # noqa: F821 (the reference's class)


class MLP(_Reference):
    def __init__(self, sizes, activation=nn.ReLU):
        super().__init__(sizes, activation)
        self.add_module(f"act{len(sizes) - 2}", activation())
