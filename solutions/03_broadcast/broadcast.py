"""Lesson 03: broadcasting, the good and the ugly.

The rules
---------
An elementwise op on two tensors of different shapes lines their shapes up from the RIGHT.
Each pair of sizes must be equal, or one of them must be 1; a missing leading dim counts as 1.
A 1 stretches to the other size; any other mismatch is an error:

    [5, 3, 5]
    [   1, 5]      ->  [5, 3, 5]
    [3, 1]  +  [2]  ->  [3, 2]         ([2] is read as [1, 2], not as [2, 1])
    [3, 2]  +  [4]  ->  error          (2 against 4)

A size-1 dim is stretched to the other size without copying anything: the stretched tensor
is a view whose stride along that dim is 0, so every position reads the same memory.

The good: implicit tiling, without the tiles
--------------------------------------------
A common pattern joins per-item features `a` [B, N, Fa] with per-batch features `b`
[B, 1, Fb]: tile `b` N times, concatenate, apply a Linear layer:

    c = torch.cat([a, b.repeat(1, N, 1)], -1)     # [B, N, Fa + Fb], a full copy of b N times
    out = linear(c)

On [64, 128, 256] inputs that allocates 24 MiB for `repeat` and `cat` alone, to hold N copies
of numbers that are already in `b`. Broadcasting reads them N times instead, for free. The
idea on a smaller case, a per-batch offset added to every item of its batch:

    items = torch.randn(64, 128, 32)     # [B, N, F]
    offset = torch.randn(64, 1, 32)      # [B, 1, F]: one row per batch
    items + offset                       # [B, N, F]: each batch's row is read N times, never copied

A Linear layer is linear: ask what it does to a concatenation, and the tiling can be left to
broadcasting, so that nothing of size N * Fb is ever built. Written that way, the same code
works for any leading dims that broadcast, which is what makes it a good `Merge` module.
Three ways to lose that:

- a tiled copy under another name: `expand` is free, but a Linear layer (or `cat`) fed an
  expanded tensor writes out every one of its rows;
- an in-place `+=`: it writes into the tensor on its left, whose shape cannot grow, so it
  fails as soon as the left side is the one with the 1s;
- an activation in the wrong place: f(u) + f(v) is not f(u + v).

Pairwise distances are broadcasting's other classic: x [N, D] against y [M, D] gives an
[N, M] table, with no loop, by turning one side into a column and the other into a row. The
idea on 1-d tensors, an addition table:

    >>> torch.arange(3)[:, None] + torch.arange(4)[None, :]     # [3, 1] + [1, 4] -> [3, 4]
    tensor([[0, 1, 2, 3],
            [1, 2, 3, 4],
            [2, 3, 4, 5]])

With D coordinates per point, the difference of every pair is an [N, M, D] intermediate,
though. |x - y|^2 = |x|^2 - 2 x.y + |y|^2 needs only [N, M] and a matrix product, but it
subtracts large, nearly equal numbers: for points far from the origin (coordinates near 1e4,
float32) the results are off by up to hundreds, a point's distance to itself included, and
even near the origin rounding leaves tiny NEGATIVE squares where the answer is 0. The formula
is fine; its float32 arithmetic is what needs care.

The ugly: silent stretching
---------------------------
Broadcasting never complains when the shapes *happen* to fit:

    >>> a = torch.tensor([[1.], [2.]])        # [2, 1]
    >>> b = torch.tensor([1., 2.])            # [2], read as [1, 2]
    >>> torch.sum(a + b)                      # you meant [2, 3], summing to 6
    tensor(12.)

`a + b` is [[2, 3], [3, 4]], a [2, 2] table, and a sum over every dim hides it (a sum over
dim 0 would return [5, 7], a shape that makes the bug visible). `x.squeeze()` is the same trap
the other way round: it drops EVERY size-1 dim, a batch of one or the 1 that was there to
broadcast, after which the rest lines up against the wrong dims.

What the tests expect
---------------------
- `Merge` equals Linear(cat(a, tiled b)) followed by the activation, with the same weights,
  for any broadcastable leading dims (the example shapes a [5, 3, 5], b [5, 1, 6] first), with
  the same gradients for both layers and both inputs; it calls the activation once per
  forward; and it never allocates anything the size of the tiled input (measured with the
  PyTorch profiler).
- `broadcast_shape` agrees with `torch.broadcast_shapes` on every pair of shapes (random ones
  of any rank, any sizes, 0 and sizes far too big to allocate included), returns a tuple of
  Python ints, and raises a ValueError whose message names both shapes when they don't
  broadcast. It is written by hand from the rules above: no tensors, no NumPy arrays, no torch
  or NumPy broadcasting helpers.
- `pairwise_sq_dist` equals the loop definition up to float rounding, for any N, M, D and
  memory layout, in x's dtype; it is never negative (not even by rounding), stays accurate for
  float32 points near 1e4, and runs no Python loop (the number of ops it runs is counted, and
  it must be at least 5x faster than a loop over the rows of x).

Check your work with:  pytest exercises/03_broadcast
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn


class Merge(nn.Module):
    """Linear(cat(a, b)) over broadcast leading dims, without building the concatenation.

    a: [*A, in_features1], b: [*B, in_features2], with A and B broadcastable (either may hold
    the 1s, ranks may differ); a, b and the module's parameters share one dtype and device.
    Returns activation(Linear(cat(a, b tiled))) as [*broadcast(A, B), out_features], in that
    dtype, with the tiled Linear's weight the two layers' weights side by side.

    The tests read these attributes: `linear1` = nn.Linear(in_features1, out_features),
    `linear2` = nn.Linear(in_features2, out_features) (one of the two may leave out its bias,
    not both: two biases add up to one), and `activation` (a callable such as torch.relu or
    nn.ReLU(), called once per forward, or None for no activation, the default).
    """

    def __init__(self, in_features1: int, in_features2: int, out_features: int,
                 activation: Callable[[torch.Tensor], torch.Tensor] | None = None) -> None:
        super().__init__()
        # TODO: build the two layers and keep the activation, under the attribute names the
        #       docstring gives, registered with the module (its .parameters(), .to() and
        #       optimizers must see both layers).
        ### BEGIN SOLUTION
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features, bias=False)  # linear1's bias is enough
        self.activation = activation
        ### END SOLUTION

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # TODO: return what Linear(cat(a, b tiled)) followed by the activation (none when it
        #       is None) returns, for any broadcastable leading dims, in the inputs' dtype, with
        #       gradients to both layers and both inputs, but without ever building the
        #       concatenation or a tiled copy of a or b (the tests measure what it allocates).
        ### BEGIN SOLUTION
        c = self.linear1(a) + self.linear2(b)
        return c if self.activation is None else self.activation(c)
        ### END SOLUTION


def broadcast_shape(shape_a: Sequence[int], shape_b: Sequence[int]) -> tuple[int, ...]:
    """The shape that an elementwise op on tensors of these shapes returns.

    shape_a, shape_b: tuples, lists or torch.Size of non-negative ints. Returns a tuple of
    ints. Raises ValueError, with both shapes in the message, when they don't broadcast.
    Written from the rules by hand: no tensors and no library broadcasting helpers.
    """
    # TODO: return the broadcast shape as a tuple of Python ints, from the rules in the
    #       lesson text applied to the sizes alone (no tensors, no arrays, no library
    #       helper: the sizes may be too big to allocate), for any pair of shapes; raise a
    #       ValueError naming both shapes when they don't broadcast.
    ### BEGIN SOLUTION
    a, b = tuple(shape_a), tuple(shape_b)
    out = []
    for i in range(1, max(len(a), len(b)) + 1):  # from the right: -1, -2, ...
        size_a = a[-i] if i <= len(a) else 1
        size_b = b[-i] if i <= len(b) else 1
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(
                f"shapes {a} and {b} do not broadcast: dim {-i} has sizes {size_a} and {size_b}, "
                "and neither is 1"
            )
        out.append(size_b if size_a == 1 else size_a)  # 1 against n (even 0) gives n
    return tuple(reversed(out))
    ### END SOLUTION


def pairwise_sq_dist(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances between every row of x and every row of y.

    x: [N, D], y: [M, D], float, same dtype and device. Returns out [N, M] in x's dtype with
    out[i, j] = sum_k (x[i, k] - y[j, k]) ** 2 up to float rounding, also for points far from
    the origin; never negative. x and y are left unchanged. No Python loop.
    """
    # TODO: return the [N, M] table in x's dtype, with no Python loop over points or
    #       coordinates, for any N, M, D and layout: never negative, and accurate for float32
    #       points near 1e4. x and y stay unchanged; anything new lives on their device.
    ### BEGIN SOLUTION
    # Moving both sets by the same vector changes no distance, and near the origin the
    # expansion below no longer subtracts huge, nearly equal numbers.
    center = torch.cat([x, y]).mean(0) if x.shape[0] + y.shape[0] else 0  # (D,)
    x, y = x - center, y - center
    # |x - y|^2 = |x|^2 - 2 x.y + |y|^2: a column [N, 1] plus a row [1, M] minus [N, M].
    sq = x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)
    return sq.clamp_min(0)  # rounding can leave a tiny negative where the answer is 0
    ### END SOLUTION
