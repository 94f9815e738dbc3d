"""Collection: ``exercises/NN`` and ``solutions/NN`` stand for ``tests/NN`` run against them.

``pytest exercises/07_stable`` collects tests/07_stable against the exercises tree, and
``pytest exercises/07_stable/stable.py`` (an editor's "test this file") collects the tests of
that file. CUDA tests are skipped where there is no GPU. The kit's hypothesis profile is
loaded before a test module that uses hypothesis is imported.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from grader.lessons import IMPLS, LESSON_RE
from grader.plugin.target import CODE, target, tree_of


class LessonDir(pytest.Directory):
    """``exercises/NN_topic`` or ``solutions/NN_topic``: collects ``tests/NN_topic`` against it."""

    @property
    def kata_tree(self) -> str:
        return self.path.parent.name

    def collect(self):
        tests = self.config.rootpath / "tests" / self.path.name
        if not tests.is_dir():
            raise self.CollectError(f"lesson {self.path.name} has no tests: expected the folder {tests}")
        for source in sorted(self.path.glob("*.py")):
            if self.session.isinitpath(source):
                yield LessonFile.from_parent(self, path=source)
        yield pytest.Dir.from_parent(self, path=tests)


class LessonFile(pytest.File):
    """``exercises/NN_topic/<stem>.py`` named on the command line: collects ``tests/NN_topic/test_<stem>.py``."""

    def collect(self):
        test_file = self.config.rootpath / "tests" / self.path.parent.name / f"test_{self.path.name}"
        if not test_file.is_file():
            raise self.CollectError(f"no tests check {self.path.name}: expected {test_file}")
        # Collected through its folder, so that the folder's conftest.py files load.
        yield OneFileDir.from_parent(self, path=test_file.parent, only=test_file)


class OneFileDir(pytest.Dir):
    """A tests/NN_topic folder of which only one test file is collected."""

    def __init__(self, *, only: Path, **kwargs) -> None:
        super().__init__(**kwargs)
        self.only = only

    @classmethod
    def from_parent(cls, parent, *, path: Path, only: Path):
        return cls._create(parent=parent, path=path, only=only)

    def collect(self):
        return [node for node in super().collect() if node.path == self.only]


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector):
    root = parent.config.rootpath
    if path.parent.parent == root and path.parent.name in IMPLS and LESSON_RE.match(path.name):
        return LessonDir.from_parent(parent, path=path)
    return None


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> None:
    """Load the kit's hypothesis profile before a test module that uses hypothesis is imported
    (``@given`` fixes its settings when the test is defined; the default 200 ms deadline
    would fail correct code on a busy machine). Modules without hypothesis do not pay for it."""
    if "grader.hypothesis_profile" not in sys.modules and "hypothesis" in module_path.read_text(
        encoding="utf-8", errors="replace"
    ):
        importlib.import_module("grader.hypothesis_profile")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.stash[CODE] = target(config).code(tree_of(item))
    cuda_items = [item for item in items if item.get_closest_marker("cuda")]
    if cuda_items:
        import torch

        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="it needs a CUDA device, which this machine does not have")
            for item in cuda_items:
                item.add_marker(skip)
