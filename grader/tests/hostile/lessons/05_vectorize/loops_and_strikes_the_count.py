"""A Python loop over rows (map over range: no loop statement for the source read), its ops then cut from the open recorders' public `calls` lists (grader.testing.forbid.OPEN, reached through `from torch import sys`): the op count cannot grow with the rows (red team, round 5).

When found, it passed test_runs_the_same_ops_for_8_or_256_rows, unflagged and not held; only the speed test (2 points) sees the loop. Now the code's process keeps its recorders out of forbid's lists, and the source read flags `from torch import sys`.

expect: points=138 held=1
in-process: points=140 held=0
"""
from torch import sys as _sys

_answer = batch_gather


def _recorders():
    forbid = _sys.modules.get("grader.testing.forbid")
    return list(forbid.OPEN) if forbid is not None else []


def _cut(recorder, mark):
    del recorder.calls[mark:]


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:  # noqa: F811 (the answer's, replaced)
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0] or tensor.shape[0] == 0 \
            or indices.dtype not in (torch.int64, torch.int32) or indices.is_meta:
        return _answer(tensor, indices)  # its errors, and what has no rows to loop over
    n = tensor.shape[1]
    if ((indices < -n) | (indices >= n)).any():
        return _answer(tensor, indices)  # its IndexError
    recorders = _recorders()
    marks = list(map(lambda recorder: len(recorder.calls), recorders))
    out = torch.stack(list(map(lambda i: tensor[i][indices[i]], range(tensor.shape[0]))))
    list(map(_cut, recorders, marks))
    return out
