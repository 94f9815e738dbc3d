"""MLP calls activation() once and reuses that instance in every hidden layer: with nn.PReLU all layers share one slope."""

EXPECT = r"called activation\(\) once; expected no call at all: it has no hidden layer\."

from torch import nn

_Reference = MLP  # noqa: F821 (the reference's class)


class MLP(_Reference):
    def __init__(self, sizes, activation=nn.ReLU):
        shared = activation()
        super().__init__(sizes, lambda: shared)
