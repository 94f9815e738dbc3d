"""tensor[:, indices]: every row gets every row's picks, shape [B, B, K..., *D]."""

EXPECT = r"tensor\[:, indices\]"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    return tensor[:, indices]
