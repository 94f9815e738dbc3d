"""Hypothesis strategies for adversarial tensors, in one place for every lesson.

Importing this module loads the "kata" hypothesis profile (see grader.hypothesis_profile).
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import grader.hypothesis_profile  # noqa: F401  (loads the "kata" profile)

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Every dtype family, for code whose text promises "any dtype" (or a given family).
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
HALF = (torch.float16, torch.bfloat16)
INTEGERS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
COMPLEX = (torch.complex64, torch.complex128)
ANY_DTYPE = (*FLOATS, *INTEGERS, torch.bool, *COMPLEX)
# Magnitudes that break naive code: exp overflows in float32 past ~88.7 (float16: ~11.1).
EXTREMES = (1e4, -1e4, 1e3, -1e3, 100.0, -100.0, 88.8, -88.8, 11.2, -11.2, 1e-30, -1e-30, 0.0)
# Memory layouts for the same shape. "expanded" repeats the first slice along dim 0 with a
# stride of 0 (the values change: compare with a reference given the same tensor).
LAYOUTS = ("contiguous", "transposed", "strided")
ALL_LAYOUTS = (*LAYOUTS, "expanded")


def shapes(*, min_dims: int = 1, max_dims: int = 4, min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Tensor shapes as tuples; ``min_side=0`` allows empty dims."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def with_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout: a transposed or a step-2 (non-contiguous) view."""
    if layout == "transposed" and t.dim() >= 2:
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "strided" and t.dim() >= 1:
        big = t.new_zeros((2 * t.shape[0], *t.shape[1:]))
        big[::2] = t
        return big[::2]
    if layout == "expanded" and t.dim() >= 1 and t.shape[0] > 0:
        return t[:1].expand(t.shape)
    return t.contiguous()


def cast(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """float32 `values` as a tensor of any dtype: integers rounded and clipped to the dtype's
    range, bools as values > 0, complex numbers with an imaginary part of values reversed."""
    t = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    if dtype.is_complex:
        return torch.complex(t, t.flip(tuple(range(t.dim())))).to(dtype)
    if dtype == torch.bool:
        return t > 0
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return t.nan_to_num(0.0, posinf=info.max, neginf=info.min).round().clamp(info.min, info.max).to(dtype)
    return t.to(dtype)


@st.composite
def tensors(
    draw,
    *,
    shape=None,
    dtypes=(torch.float32,),
    extremes: bool = True,
    scales=(1.0, 30.0, 1e4),
    masked: bool = False,
    layouts=LAYOUTS,
) -> torch.Tensor:
    """Float tensors built to break naive numerics.

    shape: a tuple or a strategy (default: `shapes()`); dtypes: drawn from; extremes: mix in
    values like ±1e4 and ±88.8; scales: the whole tensor is multiplied by one of these;
    masked: some entries are -inf (whole rows may be); layouts: memory layouts drawn from.
    """
    shape = draw(shapes() if shape is None else shape) if not isinstance(shape, tuple) else shape
    elements = st.floats(-1, 1, width=32)
    if extremes:
        elements = st.one_of(elements, st.sampled_from(EXTREMES))
    # np.asarray: a 0-d array times a scalar is a NumPy scalar, which torch.from_numpy refuses.
    values = np.asarray(
        draw(hnp.arrays(np.float32, shape, elements=elements)) * np.float32(draw(st.sampled_from(scales)))
    )
    if masked:
        values[draw(hnp.arrays(np.bool_, shape))] = -np.inf
    t = cast(values, draw(st.sampled_from(dtypes)))
    return with_layout(t, draw(st.sampled_from(layouts)))


def edge_shapes(*, max_dims: int = 3, max_side: int = 4) -> st.SearchStrategy:
    """Shapes weighted toward the edge cases: 0-d, empty, one-element, then any."""
    return st.one_of(
        st.sampled_from([(), (0,), (1,), (1, 1), (0, 3), (3, 0), (2, 1, 3)]),
        shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side),
    )


@st.composite
def tensor_and_dim(draw, **kwargs) -> tuple[torch.Tensor, int]:
    """A tensor from `tensors(**kwargs)` and a valid dim of it, negative or positive."""
    t = draw(tensors(**kwargs))
    return t, draw(st.integers(-t.dim(), t.dim() - 1))


def on_meta(t: torch.Tensor) -> torch.Tensor:
    """The same shape, dtype and strides on the `meta` device: code that moves data to the CPU,
    reads values into Python or builds a tensor on the default device shows itself there.

    The first elementwise or reduction op on a meta tensor imports torch._dynamo or sympy (about
    as long as `import torch`): free in a lesson whose tests already use an optimizer, a cost
    elsewhere, where ``differential.on_another_default_device`` catches the default-device half
    for nothing."""
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta").requires_grad_(t.requires_grad)
