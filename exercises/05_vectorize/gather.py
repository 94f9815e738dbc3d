"""Lesson 05: vectorise. A batch gather in one indexing call instead of a loop over rows.

Why it matters
--------------
PyTorch is fast on big tensors and slow on many small ones. Every call pays a fixed cost in
Python and in the dispatcher (a few microseconds) before any arithmetic happens. On a
[512, 1000, 16] tensor, that cost is noise for one call on the whole batch, and it is the
entire runtime of a loop that makes three tiny calls per row. Batch the operation: let one
call do the work of the loop.

The operation: batch gather
---------------------------
Each row i of a batch picks its own entries along dim 1:

    out[i, ...] = tensor[i, indices[i, ...]]

with tensor of shape [B, N, *D] and integer indices of shape [B] (one pick per row) or
[B, K...] (several), giving [B, *indices.shape[1:], *D]. Think of a batch of sentences whose
token vectors you want at positions that differ from sentence to sentence. The loop is easy
to write, and slow:

    out = torch.stack([tensor[i][indices[i]] for i in range(B)])

Advanced indexing
-----------------
Index a tensor with several integer tensors at once and PyTorch pairs them up: the result at
position p is tensor[first[p], second[p]]. The index tensors broadcast against each other
like the operands of `+` (lined up from the right, a size 1 stretched), and the result takes
their broadcast shape. A negative entry counts from the end of its dim, as in Python. On a
small grid with hand-made index tensors:

    >>> grid = torch.arange(12).reshape(3, 4)
    >>> grid[torch.tensor([0, 2, 2]), torch.tensor([1, 0, -1])]  # pairs (0, 1), (2, 0), (2, -1)
    tensor([ 1,  8, 11])
    >>> grid[torch.tensor([[0], [2]]), torch.tensor([1, 3])]     # [2, 1] against [2]: a [2, 2] grid
    tensor([[ 1,  3],
            [ 9, 11]])
    >>> grid[torch.tensor([0, 2]), torch.tensor([[1], [3]])]     # [2] against [2, 1]: also [2, 2]
    tensor([[ 1,  9],
            [ 3, 11]])

The last two differ only in which index tensor got the axis of size 1, and the result is
transposed. That is the trap for batch_gather: a tensor of row numbers lines up with the
LAST axes of `indices`, not the first, unless its shape says otherwise; with the wrong shape
you get an error, or (when two sizes happen to agree) silently wrong rows. A second trap:
a `:` keeps every row for every index, so tensor[:, indices] gives every row every row's
picks, [B, B, K..., *D].

What about TorchScript?
-----------------------
Older advice says: when you cannot batch, put @torch.jit.script on the loop. TorchScript is
deprecated in current PyTorch, and it never removed the loop: the scripted function still
runs one select and one index per row, and we measured it at 0.9-1.2x the speed of the plain
Python loop. (torch.compile, its successor, is a topic of its own; here the answer is the
batched operation, written by hand.)

The flat-offset trick, and what it gets wrong
---------------------------------------------
A well-known alternative merges the first two dims into one of size B*N and adds i*N to the
indices of row i, so that one flat index finds entry indices[i] of row i. It is right for
indices in [0, N), but every detail matters:
- create the offset on the input's device: a hard-coded .cuda() crashes on a machine
  without a GPU, and a tensor made without `device=` lands on the CPU whatever the input;
- the offset step is N, the size of dim 1 (not B, not a size from D);
- a negative index stops meaning "from the end of row i": -1 + i*N is the last entry of
  row i-1, and an index >= N reads row i+1. Both give plausible numbers and no error;
- .view(B * N, ...) fails on non-contiguous input (a transposed or sliced tensor);
  .reshape copies when it must.

Out-of-range indices
--------------------
PyTorch's own error says "index 12 is out of bounds for dimension 1 with size 10", but not
which of 512 rows holds it. batch_gather checks every index first, with whole-tensor
comparisons (no Python loop over rows or over values), and names the first bad position.
Wrapping with `indices % N` is no substitute: it maps negative indices into range, and an
out-of-range 12 too, silently. A tensor on the `meta` device has a shape but no values, so
there is nothing to check: skip the check there.

What the tests expect
---------------------
- out[i, ...] == tensor[i, indices[i, ...]] for tensor [B, N, *D] (D empty or several dims)
  and indices [B] or [B, K...]: the result has shape [B, *indices.shape[1:], *D];
- the dtype and device of `tensor`, for float32/float64/float16/bfloat16, integers, bool and
  complex, on any device, `meta` included (shapes without values: no range check there);
  int64 and int32 indices;
- a negative index counts from the end of its own row, as in Python (-1 is entry N-1);
- an index >= N or < -N raises IndexError naming the row, the value and N, e.g.
  "batch_gather: indices[3, 1] holds 12, out of range for dimension 1 of size 10 (row 3)";
- indices of another dtype (float, bool, uint8, ...) raise TypeError (PyTorch would read a
  bool or uint8 tensor as a mask, not as positions);
- shapes that do not fit ([B, N, ...] and [B, ...] with the same B) raise ValueError naming
  both: indices of batch size 1 would otherwise broadcast silently over every row;
- the checks come in that order: shapes, then the index dtype, then the range;
- empty sizes give empty results of the right shape (B=0, K=0, a 0 in D); N=0 has no valid
  index, so any index there is out of range;
- non-contiguous tensors and indices work; neither input is modified;
- gradients flow back to `tensor`, and repeated indices add up;
- no Python loop over B: as many tensor ops for B=256 as for B=8, and at least 5x faster
  than the loop at [512, 1000, 16]; with its checks, at most 4x slower than the bare gather
  (262144 indices), which a Python loop over the index values is not.

Check your work with:  pytest exercises/05_vectorize
"""

import torch


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """Row i picks its own entries along dim 1: out[i, ...] = tensor[i, indices[i, ...]].

    tensor: shape [B, N, *D] (D may be empty), any dtype, any strides, on any device (on
        `meta`, which holds no values, there is no range to check).
    indices: int64 or int32, shape [B] or [B, K...], on tensor's device, values in [-N, N);
        a negative value counts from the end of its own row.
    Returns a new tensor of shape [B, *indices.shape[1:], *D], with tensor's dtype and
    device. Gradients flow back to `tensor` (repeated indices add up); neither input is
    modified. No Python loop over B.

    Raises, checked in this order: ValueError (naming both shapes) unless tensor has >= 2
    dims, indices >= 1 and their first dims agree; TypeError for indices that are not int64
    or int32; IndexError for a value >= N or < -N, naming its position, value, N and row,
    for the first bad position in row-major order:
    "batch_gather: indices[3, 1] holds 12, out of range for dimension 1 of size 10 (row 3)".
    """
    # TODO: return the batch gather described above: shape [B, *indices.shape[1:], *D],
    #       tensor's dtype and device, a negative index counting from the end of its own row,
    #       gradients reaching `tensor`, neither input changed.
    #       Refuse bad input first, in this order: shapes that do not fit (ValueError), an
    #       index dtype other than int64/int32 (TypeError), any index >= N or < -N (IndexError
    #       in the docstring's format, naming the first bad position; a meta tensor has no
    #       values to check).
    #       Constraints: no Python loop, neither over the rows nor over the index values; the
    #       same code for indices [B] and [B, K1, K2, ...] and on every device.
    raise NotImplementedError
