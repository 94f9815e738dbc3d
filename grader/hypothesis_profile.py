"""The hypothesis settings every lesson's tests run with, loaded before any ``@given`` runs.

``@given`` reads the settings when a test function is defined, so the profile must be loaded
before a test module is imported: the harness imports this module for any test file that
mentions hypothesis, and grader.testing.strategies imports it too. No torch here.

"kata": no deadline (shared machines are noisy), derandomized (every run and every student
sees the same examples, so grading is fair and a mutant is caught every time, not by luck)
and no example database on disk. Set HYPOTHESIS_PROFILE=explore to search with fresh random
examples instead; `kata grade` uses "grading".
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "kata",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", parent=settings.get_profile("kata"), derandomize=False, max_examples=500)
# `kata grade`: the same examples and verdicts as "kata", without shrinking a failure to its
# smallest example (seconds per failing test, for a message nobody reads while a class is graded).
settings.register_profile("grading", parent=settings.get_profile("kata"),
                          phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kata"))
