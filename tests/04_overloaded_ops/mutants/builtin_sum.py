"""Python's built-in sum(x): iterates over the rows (a loop in disguise), returns the int 0 for no rows, never promotes int8."""


def row_sum(x):
    return sum(x)
