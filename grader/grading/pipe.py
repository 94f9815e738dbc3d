"""The child's side of class grading: test outcomes over a pipe the parent owns, and tamper checks.

``kata grade`` runs each student's lesson in a forked child (grader/sandbox.py). Inside it this
plugin replaces the report file of ``--kata-report``: nothing is written into the grading copy,
where the student's code could rewrite it. Each event is one JSON line on the pipe:

    {"collected": {"tests": [{"nodeid", "points", "public"}], "errors": [{"nodeid", "message"}]}}
    {"test": {"nodeid", "outcome", "message", "points", "public", "speed", "seconds"}}   after teardown
    {"tamper": ["torch.testing.assert_close was replaced", ...]}
    {"finish": {"exitstatus": int}}

The parent counts a test as passed only when a "test" event says so, for a test it saw in
"collected", once (sandbox.Outcome checks that), so a run that ends early loses only what it
did not report.

Tamper checks (`Guard`) run after every test, once the student's code has had its chance: the
functions the tests trust (torch's comparisons, pytest's machinery, the kit's own helpers,
builtins) must still be the objects they were when collection ended, before any student code
ran (the `lesson` fixture imports it when the first test starts), and
canary comparisons that must fail still fail. Code running in the same process can in principle
defeat any check made there; these catch the tampering a student would write (reassigning
``torch.testing.assert_close``, patching ``_pytest.runner`` or ``torch.allclose``), and the
parent scores a lesson that tampered as 0 and flags it for a person to look at.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import pytest

from grader.plugin import JsonReport

# Modules whose functions and classes the tests rely on. Only callables are compared: a module's
# data (sys.stdout under capture, flags) legitimately changes during a run.
WATCHED_MODULES = (
    "builtins", "os", "math", "json", "importlib",
    "torch", "torch.testing", "torch.testing._comparison", "torch.nn.functional", "torch.autograd",
    "numpy", "numpy.testing",
    "pytest", "_pytest.runner", "_pytest.reports", "_pytest.python", "_pytest.outcomes", "_pytest.main",
    "_pytest.fixtures", "_pytest.skipping", "_pytest.terminal", "_pytest.nodes", "pytest_timeout",
    "pluggy", "pluggy._callers", "pluggy._hooks", "pluggy._manager",
    "hypothesis", "hypothesis.core",
    "grader.plugin", "grader.plugin.measurements", "grader.files", "grader.testing", "grader.testing.compare",
    "grader.testing.speed", "grader.testing.forbid", "grader.testing.autograd", "grader.testing.memory",
    "grader.testing.errors", "grader.grading.pipe",
)
# Classes whose methods decide an outcome (a test's report, a comparison, the hook calls).
WATCHED_CLASSES = (
    "torch.Tensor", "torch._C.TensorBase", "_pytest.python.Function", "_pytest.reports.TestReport",
    "_pytest.runner.CallInfo", "_pytest.nodes.Item", "pluggy._hooks.HookCaller", "pluggy._hooks.HookImpl",
    "pluggy._manager.PluginManager", "_pytest.config.Config", "grader.plugin.JsonReport", "grader.grading.pipe.Reporter",
)


def _resolve(dotted: str):
    """The object a dotted name names (a module, or a class inside one), or None."""
    module, _, attr = dotted.rpartition(".")
    try:
        return importlib.import_module(dotted)
    except ImportError:
        pass
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None


class Guard:
    """The trusted functions as they were before any student code ran, and the canaries."""

    def __init__(self) -> None:
        self.holders: dict[str, object] = {}  # dotted name -> the module or class
        self.originals: dict[str, list[tuple[str, object]]] = {}  # dotted name -> [(attribute, value)]
        for name in (*WATCHED_MODULES, *WATCHED_CLASSES):
            holder = _resolve(name)
            if holder is None or (name in WATCHED_CLASSES and not isinstance(holder, type)):
                continue
            self.holders[name] = holder
            self.originals[name] = [(attr, value) for attr, value in list(vars(holder).items())
                                    if callable(value) or hasattr(value, "__get__")]  # functions, classes, descriptors
        self.plugins: set[str] | None = None  # the plugin names registered once collection ended

    def check(self, config: pytest.Config | None = None) -> list[str]:
        """What has been tampered with since the snapshot, one line each ([] when nothing)."""
        problems = []
        for name in WATCHED_MODULES:
            if name in self.holders and sys.modules.get(name, self.holders[name]) is not self.holders[name]:
                problems.append(f"sys.modules[{name!r}] was replaced")
        for owner, attributes in self.originals.items():  # ~5,000 identity checks: about 1 ms
            now = vars(self.holders[owner])
            for attr, original in attributes:
                current = now.get(attr, _MISSING)
                if current is not original:
                    problems.append(f"{owner}.{attr} was {'deleted' if current is _MISSING else 'replaced'}")
            if len(problems) >= 10:
                break
        problems += _canaries()
        if config is not None:
            names = {name for name, _ in config.pluginmanager.list_name_plugin()}
            if self.plugins is None:
                self.plugins = names
            elif missing := sorted(self.plugins - names):
                problems.append(f"pytest plugins were unregistered: {', '.join(missing)}")
        return problems


_MISSING = object()


def _canaries() -> list[str]:
    """Comparisons whose answer is known: each must still come out that way."""
    import torch

    problems = []
    a, b = torch.zeros(3), torch.ones(3)
    try:
        torch.testing.assert_close(a, b)
        problems.append("torch.testing.assert_close accepted two different tensors")
    except AssertionError:
        pass
    except Exception as exc:  # replaced by something that raises the wrong thing
        problems.append(f"torch.testing.assert_close raised {type(exc).__name__} instead of AssertionError")
    try:
        torch.testing.assert_close(a, a.clone())
    except Exception:
        problems.append("torch.testing.assert_close rejected two equal tensors")
    for name, verdict in (("torch.allclose", lambda: torch.allclose(a, b)), ("torch.equal", lambda: torch.equal(a, b)),
                          ("Tensor.__eq__", lambda: bool((a == b).any())), ("pytest.approx", lambda: 2.0 == pytest.approx(1.0))):
        try:
            if verdict():
                problems.append(f"{name} called two different values equal")
        except Exception as exc:
            problems.append(f"{name} raised {type(exc).__name__}")
    try:
        pytest.fail("canary", pytrace=False)
        problems.append("pytest.fail returned instead of failing")
    except pytest.fail.Exception:
        pass
    except BaseException as exc:
        problems.append(f"pytest.fail raised {type(exc).__name__}")
    return problems


class Reporter(JsonReport):
    """JsonReport's bookkeeping, with each event sent down the pipe instead of into a file."""

    def __init__(self, fd: int) -> None:
        super().__init__(path=None)
        self.fd = fd
        self.guard: Guard | None = None
        self.config: pytest.Config | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def _send(self, kind: str, payload) -> None:
        data = (json.dumps({kind: payload}) + "\n").encode("utf-8", "replace")
        while data:
            written = os.write(self.fd, data)
            data = data[written:]

    def _check(self) -> None:
        if self.guard is not None:
            problems = self.guard.check(self.config)
            if problems:
                self._send("tamper", problems)

    def _collected(self) -> None:
        self._send("collected", {"tests": self.collected, "errors": self.collect_errors})
        # The snapshot: pytest has configured itself (its legacypath plugin patches Config, say)
        # and the student's code has not run yet (the `lesson` fixture imports it at setup).
        self.guard = Guard()
        self._check()

    def _finished(self, nodeid: str) -> None:
        self._check()  # the test's fixtures are undone: what is still replaced was the student
        self._send("test", self.tests[nodeid])

    def _ended(self, exitstatus: int) -> None:
        self._check()
        self._send("finish", {"exitstatus": exitstatus})
