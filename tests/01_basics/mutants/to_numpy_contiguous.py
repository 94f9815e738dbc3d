"""t.detach().contiguous().numpy(): fine for contiguous tensors, a silent copy of every non-contiguous view."""

EXPECT = r"\.contiguous\(\) pitfall"


def to_numpy(t):
    return t.detach().contiguous().numpy()
