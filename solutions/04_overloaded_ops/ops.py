"""Lesson 04: the overloaded operators. Let Python's operators and one op do the work of a loop.

Operators are tensor ops
------------------------
PyTorch, like NumPy, gives Python's operators a meaning for tensors. Each one is a single
call into PyTorch that works on the whole tensor, element by element (with broadcasting):

    you write                 PyTorch runs
    -x                        torch.neg(x)
    x + y    x - y            torch.add, torch.sub
    x * y    x / y            torch.mul, torch.div (true division: tensor([3]) / 2 is 1.5)
    x // y   x % y            torch.floor_divide, torch.remainder
    x ** y                    torch.pow
    x @ y                     torch.matmul
    x < y  <=  >  >=  ==  !=  torch.lt, le, gt, ge, eq, ne: a bool tensor, one entry per element
    abs(x)                    torch.abs
    a & b    a | b    a ^ b   bitwise and, or, xor; on bool tensors: logical and, or, xor
    ~a                        bitwise not; on bool tensors: logical not (a float tensor raises)
    x[i]     x[a:b]           x.select(0, i), x.narrow(0, a, b - a): views sharing x's memory

Each has an augmented, in-place form: `x += y` runs x.add_(y), `x **= 2` runs x.pow_(2). An
in-place op writes into the tensor on its left, and that tensor may be a view of someone
else's: after `row = x[0]; row += 1`, the caller's x has changed too.

One op per call, not per element
--------------------------------
Every call costs a fixed overhead (parsing the arguments, dispatching, allocating the result:
microseconds) on top of the arithmetic, and indexing is a call like any other. Summing the
rows of x = torch.rand(500, 10) by hand,

    z = torch.zeros(10)
    for i in range(500):
        z += x[i]          # one select and one add per row: 1000 tiny ops

is slow. `for row in torch.unbind(x)` splits off all rows in one op and saves some of the
time, but still runs 500 additions. Python's built-in `sum(x)` is the same loop in
disguise: iterating over a tensor unbinds it into its rows (and the sum of no rows is the
int 0, not a tensor). The cure is one op that does all the rows at once, many times faster
than the loop (the tests ask for 30x on this input).

Why `and`, `or` and `not` do not work on tensors
------------------------------------------------
Python lets a class decide what `+` or `&` mean, but not `and`, `or` and `not`: they are
control flow, not operators. `a and b` first asks `bool(a)`, and for a tensor of more than one
element there is no honest answer (all of them? any?), so PyTorch refuses:

    >>> a = torch.tensor([True, False]); b = torch.tensor([True, True])
    >>> a and b
    RuntimeError: Boolean value of Tensor with more than one value is ambiguous
    >>> a & b, a | b, ~a
    (tensor([ True, False]), tensor([True, True]), tensor([False,  True]))

The same error hides in a chained comparison: `0 < x < 1` means `(0 < x) and (x < 1)`. Mind
the precedence, too: `&` binds tighter than `<`. And a bool tensor has no arithmetic
negation: `-mask` and `1 - mask` raise.

Masks select; they do not multiply
----------------------------------
Multiplying by a mask looks like a neat way to drop entries, until a dropped entry is inf or
nan (padding, a log of 0): inf * 0 and nan * 0 are nan, and the nan spreads through the sum
and into the gradient. A mask should decide which entries take part at all, so that what sits
in the others never reaches the arithmetic:

    >>> x = torch.tensor([1.0, float("inf")]); keep = torch.tensor([True, False])
    >>> (x * keep).sum()
    tensor(nan)

A mean over a mask divides by the number of selected entries, and that count can be 0: 0 / 0
is nan. Its dtype matters as well: type promotion decides the result's dtype, and a float32
count (or mask) quietly turns a float16 mean into float32.

Dividing by a norm
------------------
Scaling each row to length 1 means dividing it by its own norm, one number per row, and that
division is broadcasting again. Four traps:

- the norms' shape: a reduction drops the dim it reduces, so the norms of an (N, D) tensor
  have shape (N,), which lines up with the LAST dim of x, the wrong axis (an error when N != D;
  on a square input, silently wrong numbers);
- a zero row: its norm is 0, and 0 / 0 is nan. An eps guards against it, but adding eps to
  every norm changes every row whose norm is near eps;
- the square root of a sum of squares, by hand: the derivative of sqrt at 0 is infinite, which
  turns the gradient of a zero row into nan, and squaring a float16 value above 256 overflows
  (65504 is float16's largest number);
- a cast for accuracy that is never undone.

torch.nn.functional.normalize already does all this, and this lesson is about writing it: the
tests fail a normalize_rows that calls it (under any name).

What the tests expect
---------------------
- row_sum: the values and dtype of torch.sum(x, dim=0) on every input, edge cases included
  (every dtype, empty dims, transposed and expanded views), at least 30x as fast as the slicing
  loop above on a (500, 10) input, and no op count that grows with the number of rows;
- normalize_rows: the values, dtype and gradients of F.normalize(x, p=2, dim=-1, eps=eps) on
  every input, edge cases included (zero rows, float64 down to float16 and bfloat16; in float16
  the tests pass an eps it can hold, 1e-4), without calling F.normalize;
- masked_mean: the mean of the selected entries along any dim, value and gradient, on every
  input, edge cases included (nothing selected, empty dims, half precision, inf or nan inside
  and outside the mask);
- none of them modifies its inputs, and every result is on the input's device.

Check your work with:  pytest exercises/04_overloaded_ops
"""

import torch


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of the rows of `x`, that is, over dim 0.

    x: tensor of any dtype and at least one dim, shape (N, ...). Returns a tensor of shape
    x.shape[1:]: int64 for bool and integer inputs, x's dtype for floating and complex ones.
    x is not modified.
    """
    # TODO: the sum over dim 0, with the same number of tensor ops whatever N is (no loop over
    #       the rows in any form) and at least 30x as fast as the loop in the lesson text.
    ### BEGIN SOLUTION
    # One reduction for all N rows; torch.sum itself promotes bool and integers to int64.
    return torch.sum(x, dim=0)  # (...)
    ### END SOLUTION


def normalize_rows(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Each row of `x` (its last dim) scaled to unit L2 norm.

    x: floating-point tensor of shape (..., D), contiguous or not. Returns x / max(norm, eps),
    the L2 norm taken over the last dim, in x's shape and dtype; a zero row gives zeros, with
    finite gradients, for an eps x's dtype can hold (float16 rounds 1e-12 to 0). Must not call
    torch.nn.functional.normalize. x is not modified.
    """
    # TODO: each row divided by max(its L2 norm, eps), for every input shape and floating
    #       dtype, values and gradients, without F.normalize.
    ### BEGIN SOLUTION
    # keepdim: (..., 1) broadcasts along each row; vector_norm has a finite gradient at 0
    # and accumulates half precision in float32, where sqrt((x * x).sum()) would not.
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # (..., 1)
    return x / norm.clamp_min(eps)  # a zero row: 0 / eps = 0
    ### END SOLUTION


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """The mean of the entries of `x` where `mask` is True, along `dim` (removed from the shape).

    x: floating-point tensor; mask: bool tensor of the same shape; dim: any dim of x, negative
    ones too. Returns x's shape without `dim`, in x's dtype; a slice with no True gives 0, not
    nan. Unselected entries affect neither the result nor its gradient, even when they hold inf
    or nan: the gradient with respect to x is 1 / count on the selected entries, 0 elsewhere.
    x and mask are not modified.
    """
    # TODO: the mean of the selected entries along `dim`, value and gradient as the
    #       docstring gives them.
    ### BEGIN SOLUTION
    # where selects: an inf or nan outside the mask never enters the sum or the gradient,
    # where x * mask would turn it into nan (inf * 0, nan * 0).
    total = torch.where(mask, x, 0).sum(dim)  # x's shape without dim, x's dtype
    count = mask.sum(dim)  # int64; dividing by it keeps x's floating dtype
    return total / count.clamp_min(1)  # an empty slice: 0 / 1, not 0 / 0
    ### END SOLUTION
