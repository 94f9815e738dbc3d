"""t.detach().clone().numpy(): a copy, so a write through the array never reaches the tensor."""

EXPECT = r"is a copy"


def to_numpy(t):
    return t.detach().clone().numpy()
