"""Pitfalls the kit names from an error alone, whatever test met it.

Each is a pattern of an error's "Type: message" that only one cause raises, so naming the
pitfall is never a guess (a pitfall the code may not have made misleads more than silence),
and what to tell the learner. grader.testing's `reported` (an error inside a test's call) and
the plugin (an error anywhere else) both ask here, so the words are the same on either path.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Pitfall(NamedTuple):
    error: re.Pattern[str]  # matches "TypeError: Got unsupported ScalarType BFloat16"
    told: str


PITFALLS = (
    # torch's NumPy bridge, and only it, raises these: .numpy() on a dtype or device NumPy lacks,
    # torch.from_numpy on what .sum() or indexing of an array gave (a NumPy scalar, not an array).
    Pitfall(
        re.compile(
            r"^TypeError: (?:Got unsupported ScalarType \w+|can't convert \w+ device type tensor to numpy"
            r"|expected np\.ndarray \(got numpy\.\w+\))"
        ),
        "This is a round trip through NumPy, which has no bfloat16, cannot hold a GPU or meta tensor, and "
        "hands back scalars, not arrays, from a full reduction (autograd does not follow .numpy() either): "
        "stay in torch operations unless converting is the function's job.",
    ),
    # autograd's own refusal: an in-place op (+=, x[...] = ..., .add_()) on a leaf that requires
    # grad: a parameter updated outside no_grad, or an input written into.
    Pitfall(
        re.compile(r"^RuntimeError: a leaf Variable that requires grad is being used in an in-place operation"),
        "This is an in-place operation (+=, x[...] = ..., a method ending in _) on a tensor that requires grad, "
        "which autograd refuses. Into an input: compute a new tensor (x = x + 1) instead of writing into it; "
        "a parameter you update by hand: update it inside `with torch.no_grad():`.",
    ),
    # nn.Module's own refusal: a parameter or submodule assigned before the base class set up its registries.
    Pitfall(
        re.compile(r"^AttributeError: cannot assign (?:parameters|module|buffer)s? before Module\.__init__\(\) call"),
        "Call super().__init__() first in your module's __init__, before assigning any parameter or layer: "
        "nn.Module sets up the registries they go in.",
    ),
)


def named(exc: BaseException) -> str | None:
    """What to tell about `exc` when it is one of the PITFALLS, else None."""
    error = f"{type(exc).__name__}: {exc}"
    return next((pitfall.told for pitfall in PITFALLS if pitfall.error.match(error)), None)
