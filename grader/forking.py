"""Import, once, what a lesson's pytest run needs, in a process that then forks the runs.

Importing torch costs more than most lessons' tests, and torch imports more on first use
(torch._dynamo for the first optimizer, sympy for gradcheck's first call): docs/PERFORMANCE.md
has the figures.
A process that has done all of it once and forks each run (``kata grade``, ``grader verify``,
the later runs of ``kata watch``) pays none of it per run. Torch is switched to one thread
before any op, so no OpenMP pool exists in the parent to be broken by the fork.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import sys
import traceback
from pathlib import Path
from types import CodeType
from typing import Callable, Iterable, NoReturn

# pytest warns that it cannot assertion-rewrite plugins imported before it started: here they
# were, on purpose, by `preload`.
PRELOADED = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]


def preload(grading: bool) -> int:
    """Import what every run needs, once, in the parent. `grading`: also set the environment
    the runs are graded in (hypothesis's "grading" profile, one OpenMP thread); ``kata watch``
    keeps the learner's. Returns torch's thread count before the parent's switch to one."""
    if grading:
        os.environ["HYPOTHESIS_PROFILE"] = "grading"  # the same examples for every student, no shrinking
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # before any op: no OpenMP pool exists when the children fork
    # What every run imports, imported once here, ahead of the forks:
    import hypothesis
    import hypothesis.extra.numpy  # noqa: F401 (imported ahead)
    import numpy  # noqa: F401 (imported ahead)
    import pytest  # noqa: F401 (imported ahead)
    import torch._dynamo  # imported lazily (by optimizers), it re-wraps torch.manual_seed & co.
    import torch.fx.experimental.symbolic_shapes  # imported lazily (by gradcheck), with sympy
    import torch.nn.functional
    import torch.optim
    import torch.utils.data

    import grader.plugin
    import grader.testing

    for name in (*grader.plugin.INSTALLED, *_modules_of(grader.plugin), *_modules_of(grader.testing)):
        importlib.import_module(name)
    for name in ("cv2", "_pytest.pytester"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # a lesson that needs it will say so
    # What every pytest session imports, that nothing above did: pytest's own plugins, and what
    # reading pyproject.toml (its minversion too) and the debugging plugin import.
    from _pytest.config import default_plugins

    for name in (
        *(f"_pytest.{plugin}" for plugin in default_plugins),
        "_pytest.pytester_assertions",
        "tomllib",
        "packaging.version",
        "pdb",
    ):
        importlib.import_module(name)
    _hypothesis_constants()
    import gc

    gc.freeze()  # the preloaded objects stay shared with the children (no copy-on-write by gc)
    return threads


def _hypothesis_constants() -> None:
    """Have hypothesis read the constants of the modules loaded so far now, once, not in every
    run: it draws some examples from the literals in the local modules' source (the kit's among
    them) and reads them at its first test (the same set either way: each run adds its own
    modules'). Its cache of them goes to a folder that is then removed, not the working one."""
    import tempfile
    import warnings

    import hypothesis.configuration
    from hypothesis.errors import HypothesisSideeffectWarning
    from hypothesis.internal.conjecture.providers import _get_local_constants

    with tempfile.TemporaryDirectory(prefix="kata-hypothesis-") as scratch, warnings.catch_warnings():
        # (it warns of storage touched while its pytest plugin, imported above, is initialising)
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        hypothesis.configuration.set_hypothesis_home_dir(scratch)
        try:
            _get_local_constants()
        finally:
            hypothesis.configuration.set_hypothesis_home_dir(None)


def rewrite_ahead(texts: Iterable[bytes]) -> None:
    """pytest's assertion rewriting of these test files' texts, done here once for every run
    forked after (class grading: each run's grading copy holds the kit's test files at a path of
    its own, and parsing, rewriting and compiling one took 15-50 ms of every pytest session). A
    run's pytest finds the code by the file's text, and gets it with the file's own path in it;
    any other file is rewritten as pytest always does."""
    import ast
    import importlib.util
    import warnings

    from _pytest.assertion import rewrite

    original = getattr(rewrite, "_rewrite_test", None)
    if original is None:  # (a pytest that rewrites some other way: it keeps doing so)
        return
    done = {}
    with warnings.catch_warnings():  # (pytest's warnings of asserts on tuples: each run gives its own)
        warnings.simplefilter("ignore")
        for text in texts:
            tree = ast.parse(text)
            rewrite.rewrite_asserts(tree, text, "<test file>", None)
            done[text] = compile(tree, "<test file>", "exec", dont_inherit=True)

    def _rewrite_test(fn: Path, config) -> tuple[bytes, CodeType]:
        source = fn.read_bytes()
        code = done.get(source)
        if code is None or config.getini("enable_assertion_pass_hook"):
            return original(fn, config)
        return importlib.util.source_hash(source), _named(code, str(fn))

    rewrite._rewrite_test = _rewrite_test


def _named(code: CodeType, filename: str) -> CodeType:
    """`code`, and every function's code inside it, as compiled from `filename`."""
    consts = tuple(_named(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _modules_of(package) -> list[str]:
    """Every module of a package of the kit's."""
    return [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)]


def end_child(body: Callable[[], int]) -> NoReturn:
    """In a forked child: run `body` (its set-up, then pytest) and end the process with the
    status it returns, whatever happens; 70 (EX_SOFTWARE) with the traceback printed if it
    raised. Never returns into the parent's code, nor runs the parent's exit handlers."""
    code = 70
    try:
        code = int(body())
    except BaseException:  # noqa: BLE001 (the child must end here, whatever happened)
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
