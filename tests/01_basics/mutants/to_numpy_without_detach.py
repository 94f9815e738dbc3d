"""t.numpy() without detach(): fails on a tensor that requires grad."""

EXPECT = r"Hand it t\.detach\(\)"


def to_numpy(t):
    return t.cpu().numpy()
