"""The hypothesis settings every lesson's tests run with, loaded before any ``@given`` runs.

``@given`` reads the settings when a test function is defined, so the profile must be loaded
before a test module is imported: the plugin imports this module for any test file that
mentions hypothesis, and grader.testing.strategies imports it too. No torch here.

"kata": no deadline (shared machines are noisy), one failure reported a test, derandomized (every run and every student
sees the same examples, so grading is fair and a mutant is caught every time, not by luck),
no example database on disk, and 25 examples a test (KATA_EXAMPLES=N for another number).
Why 25, not hypothesis's 100: an example of the kit's tensor strategies costs hypothesis's
engine milliseconds, so 25 more examples for each of a lesson's five property tests add a
noticeable share to a run whose floor is `import torch` (docs/PERFORMANCE.md, section 1c, has
the figures); and every known-wrong implementation in
tests/*/mutants/ is still rejected with 5 (`KATA_EXAMPLES=5 python -m grader verify`).

Set HYPOTHESIS_PROFILE=explore to search with fresh random examples instead; `kata grade`
uses "grading".
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hypothesis import HealthCheck, Phase, settings


def examples_a_test(environ: Mapping[str, str] = os.environ) -> int:
    """KATA_EXAMPLES, or 25: how many examples each property test runs."""
    value = environ.get("KATA_EXAMPLES", "25")
    if not value.strip().isascii() or not value.strip().isdigit() or int(value) < 1:
        raise ValueError(
            f"KATA_EXAMPLES={value!r} is not a number of examples; set a whole number of "
            f"1 or more (KATA_EXAMPLES=25 is the default), or unset it."
        )
    return int(value)


settings.register_profile(
    "kata",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=examples_a_test(),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # One failure a test: hypothesis would otherwise raise a group of every distinct error it
    # found, shown as raw tracebacks instead of the kit's message.
    report_multiple_bugs=False,
)
settings.register_profile("explore", parent=settings.get_profile("kata"), derandomize=False, max_examples=500)
# `kata grade`: the same examples and verdicts as "kata", without shrinking a failure to its
# smallest example (seconds per failing test, for a message nobody reads while a class is graded).
settings.register_profile(
    "grading", parent=settings.get_profile("kata"), phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kata"))
