"""The control of the hidden built-ins: torch.softmax called plainly, which the recorder sees and its test fails.

fails: test_does_not_call_the_builtins[stable_softmax]
expect: points=58 held=0
in-process: points=57 held=0
"""


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    return torch.softmax(logits, dim)
