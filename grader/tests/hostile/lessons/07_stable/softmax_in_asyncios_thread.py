"""torch.softmax in asyncio's worker thread, looked up by attrgetter on a name built at run time (red team, round 3).

test: test_does_not_call_the_builtins[stable_softmax]
flag: the source reaches past what its answer needs (stable.py:
flag: stable_softmax spent
flag: ms of CPU in another thread during a call
expect: points=42 held=21
in-process: points=62 held=0
"""
import asyncio
import operator


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    softmax = operator.attrgetter("soft" + "max")(torch)
    return asyncio.run(asyncio.to_thread(softmax, logits, dim))
