"""|x|^2 - 2 x.y + |y|^2 as is: tiny negatives for coincident points, digits cancelled far from the origin."""
EXPECT = r"clamp the result at 0"


def pairwise_sq_dist(x, y):
    return x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)
