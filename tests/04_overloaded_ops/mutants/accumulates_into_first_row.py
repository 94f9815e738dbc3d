"""Starts the total at x[0], a view of the caller's tensor: `total += row` overwrites the caller's first row."""
EXPECT = r"running total started at x\[0\]"


def row_sum(x):
    total = x[0]
    for row in x[1:]:
        total += row
    return total
