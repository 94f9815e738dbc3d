"""(x * mask).sum / mask.sum: nan for a row with no True (0 / 0) and for an inf or nan under the mask (inf * 0)."""
EXPECT = r"multiplying by the mask"


def masked_mean(x, mask, dim):
    return (x * mask).sum(dim) / mask.sum(dim)
