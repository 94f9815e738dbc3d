"""Effective PyTorch Kata's tooling: the pytest plugin, the test helpers and the `kata` command.

docs/ARCHITECTURE.md shows how the parts fit together.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

PACKAGE = Path(__file__).resolve().parent


def module_file(dotted: str) -> Path:
    """Where a module of this package lives ("grader.learner.status" -> .../learner/status.py),
    whether it is there or not."""
    parts = dotted.split(".")[1:]
    folder = PACKAGE.joinpath(*parts)
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def source_files() -> list[Path]:
    """Every module of the package, its own tests left out: what can change how a run is graded."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "tests" not in p.relative_to(PACKAGE).parts[:1])
