"""The control of the hidden loops: a plain Python loop over rows, which the op count sees and its test fails.

fails: test_runs_the_same_ops_for_8_or_256_rows
expect: points=88 held=0
in-process: points=87 held=0
"""


def batch_gather(tensor, indices):  # noqa: F811 (the answer's, replaced)
    return torch.stack([tensor[i][indices[i]] for i in range(tensor.size(0))])
