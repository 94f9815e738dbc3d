"""Python's built-in sum(x): iterates over the rows (a loop in disguise), returns the int 0 for no rows, never promotes int8."""
EXPECT = r"built-in sum\(\)"


def row_sum(x):
    return sum(x)
