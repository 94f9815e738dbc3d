"""The pytest plugin that runs a lesson's tests against the learner's code (loaded by the kit's
conftest.py), one module per concern:

- target: what is under test (``--impl``, ``--mutant``, ``--impl-file``) and the ``lesson``
  fixture, the module a test file checks (``test_<stem>.py`` checks ``<stem>.py``);
- remote: ``--kata-remote``, the code under test in another process (grader.remote), the
  checks in this one;
- collection: ``pytest exercises/07_stable`` collects ``tests/07_stable`` against that tree;
- process: one torch thread and a frozen heap while the tests run;
- todo: an untouched stub is one TODO line with its file:line, and a test that can only end in
  one is not run (untouched finds those tests);
- failures: each failure recorded as data (grader.results.Failure), and told so the learner can
  act on it: a module that does not import, a timeout with the line that looped, CUDA asked
  for on a machine without it;
- loops: a loop that never ends is stopped once a session: the function it ran is replaced by
  a stand-in, and every later test that reaches it ends at once, waiting on it;
- record: each test's final result (grader.results.TestResult), handed to the writers through
  the kit's hooks (hooks); jsonreport is one writer (``--kata-report PATH``);
- summary: the TODO and TIMEOUT sections and where to start, each reason for a skip, and a
  lesson that passes said so.

The same plugin runs for a learner's ``pytest``, for ``kata verify`` and for every student
``kata grade`` grades. INSTALLED names the two installed plugins the kit needs; the plugin loads
them (pyproject.toml turns off every other installed plugin), and forked runs import them ahead.
"""

from __future__ import annotations

import pytest

INSTALLED = ("pytest_timeout", "_hypothesis_pytestplugin")
# loops after failures: its report wrapper reads what failures' made of the phase.
MODULES = ("target", "remote", "collection", "process", "todo", "failures", "loops", "record", "jsonreport", "summary")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The kit's hooks, then the plugins: the installed ones first, then the kit's own modules,
    all by their import names. Not through ``pytest_plugins`` nor as entry points, either of
    which searches every installed distribution's entry points for each name, in every run; the
    installed plugins' entry points have other names than their modules (``timeout``), so the
    search never found them."""
    from grader.plugin import hooks

    pluginmanager.add_hookspecs(hooks)
    for name in INSTALLED:
        pluginmanager.import_plugin(name)
    for name in MODULES:
        pluginmanager.import_plugin(f"grader.plugin.{name}")
