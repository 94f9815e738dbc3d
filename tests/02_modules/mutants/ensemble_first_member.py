"""Ensemble returns only the first member's output: the others are trained for nothing."""

EXPECT = r"member 0.s output alone"

_Reference = Ensemble  # noqa: F821 (the reference's class)


class Ensemble(_Reference):
    def forward(self, x):
        return self.members[0](x)
