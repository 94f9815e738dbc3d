"""Clamps the count (empty rows give 0) but still multiplies by the mask: an inf or nan under the mask is nan."""
EXPECT = r"multiplying by the mask"


def masked_mean(x, mask, dim):
    return (x * mask).sum(dim) / mask.sum(dim).clamp_min(1)
