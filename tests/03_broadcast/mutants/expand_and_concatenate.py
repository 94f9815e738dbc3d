"""Right values for any shapes, but expands both inputs and concatenates them: the tiled tensor is built."""
EXPECT = r"tiled copy the lesson warns of"

import torch
import torch.nn.functional as F


def _forward(self, a, b):
    lead = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    c = torch.cat([a.expand(*lead, -1), b.expand(*lead, -1)], -1)
    weight = torch.cat([self.linear1.weight, self.linear2.weight], 1)
    out = F.linear(c, weight, self.linear1.bias)
    return out if self.activation is None else self.activation(out)


Merge.forward = _forward  # noqa: F821
