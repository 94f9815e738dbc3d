"""Ensemble returns only the first member's output: the others are trained for nothing."""

_Reference = Ensemble  # noqa: F821 (the reference's class)


class Ensemble(_Reference):
    def forward(self, x):
        return self.members[0](x)
