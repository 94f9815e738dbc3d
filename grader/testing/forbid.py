"""Fail a test when the learner's code calls a built-in the lesson asks them to write.

Caught at PyTorch's dispatcher, below every Python spelling: ``torch.softmax``,
``F.softmax``, ``x.softmax``, ``nn.Softmax`` and ``torch.special.softmax`` all run the same
``aten._softmax``, so an alias or a method call cannot slip through.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from typing import Callable

from torch.utils._python_dispatch import TorchDispatchMode

# Public name -> the aten ops it runs (every alias and method spelling runs the same ones).
BUILTINS: dict[str, tuple[str, ...]] = {
    "torch.softmax": ("aten._softmax",),
    "torch.log_softmax": ("aten._log_softmax",),
    "torch.logsumexp": ("aten.logsumexp",),
    "torch.nn.functional.cross_entropy": ("aten._log_softmax", "aten.nll_loss_forward", "aten.nll_loss2d_forward"),
    "torch.gather": ("aten.gather",),
    "torch.Tensor.unfold": ("aten.unfold",),
}


class _Counter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


@contextmanager
def forbid(*names: str, what: str, why: str):
    """Fail if the code in the block runs any of the built-ins `names` (keys of BUILTINS).

    `what` names the learner's call; `why` says what the lesson asks for instead.
    """
    __tracebackhide__ = True
    unknown = [n for n in names if n not in BUILTINS]
    if unknown:
        raise ValueError(f"forbid() does not know {unknown}; add them to grader.testing.forbid.BUILTINS")
    counter = _Counter()
    with counter:
        yield
    used = [n for n in names if set(BUILTINS[n]) & counter.ops.keys()]
    if used:
        raise AssertionError(
            f"{what} calls {' or '.join(used)} (or an alias of it), which this lesson asks you "
            f"to write yourself: {why}"
        )


def count_ops(fn: Callable[[], object]) -> Counter[str]:
    """How many times `fn()` runs each aten op, e.g. ``Counter({"aten.select": 500, ...})``.

    A deterministic sign of a Python loop over a tensor: the count grows with the input's
    size, where vectorised code runs the same few ops at any size. Unlike a timing, it does not
    move with the load on the machine.
    """
    counter = _Counter()
    with counter:
        fn()
    return counter.ops


def assert_no_loop(call_at: Callable[[int], Callable[[], object]], small: int, big: int, *,
                   what: str, unit: str, hint: str) -> None:
    """Fail if the code runs any aten op more often at size `big` than at size `small`.

    `call_at(n)` builds the inputs for size n and returns the call to count, so building them
    is not counted. Vectorised code runs the same ops at any size; a Python loop over `unit`
    (rows, points, ...) runs some of them once per item. `hint` says how to batch instead.
    """
    __tracebackhide__ = True
    ops_small, ops_big = count_ops(call_at(small)), count_ops(call_at(big))
    grew = sorted(op for op in ops_big if ops_big[op] > ops_small[op])
    if grew:
        raise AssertionError(
            f"{what} ran {sum(ops_small.values())} tensor ops for {small} {unit} but "
            f"{sum(ops_big.values())} for {big} ({', '.join(f'{op}: {ops_small[op]} -> {ops_big[op]}' for op in grew)}): "
            f"the sign of a Python loop over the {unit}. {hint}"
        )
