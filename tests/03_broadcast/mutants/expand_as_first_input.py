"""Stretches b's projection to a's shape with expand_as: breaks when a is the side with the 1s."""


def _forward(self, a, b):
    pa = self.linear1(a)
    c = pa + self.linear2(b).expand_as(pa)
    return c if self.activation is None else self.activation(c)


Merge.forward = _forward  # noqa: F821
