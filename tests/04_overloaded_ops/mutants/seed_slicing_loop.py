"""The seed's first row sum: `z += x[i]` for every row, one select and one add each (right values, ~100x slower)."""
EXPECT = r"loop over the rows"


def row_sum(x):
    z = x.new_zeros(x.shape[1:])
    for i in range(x.shape[0]):
        z += x[i]
    return z
