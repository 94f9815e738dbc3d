"""Hypothesis strategies for adversarial tensors, in one place for every lesson.

Importing this module loads the "kata" hypothesis profile (see grader.plugin.hypothesis_profile).
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import grader.plugin.hypothesis_profile  # noqa: F401  (loads the "kata" profile)

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Magnitudes that break naive code: exp overflows in float32 past ~88.7 (float16: ~11.1).
EXTREMES = (1e4, -1e4, 1e3, -1e3, 100.0, -100.0, 88.8, -88.8, 11.2, -11.2, 1e-30, -1e-30, 0.0)
LAYOUTS = ("contiguous", "transposed", "strided")


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
    return t.contiguous()


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
    values = np.asarray(draw(hnp.arrays(np.float32, shape, elements=elements)) * np.float32(draw(st.sampled_from(scales))))
    if masked:
        values[draw(hnp.arrays(np.bool_, shape))] = -np.inf
    t = torch.from_numpy(values).to(draw(st.sampled_from(dtypes)))
    return with_layout(t, draw(st.sampled_from(layouts)))


@st.composite
def tensor_and_dim(draw, **kwargs) -> tuple[torch.Tensor, int]:
    """A tensor from `tensors(**kwargs)` and a valid dim of it, negative or positive."""
    t = draw(tensors(**kwargs))
    return t, draw(st.integers(-t.dim(), t.dim() - 1))
