"""What a call allocates, seen at PyTorch's dispatcher: memory, not time.

Time is a poor signal for "does not materialise a big intermediate" (it moves with the load
on a shared machine); bytes allocated do not. On lesson 03's merge the tiled version allocates
a tiled copy in `aten.cat`, the broadcast one nothing bigger than its output (the figures, and
how they were measured: docs/MEASUREMENTS.md, "Memory, not time, for broadcasting").

Every aten op the call runs is watched; an output whose storage none of the op's inputs
owns is memory that op allocated (a view, an in-place op or `out=` allocates nothing).
On the merges of lesson 03 these are the figures torch.profiler's memory events gave, to
the 0.1 MiB, without paying for the profiler's start-up in every lesson run.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch
from torch.utils._pytree import tree_flatten

from grader.testing.forbid import _Recorder

MiB = 2**20


class Allocation(NamedTuple):
    op: str  # the aten op that allocated, e.g. "aten.cat"
    nbytes: int


def _storages(tree) -> list[torch.UntypedStorage]:
    return [leaf.untyped_storage() for leaf in tree_flatten(tree)[0] if isinstance(leaf, torch.Tensor)]


class _AllocationRecorder(_Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[Allocation] = []

    def _record(self, op: str, inputs, out) -> None:
        owned = {storage.data_ptr() for storage in _storages(inputs)}
        for storage in _storages(out):
            if storage.nbytes() and storage.data_ptr() not in owned:
                owned.add(storage.data_ptr())  # outputs sharing one new storage count once
                self.found.append(Allocation(op, storage.nbytes()))


def allocations(fn: Callable[[], object]) -> list[Allocation]:
    """The memory each aten op allocated while `fn()` runs (without autograd), largest first."""
    recorder = _AllocationRecorder()
    with torch.no_grad(), recorder:
        fn()
    return sorted(recorder.found, key=lambda a: -a.nbytes)


def format_allocations(found: list[Allocation], limit: int = 5) -> str:
    """'aten.cat 16.0 MiB, aten.addmm 8.0 MiB, ...' for failure messages."""
    shown = ", ".join(f"{a.op} {a.nbytes / MiB:.1f} MiB" for a in found[:limit])
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return (shown + more) or "nothing"
