"""x[mask].mean(): boolean indexing flattens, so one number comes back for the whole tensor and `dim` is ignored."""

EXPECT = r"boolean indexing flattens"


def masked_mean(x, mask, dim):
    return x[mask].mean()
