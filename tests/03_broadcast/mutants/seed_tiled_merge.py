"""The seed's first Merge: repeat b along dim 1, concatenate, one Linear (3-D inputs only; 24 MiB of copies)."""
EXPECT = r"tiled copy the lesson warns of"

import torch
import torch.nn.functional as F


def _forward(self, a, b):
    tiled_b = b.repeat([1, a.shape[1], 1])
    c = torch.cat([a, tiled_b], 2)
    weight = torch.cat([self.linear1.weight, self.linear2.weight], 1)
    out = F.linear(c, weight, self.linear1.bias)
    return out if self.activation is None else self.activation(out)


Merge.forward = _forward  # noqa: F821 (Merge comes from the reference module)
