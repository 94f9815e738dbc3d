"""pytest plugin for the benchmarks: ``--repeat N`` runs every selected test N times.

Each run is its own test id (``test_x[run0]``, ``test_x[run1]`` ...), so each has its own
outcome and speed ratios in the plugin's JSON report (``--kata-report``).
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--repeat", type=int, default=1, metavar="N", help="run each test N times")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    runs = metafunc.config.getoption("repeat")
    if runs > 1:
        metafunc.fixturenames.append("_kata_run")
        metafunc.parametrize("_kata_run", range(runs), ids=lambda i: f"run{i}")
