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
int 0, not a tensor). The cure is a single op that reduces a whole dim at once: the reductions
(sum, mean, amax, ...) take a `dim` argument, and one call does all the rows, many times
faster than the loop (the tests ask for 30x on this input). For instance the largest entry of
each ROW of a tensor, in one op:

    >>> torch.tensor([[1, 5, 2], [7, 0, 3]]).amax(dim=1)
    tensor([5, 7])

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

The same error hides in a chained comparison: `0 < x < 1` means `(0 < x) and (x < 1)`. Write
`(0 < x) & (x < 1)`, with the parentheses, because `&` binds tighter than `<`. And invert a
mask with `~mask` (or mask.logical_not()): `-mask` and `1 - mask` raise on a bool tensor.

Masks select; they do not multiply
----------------------------------
Multiplying by a mask looks like a neat way to drop entries, until a dropped entry is inf or
nan (padding, a log of 0): inf * 0 and nan * 0 are nan, and the nan spreads through the sum
and into the gradient. `torch.where(mask, x, 0)` selects instead: what sits in the unselected
entries never reaches the result, and their gradient is exactly 0.

    >>> x = torch.tensor([1.0, float("inf")]); keep = torch.tensor([True, False])
    >>> (x * keep).sum(), torch.where(keep, x, 0).sum()
    (tensor(nan), tensor(1.))

A mean over a mask divides by the number of selected entries; when that count can be 0,
raise it to at least 1 (the sum is 0 there too), or 0 / 0 gives nan. Count in the integers
and divide a float by them: the float's dtype wins, where a `.float()` on the count or the
mask would turn a float16 result into float32.

Dividing by a norm
------------------
Scaling each row to length 1 means dividing it by its own norm, one number per row, and that
division is broadcasting again. Four traps:

- the norms' shape: a reduction drops the dim it reduces, so the norms of an (N, D) tensor
  have shape (N,), which lines up with the LAST dim of x, the wrong axis (an error when N != D;
  on a square input, silently wrong numbers). Keep the reduced dim (`keepdim=True`): (N, 1)
  broadcasts along each row;
- a zero row: its norm is 0, and 0 / 0 is nan. Raise the norm to at least a small eps before
  dividing; adding eps to it instead changes every row whose norm is near eps;
- the square root of a sum of squares, by hand: the derivative of sqrt at 0 is infinite, which
  turns the gradient of a zero row into nan, and squaring a float16 value above 256 overflows
  (65504 is float16's largest number). PyTorch's own vector norm has neither problem: it
  accumulates half-precision inputs in float32;
- a cast for accuracy that is never undone: the result keeps x's dtype.

What the tests expect
---------------------
- row_sum: the values and dtype of PyTorch's own sum over dim 0 for any shape, dtype and layout
  (bool and integer inputs give int64, an empty first dim gives zeros), at least 30x as fast
  as the slicing loop above on a (500, 10) input, and no op count that grows with the number
  of rows;
- normalize_rows: equal to torch.nn.functional.normalize(x, p=2, dim=-1, eps=eps), zero rows
  included (zeros, with finite gradients), in float64, float32, float16 and bfloat16 (in
  float16, for an eps it can hold: the default 1e-12 rounds to 0 there, and 0 / 0 is nan);
- masked_mean: the mean of the selected entries along any dim; 0 for a slice with no True; inf
  or nan in unselected entries changes neither the result nor the gradient;
- none of them modifies its inputs (the in-place traps above are named when they show), and
  every result is on the input's device.

Check your work with:  pytest exercises/04_overloaded_ops
"""

import torch


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of the rows of `x`, that is, over dim 0, as one reduction (no loop, no indexing).

    x: tensor of any dtype and at least one dim, shape (N, ...). Returns a tensor of shape
    x.shape[1:]: bool and integer inputs give int64 (a bool mask's sum counts its True entries,
    int8 sums do not wrap around), floating and complex ones keep their dtype; N = 0 gives
    zeros. x is not modified.
    """
    # TODO: return the sum over dim 0 in the dtype the docstring gives, for any dtype, shape
    #       (N = 0 included) and layout, running the same ops whatever N is: no loop, no
    #       indexing, no iteration over x, and at least 30x as fast as the loop in the lesson
    #       text. x stays unchanged.
    raise NotImplementedError


def normalize_rows(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Each row of `x` (its last dim) scaled to unit L2 norm.

    x: floating-point tensor of shape (..., D), any layout. Returns x / max(norm, eps), with the
    norm taken over the last dim, in x's shape and dtype: a zero row comes back as zeros (not
    nan), with finite gradients, for any eps that x's dtype can hold (float16 rounds the default
    1e-12 to 0: pass eps=1e-4 or more there). Equals torch.nn.functional.normalize(x, p=2,
    dim=-1, eps=eps). x is not modified.
    """
    # TODO: return x / max(norm, eps) row by row (the norm over the last dim), square inputs
    #       included: zero rows give zeros and finite gradients, float16 rows above 256 do not
    #       overflow, the result keeps x's shape and dtype, and x stays unchanged.
    raise NotImplementedError


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """The mean of the entries of `x` where `mask` is True, along `dim` (removed from the shape).

    x: floating-point tensor; mask: bool tensor of the same shape; dim: any dim of x, negative
    ones too. Returns x's shape without `dim`, in x's dtype; a slice with no True gives 0, not
    nan. Unselected entries affect neither the result nor its gradient, even when they hold inf
    or nan: the gradient with respect to x is 1 / count on the selected entries, 0 elsewhere.
    """
    # TODO: return the mean of the selected entries along `dim`, in x's dtype and on x's
    #       device: 0 where a slice has nothing selected, and nothing an unselected entry holds
    #       (inf, nan) may reach the result or its gradient. x and mask stay unchanged.
    raise NotImplementedError
