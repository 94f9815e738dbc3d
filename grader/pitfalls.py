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
    Pitfall(re.compile(r"^TypeError: (?:Got unsupported ScalarType \w+|can't convert \w+ device type tensor to numpy"
                       r"|expected np\.ndarray \(got numpy\.\w+\))"),
            "This is a round trip through NumPy, which has no bfloat16, cannot hold a GPU or meta tensor, and "
            "hands back scalars, not arrays, from a full reduction (autograd does not follow .numpy() either): "
            "stay in torch operations unless converting is the function's job."),
)


def named(exc: BaseException) -> str | None:
    """What to tell about `exc` when it is one of the PITFALLS, else None."""
    error = f"{type(exc).__name__}: {exc}"
    return next((pitfall.told for pitfall in PITFALLS if pitfall.error.match(error)), None)
