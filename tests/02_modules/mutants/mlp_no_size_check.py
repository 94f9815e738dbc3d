"""MLP does not check sizes: MLP([4]) silently builds an empty Sequential, which returns its input unchanged."""

from torch import nn

_Reference = MLP  # noqa: F821 (the reference's class)


class MLP(_Reference):
    def __init__(self, sizes, activation=nn.ReLU):
        if len(sizes) < 2:
            nn.Sequential.__init__(self)
        else:
            super().__init__(sizes, activation)
