"""What is under test: a tree, the reference with a mutant swapped in, or one file of code.

Resolved once per session into ``config.stash`` from the command line (``--mutant`` ranks
above ``--impl-file``, which ranks above a tree), and used by everything that needs to know
it: the ``lesson`` fixture, the TODO detection and the failure diagnoses (which frames are the
learner's), and the terminal summary.
"""

from __future__ import annotations

import functools
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from grader.learners_code import import_code
from grader.lessons import IMPLS, Lesson, mutant_target
from grader.plugin.remote import connection

TARGET = pytest.StashKey["Target"]()
CODE = pytest.StashKey[tuple[Path, ...]]()  # per item: where the code under test lives


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata", "Effective PyTorch Kata")
    group.addoption(
        "--impl",
        choices=IMPLS,
        default="exercises",
        help="which tree the tests under tests/ run against (default: exercises). "
        "Naming exercises/NN_topic or solutions/NN_topic on the command line picks it too.",
    )
    group.addoption(
        "--mutant",
        metavar="PATH",
        help="run against the reference with this known-wrong version (tests/NN/mutants/*.py) "
        "swapped in; used by `python -m grader verify`.",
    )
    group.addoption(
        "--impl-file",
        metavar="PATH",
        help="run the tests against the code in this one file instead of a tree (every module of the "
        "lesson is that file): a learner's notebook code written out by a grader, say.",
    )


@dataclass(frozen=True)
class Target:
    root: Path  # the kit
    tree: str  # the tree tests/ run against when no lesson folder names one (--impl)
    mutant: Path | None = None
    file: Path | None = None

    @classmethod
    def of(cls, config: pytest.Config) -> Target:
        mutant, file = config.getoption("mutant"), config.getoption("impl_file")
        return cls(
            root=config.rootpath,
            tree=config.getoption("impl"),
            mutant=config.rootpath / mutant if mutant else None,  # an absolute path stays as it is
            # A relative --impl-file is taken from where pytest was started.
            file=(config.invocation_params.dir / file).resolve() if file else None,
        )

    def code(self, tree: str) -> tuple[Path, ...]:
        """Where the code under test lives, for a test whose lesson folder names `tree`."""
        if self.mutant:
            return (self.root / "solutions", self.mutant.resolve())
        if self.file:
            return (self.file,)
        return (self.root / tree,)

    def load(self, test_file: Path, tree: str, remote=None):
        """The module ``tests/NN/test_<stem>.py`` checks, as this target has it; with `remote`
        (a grader.remote.connection.Connection), a stand-in for it in the process behind that."""
        name, stem = test_file.parent.name, test_file.stem.removeprefix("test_")
        if self.mutant:
            tree = "solutions"
        source = self.file if self.file and not self.mutant else self.root / tree / name / f"{stem}.py"
        if not source.is_file():
            raise NotImportable(f"{self.rel(source)} not found: the tests in {test_file.name} check it.", pytrace=False)
        try:
            # Inside the try: a mutant that does not parse is one that does not load.
            if self.mutant and mutant_target(self.mutant, Lesson(self.root, name)) != stem:
                pytest.skip(f"mutant {self.mutant.name} targets another module of {name}")
            if remote is not None:  # imported in the other process; its error comes back as data
                from grader.remote.loading import load  # only with a connection: it imports torch

                return load(remote, self.root, name, stem, tree, self.mutant, self.file, source)
            return import_code(self.root, name, stem, tree, self.mutant, self.file)
        except Exception as exc:  # noqa: BLE001 (SyntaxError, ImportError, anything its import raised: the learner's)
            message, where = self.describe_import_error(exc, self.mutant or source)
        # Raised outside the except block, so no chained traceback is printed.
        raise NotImportable(message, pytrace=False, where=where)

    def describe_import_error(self, exc: BaseException, source: Path) -> tuple[str, str]:
        """What the tests say of `source` when importing it raised `exc`: (the message, file:line)."""
        rel = self.rel(source)
        if isinstance(exc, SyntaxError) and exc.filename:
            where = f"{self.rel(Path(exc.filename))}:{exc.lineno}"
            line = (exc.text or "").rstrip()
            what = f"{type(exc).__name__}: {exc.msg}"
        else:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == source]
            frame = frames[-1] if frames else None
            where = f"{rel}:{frame.lineno}" if frame else rel
            line = (frame.line or "") if frame else ""
            what = f"{type(exc).__name__}: {exc}"
        text = f"{where}: {what} (the tests could not import {rel})"
        if line:
            text += f"\n    {line.strip()}"
        return text + "\n  Fix that line, save, and run the tests again.", where

    def rel(self, path: Path | str) -> str:
        """`path` relative to the kit, where it lies inside it."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


class NotImportable(pytest.fail.Exception):
    """The module under test could not be imported; one short message, no traceback."""

    def __init__(self, msg: str, pytrace: bool = False, where: str | None = None) -> None:
        super().__init__(msg, pytrace=pytrace)
        self.where = where


def pytest_configure(config: pytest.Config) -> None:
    config.stash[TARGET] = Target.of(config)


def target(config: pytest.Config) -> Target:
    return config.stash[TARGET]


def code_of(item: pytest.Item) -> tuple[Path, ...]:
    """Where the code this item tests lives (its lesson folder's tree, or the session's target)."""
    return item.stash[CODE]


def frames(exc: BaseException) -> list:
    """`exc`'s traceback entries, outermost first."""
    found, tb = [], exc.__traceback__
    while tb is not None:
        found.append(tb)
        tb = tb.tb_next
    return found


def innermost(exc: BaseException):
    """The traceback entry where `exc` was raised, or None."""
    return next(iter(reversed(frames(exc))), None)


def where(tb, config: pytest.Config) -> str:
    """A traceback entry as "path/relative/to/the/kit.py:LINE"."""
    return f"{target(config).rel(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def shown(tb, config: pytest.Config) -> str:
    """A traceback entry as "function (path.py:LINE)"."""
    code = tb.tb_frame.f_code
    return f"{getattr(code, 'co_qualname', code.co_name)} ({where(tb, config)})"


@contextmanager
def leaving_hypothesis(item: pytest.Item, final: Callable[[BaseException], bool], carrier: type[BaseException]):
    """Within the block, in a @given test: an error `final` accepts leaves hypothesis at the
    example that raised it, as a `carrier` (a BaseException, which hypothesis lets through
    without shrinking or trying more examples) whose __cause__ it is. Elsewhere, nothing."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    if handle is None:
        yield
        return
    test = handle.inner_test  # hypothesis calls this (reassignable) attribute for each example

    @functools.wraps(test)
    def carried_out(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except BaseException as exc:
            if not final(exc):
                raise
            raise carrier() from exc

    handle.inner_test = carried_out
    try:
        yield
    finally:
        handle.inner_test = test


def tree_of(node: pytest.Node) -> str:
    """The tree a node's tests run against: its lesson folder's (the `kata_tree` of
    grader.plugin.collection's LessonDir), else --impl's."""
    for parent in node.listchain():
        tree = getattr(parent, "kata_tree", None)
        if isinstance(tree, str):
            return tree
    return target(node.config).tree


@pytest.fixture(scope="module")
def lesson(request: pytest.FixtureRequest):
    """The module this test file checks: tests/NN/test_<stem>.py checks <tree>/NN/<stem>.py."""
    return target(request.config).load(Path(request.node.path), tree_of(request.node), connection(request.config))
