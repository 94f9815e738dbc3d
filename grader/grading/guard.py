"""Tamper checks inside a sandboxed run: what the tests trust must still be what it was.

The pipe writer (grader.grading.pipe) takes a snapshot when collection ends, after pytest has
configured itself and before any student code ran (the `lesson` fixture imports it when the
first test starts), and checks it after every test and at the end of the session: the
functions and classes the tests rely on (torch's comparisons, pytest's machinery, the kit's
plugin and test helpers, builtins) must still be the same objects, the modules in sys.modules
the same modules, the pytest plugins all registered, and canary comparisons that must fail
must still fail. Code running in the same process can in principle defeat any check made
there; these catch the tampering a student would write (reassigning
``torch.testing.assert_close``, patching ``_pytest.runner`` or ``torch.allclose``), and the
parent scores a lesson that tampered as 0 and flags it for a person to look at.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import FunctionType

import pytest

import grader.results

# Third-party modules whose functions and classes the tests rely on. Only callables are
# compared: a module's data (sys.stdout under capture, flags) legitimately changes during a run.
WATCHED_MODULES = (
    "builtins",
    "os",
    "math",
    "json",
    "importlib",
    "torch",
    "torch.testing",
    "torch.testing._comparison",
    "torch.nn.functional",
    "torch.autograd",
    "numpy",
    "numpy.testing",
    "pytest",
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.outcomes",
    "_pytest.main",
    "_pytest.fixtures",
    "_pytest.skipping",
    "_pytest.terminal",
    "_pytest.nodes",
    "pytest_timeout",
    "pluggy",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "hypothesis",
    "hypothesis.core",
)
# Third-party classes whose methods decide an outcome (a test's report, a comparison, the hook calls).
WATCHED_CLASSES = (
    "torch.Tensor",
    "torch._C.TensorBase",
    "_pytest.python.Function",
    "_pytest.reports.TestReport",
    "_pytest.runner.CallInfo",
    "_pytest.nodes.Item",
    "pluggy._hooks.HookCaller",
    "pluggy._hooks.HookImpl",
    "pluggy._manager.PluginManager",
    "_pytest.config.Config",
)
# The kit's own packages that run inside a test session: the plugin and the tests' helpers.
# Every module of theirs loaded at snapshot time is watched, whole, with the classes it defines.
KIT_PACKAGES = ("grader.plugin", "grader.testing")


def kit_modules(writer: type | None = None) -> list[str]:
    """The kit's modules to watch, found in sys.modules now: every loaded module of
    KIT_PACKAGES, the modules that report results (this one, the writer's, grader.results),
    and the grader modules those take functions or classes from (grader.files, say)."""
    own = [name for name in sorted(sys.modules) if any(name == p or name.startswith(p + ".") for p in KIT_PACKAGES)]
    own += [__name__, grader.results.__name__] + ([writer.__module__] if writer is not None else [])
    used = []
    for name in own:
        for value in list(vars(sys.modules[name]).values()):
            module = getattr(value, "__module__", None) if callable(value) else None
            if isinstance(module, str) and module.startswith("grader.") and module in sys.modules:
                used.append(module)
    return list(dict.fromkeys(own + sorted(used)))


def _defined_in(module: object) -> list[type]:
    """The classes a module defines (not those it imports)."""
    return [
        value
        for value in list(vars(module).values())
        if isinstance(value, type) and value.__module__ == module.__name__
    ]


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
    """The trusted functions as they were before any student code ran, and the canaries.

    `writer`: the class that sends the results (grader.grading.pipe.PipeWriter); it and its
    module are watched with the kit's own. `tests`: the test files collected, whose modules
    are watched too (a test function's code rewritten would pass anything)."""

    def __init__(self, writer: type | None = None, tests: frozenset[Path] = frozenset()) -> None:
        self.holders: dict[str, object] = {}  # dotted name -> the module or class
        self.originals: dict[str, list[tuple[str, object]]] = {}  # dotted name -> [(attribute, value)]
        # dotted name -> [(attribute, function, its code)]: a function's code can be swapped in place
        self.codes: dict[str, list[tuple[str, FunctionType, object]]] = {}
        self.modules: list[str] = []  # the watched modules' names, for sys.modules
        for name in WATCHED_MODULES:
            if (module := _resolve(name)) is not None:
                self._watch(name, module)
                self.modules.append(name)
        kit = [(name, sys.modules[name]) for name in kit_modules(writer)]
        for name, module in kit:
            self._watch(name, module)
            self.modules.append(name)
        for name in WATCHED_CLASSES:
            if isinstance(holder := _resolve(name), type):
                self._watch(name, holder)
        for _, module in kit:
            for cls in _defined_in(module):
                self._watch(f"{cls.__module__}.{cls.__qualname__}", cls)
        files = {path.resolve() for path in tests}
        for name, module in list(sys.modules.items()):
            if (file := getattr(module, "__file__", None)) and Path(file).resolve() in files:
                self._watch(name, module)
                self.modules.append(name)
        # What runs at every call of the tests' thread, and of threads to come: such a function
        # can stop the thread at the writer and change the result it was handed.
        self.hooks_on_calls = _hooks_on_calls()
        self.plugins: set[str] | None = None  # the plugin names registered once collection ended
        self.hooks: dict[str, object] = {}  # pytest's hook callers then, by name (config.hook)

    def _watch(self, name: str, holder: object) -> None:
        if name in self.holders:
            return
        self.holders[name] = holder
        self.originals[name] = [
            (attr, value) for attr, value in list(vars(holder).items()) if callable(value) or hasattr(value, "__get__")
        ]  # functions, classes, descriptors
        self.codes[name] = [
            (attr, value, value.__code__) for attr, value in self.originals[name] if isinstance(value, FunctionType)
        ]

    def check(self, config: pytest.Config | None = None) -> list[str]:
        """What has been tampered with since the snapshot, one line each ([] when nothing)."""
        problems = []
        for name in self.modules:
            if name in self.holders and sys.modules.get(name, self.holders[name]) is not self.holders[name]:
                problems.append(f"sys.modules[{name!r}] was replaced")
        for owner, attributes in self.originals.items():
            now = vars(self.holders[owner])
            for attr, original in attributes:
                current = now.get(attr, _MISSING)
                if current is not original:
                    problems.append(f"{owner}.{attr} was {'deleted' if current is _MISSING else 'replaced'}")
            if len(problems) >= 10:
                break
        for owner, functions in self.codes.items():
            problems += [
                f"{owner}.{attr}'s code was replaced"
                for attr, function, code in functions
                if function.__code__ is not code
            ][: 10 - len(problems)]
        problems += _canaries()
        if _hooks_on_calls() != self.hooks_on_calls:
            problems.append("a trace or profile function was set (sys.settrace, sys.setprofile or threading's)")
        if config is not None:
            names = {name for name, _ in config.pluginmanager.list_name_plugin()}
            hooks = dict(vars(config.hook))
            if self.plugins is None:
                self.plugins, self.hooks = names, hooks
            else:
                if missing := sorted(self.plugins - names):
                    problems.append(f"pytest plugins were unregistered: {', '.join(missing)}")
                if replaced := sorted(name for name, caller in self.hooks.items() if hooks.get(name) is not caller):
                    problems.append(f"pytest's hooks were replaced: {', '.join(replaced[:5])}")
        return problems


_MISSING = object()


def _hooks_on_calls() -> tuple:
    """The trace and profile functions of this thread, and those threading gives new threads."""
    import threading

    return sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile()


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
    except Exception as exc:  # noqa: BLE001 (replaced by something that raises the wrong thing)
        problems.append(f"torch.testing.assert_close raised {type(exc).__name__} instead of AssertionError")
    try:
        torch.testing.assert_close(a, a.clone())
    except Exception:  # noqa: BLE001 (any error here is tampering)
        problems.append("torch.testing.assert_close rejected two equal tensors")
    for name, verdict in (
        ("torch.allclose", lambda: torch.allclose(a, b)),
        ("torch.equal", lambda: torch.equal(a, b)),
        ("Tensor.__eq__", lambda: bool((a == b).any())),
        ("pytest.approx", lambda: 2.0 == pytest.approx(1.0)),
    ):
        try:
            if verdict():
                problems.append(f"{name} called two different values equal")
        except Exception as exc:  # noqa: BLE001 (any error here is tampering)
            problems.append(f"{name} raised {type(exc).__name__}")
    try:
        pytest.fail("canary", pytrace=False)
        problems.append("pytest.fail returned instead of failing")
    except pytest.fail.Exception:
        pass
    except BaseException as exc:  # noqa: BLE001 (anything but pytest's own is tampering)
        problems.append(f"pytest.fail raised {type(exc).__name__}")
    return problems
