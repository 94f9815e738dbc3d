"""t.detach().float().numpy(): float64 and integer tensors come back as float32 copies."""

EXPECT = r"dtype conversion"


def to_numpy(t):
    return t.detach().float().numpy()
