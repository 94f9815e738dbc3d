"""A right softmax that sorts every row for nothing: far too slow for the speed test (the control of softmax_when_timed_after_the_recorded_call).

expect: points=62 held=0
in-process: points=62 held=0
"""
_answer = stable_softmax


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    logits.sort(dim)  # wasted work: about 80x slower than torch.softmax on a (512, 1024) tensor
    return _answer(logits, dim)
