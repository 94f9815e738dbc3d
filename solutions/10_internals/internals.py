"""Lesson 10: tensor internals. Float formats bit by bit, storage and strides, zero-copy views.

Floats are three fields
-----------------------
An IEEE-style binary float is a sign bit, an exponent field of `e` bits and a mantissa
(fraction) field of `m` bits. A normal number is

    (-1)**sign * 2**(E - bias) * 1.fff...f  (binary)      bias = 2**(e - 1) - 1

The leading 1 is implied, not stored. Two exponent values are special: E == 0 holds zero and
the subnormals (0.fff * 2**(1 - bias), no implied 1, so precision fades out gradually near 0),
and the all-ones E holds inf (fraction 0) and NaN (any other fraction).

    | dtype    | sign | exponent | mantissa | largest finite | next float above 1 |
    | -------- | ---- | -------- | -------- | -------------- | ------------------ |
    | float32  | 1    | 8        | 23       | ~3.40e38       | 1 + 2**-23         |
    | float16  | 1    | 5        | 10       | 65504          | 1 + 2**-10         |
    | bfloat16 | 1    | 8        | 7        | ~3.39e38       | 1 + 2**-7          |

Both 16-bit formats halve the memory, but they spend the bits differently. float16 keeps
more mantissa (about 3 decimal digits) and pays with range: anything past 65504 is inf, and
gradients below ~6e-5 lose precision (below ~6e-8 they vanish), which is why float16
training needs loss scaling. bfloat16 keeps float32's 8 exponent bits, so it covers the same
range (no overflow where float32 had none) with only 7 mantissa bits (about 2 digits):
between 1 and 2 it can only step by 2**-7 = 0.0078125. (The defaults: `torch.ones(10, 2)` is float32 and
`torch.tensor([1, 2])` int64; `dtype=torch.int` is int32, `.short()` int16, `.double()` float64.)

bfloat16 is the top half of a float32
-------------------------------------
Same sign bit, same exponent field, the first 7 mantissa bits. So converting a float32 to
bfloat16 is a question about its 32 bits read as an integer: which multiple of 2**16 is the
nearest? Dropping the low 16 bits alone *truncates* (rounds toward zero), which is not what
torch does. IEEE's default rounding is "to nearest, ties to even": below half round down,
above half round up, and exactly half goes to whichever neighbour has its last kept bit
(bit 16) equal to 0.

    1 + 2**-8  = 0x3F80_8000: exactly half, bit 16 is 0 (even)  -> 0x3F80_0000 = 1.0
    1 + 3*2**-8 = 0x3F81_8000: exactly half, bit 16 is 1 (odd)  -> 0x3F82_0000 = 1 + 2**-6
    0x3F80_8001: a hair above half                              -> 0x3F81_0000 = 1 + 2**-7

Where rounding by hand goes wrong. Going up by one can carry out of the mantissa into the
exponent, and for the largest floats into the all-ones exponent: it looks like a bug and is
easy to "fix" into one. The classes at the edges of the format (signed zeros, subnormals,
infinities) tempt special cases that torch does not make. A NaN is not a number: its payload
may sit in exactly the bits that rounding throws away or carries from. And the sign bit is
the top bit of a *signed* int32, so a negative float reads as a negative integer.

    >>> bits = torch.tensor([1.0]).view(torch.int32)   # the same memory, read as int32
    >>> hex(bits.item())
    '0x3f800000'

Storage, offset, strides
------------------------
A tensor is a window on a flat, 1-D *storage*: `size` (its shape), `storage_offset()` (where
element [0, 0, ...] sits) and `stride()` (how many storage elements to skip for +1 along
each dim: elements, not bytes as NumPy's strides count). Element [i, j] lives at
storage[offset + i*stride[0] + j*stride[1]].

    >>> points = torch.tensor([[1.0, 4.0], [2.0, 1.0], [3.0, 5.0]])
    >>> points.stride(), points.t().stride(), points[1:].storage_offset()
    ((2, 1), (1, 2), 2)
    >>> points.t().is_contiguous()
    False

So `t()`, `transpose`, slicing (`x[1:]`, `x[::2]`) and `view` copy nothing: they build new
size/stride/offset numbers over the same storage, at any tensor size, and a write through
the view is a write to the original. A tensor is *contiguous* when its strides are the
row-major ones for its shape; `.contiguous()` returns it unchanged if so, and otherwise
copies the elements into a new storage in row-major order (some ops, `view` among them,
need that layout; most accept any strides).

`torch.as_strided(x, size, stride, storage_offset)` sets those numbers directly: any window
the formula above can describe, without copying. The diagonal of a 3x3 matrix, for one, is
3 elements of its storage, 4 apart (one row, 3 elements, plus one column, 1):

    >>> m = torch.arange(9.0).reshape(3, 3)
    >>> m.as_strided((3,), (4,))
    tensor([0., 4., 8.])

Two cautions. First, its numbers are in *storage* terms, not relative to x: a stride counts
elements of the whole storage, and a `storage_offset` is a position in the storage, not in
x. A transposed, stepped or sliced x looks like any other tensor of its shape, yet its
strides and offset are not the ones its shape suggests, so numbers worked out from the shape
read the wrong elements (or run past the storage). Second, overlapping windows share memory:
never write through them (an in-place op sees values it has already changed); `.clone()`
first if you must.

NumPy shares memory too: `t.numpy()` (a CPU tensor without grad) and `torch.from_numpy(a)`
return objects over the same buffer, so a write through one is seen through the other.
The same holds for `x.view(torch.int32)`: an in-place op on the integer view changes x.

What the tests expect
---------------------
- `round_to_bfloat16(x)`: bit for bit `x.to(torch.bfloat16).float()` on every non-NaN
  float32, every class of bit pattern included (checked on 2**20 random patterns and on the
  edges of the format); a NaN comes back as a NaN with its low 16 bits clear (any sign and
  payload: torch itself gives one canonical NaN); any shape and layout; a new tensor, x
  unchanged; no bfloat16 tensor created on the way (the point is to do it on the bits); a
  dtype other than float32 raises TypeError whose message names float32.
- `float_limits(e, m)`: equals `torch.finfo` for float32, float16, bfloat16, float64 and
  float8_e5m2, and brute force for formats torch does not have, at every width in range
  (both ends too); plain Python floats; computed, not looked up (no torch.finfo or
  numpy.finfo); widths that are not ints raise TypeError, widths out of range ValueError.
- `sliding_windows(x, size, step)`: equals `x.unfold(0, size, step)` for any dims, dtype,
  layout and storage offset, shares x's storage (a write to x shows in the windows), built
  with `as_strided` (unfold is not allowed); bad sizes raise ValueError.

Check your work with:  pytest exercises/10_internals
"""

import torch


def round_to_bfloat16(x: torch.Tensor) -> torch.Tensor:
    """Round every element of float32 `x` to the nearest bfloat16 value, on its bits.

    x: float32 tensor of any shape (0-d and empty too) and any strides; it is not modified.
    Returns a new float32 tensor of x's shape on x's device whose elements are bfloat16
    values (their low 16 bits are 0), rounded to nearest, ties to even: the same bits as
    `x.to(torch.bfloat16).float()` for every non-NaN input, whatever its class. A NaN comes
    back as a NaN (any NaN whose low 16 bits are 0). Computed on x's bits, without creating
    any bfloat16 tensor. Raises TypeError, naming float32, if x is not float32.
    """
    # TODO: return x rounded to the nearest bfloat16 values (ties to even), still float32,
    #       worked out on x's 32 bits with integer ops. Held to: torch's bits exactly for every
    #       non-NaN; NaN in, NaN out, low 16 bits 0; any shape, strides and device; a new
    #       tensor, x itself unchanged; no bfloat16 tensor on the way; TypeError unless float32.
    ### BEGIN SOLUTION
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    # Same element size, so the int32 view works for any strides and copies nothing.
    bits = x.view(torch.int32)
    # A NaN whose payload sits only in the low 16 bits would round to inf: give every NaN
    # the quiet bit and clear its low half first (that also keeps the sign and the top of
    # the payload, and the addition below can then never overflow).
    quiet_nan = (bits | 0x0040_0000) & -0x1_0000
    bits = torch.where(torch.isnan(x), quiet_nan, bits)  # a new tensor: x is untouched
    # Round to nearest, ties to even: below half (< 0x8000) never carries into bit 16, above
    # half always does, exactly half carries only when bit 16 (the last bit kept) is odd.
    lowest_kept = (bits >> 16) & 1
    rounded = (bits + 0x7FFF + lowest_kept) & -0x1_0000  # -0x10000 is 0xFFFF0000 as int32
    return rounded.view(torch.float32)
    ### END SOLUTION


def float_limits(exponent_bits: int, mantissa_bits: int) -> tuple[float, float, float]:
    """(largest finite, eps, smallest normal) of an IEEE-style binary float format.

    exponent_bits: width of the exponent field, 2 to 11; mantissa_bits: explicitly stored
    fraction bits, 1 to 52 (the results are Python floats, so the format must fit in
    float64). The format follows the IEEE conventions of the lesson text (its bias, and its
    special exponent fields: float8_e4m3fn breaks them, so its max differs). eps is the gap
    between 1.0 and the next float above it. Equal to torch.finfo(dtype)'s .max, .eps and
    .smallest_normal for float32 (8, 23), float16 (5, 10), bfloat16 (8, 7), float64 (11, 52)
    and float8_e5m2 (5, 2). Raises TypeError for widths that are not ints (8.0, "7", None),
    ValueError for widths out of range.
    """
    # TODO: return (largest finite, eps, smallest normal) of that format as Python floats,
    #       worked out from the two widths (no lookup table, no finfo). Held to: torch.finfo's
    #       values for the formats it has, exact values for any other; TypeError for widths that
    #       are not ints, ValueError outside 2..11 and 1..52 (both ends allowed).
    ### BEGIN SOLUTION
    for name, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"float_limits: {name} must be an int, got {value!r}")
    if not 2 <= exponent_bits <= 11:
        raise ValueError(f"float_limits: exponent_bits must be 2 to 11 (1 bit leaves no normal numbers, "
                         f"more than 11 do not fit in a Python float), got {exponent_bits}")
    if not 1 <= mantissa_bits <= 52:
        raise ValueError(f"float_limits: mantissa_bits must be 1 to 52, got {mantissa_bits}")
    bias = 2 ** (exponent_bits - 1) - 1
    eps = 2.0 ** -mantissa_bits  # the last mantissa bit at exponent 0, that is next to 1.0
    # The all-ones exponent field is inf/NaN, so the largest finite field is all-ones - 1,
    # that is 2 * bias, worth 2**bias; its significand 1.11...1 is 2 - eps.
    largest = (2.0 - eps) * 2.0**bias
    smallest_normal = 2.0 ** (1 - bias)  # exponent field 1 (field 0 holds the subnormals)
    return largest, eps, smallest_normal
    ### END SOLUTION


def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """Every window of `size` consecutive elements along dim 0, `step` apart, as a view.

    x: tensor of at least one dim, any dtype, any strides and storage offset.
    Returns what x.unfold(0, size, step) returns: shape (W, *x.shape[1:], size), one entry
    per window that fits whole (trailing elements that fill no window are dropped). A view
    made with as_strided: it shares x's storage (no copy), so a write to x shows in it;
    never write through it (windows overlap).
    Raises ValueError if x is 0-d, size < 1, step < 1 or size > len(x).
    """
    # TODO: return every window as one view of x's storage, shaped like x.unfold(0, size, step)
    #       (W, *x.shape[1:], size). Held to: no copy (a write to x shows in it) and no unfold;
    #       any dtype, strides and storage offset of x, on x's device; ValueError for a 0-d x,
    #       size or step below 1, or size longer than dim 0.
    ### BEGIN SOLUTION
    if x.dim() == 0:
        raise ValueError("sliding_windows: x must have a dim to slide along, got a 0-d tensor")
    if size < 1 or step < 1:
        raise ValueError(f"sliding_windows: size and step must be at least 1, got size={size}, step={step}")
    length = x.shape[0]
    if size > length:
        raise ValueError(f"sliding_windows: size={size} is longer than dim 0 of x (length {length})")
    count = (length - size) // step + 1
    # Strides count storage elements: start from x's own, so slices and transposes work.
    along = x.stride(0)
    return x.as_strided(
        (count, *x.shape[1:], size),  # (W, *rest, size)
        (step * along, *x.stride()[1:], along),
        x.storage_offset(),  # a slice such as x[3:] starts inside its storage
    )
    ### END SOLUTION
