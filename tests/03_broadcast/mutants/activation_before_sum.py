"""Applies the activation to each projection before adding them: f(pa) + f(pb) is not f(pa + pb)."""
EXPECT = r"activation applied to each projection"


def _forward(self, a, b):
    pa, pb = self.linear1(a), self.linear2(b)
    if self.activation is None:
        return pa + pb
    return self.activation(pa) + self.activation(pb)


Merge.forward = _forward  # noqa: F821
