"""Effective PyTorch Kata's tooling: the pytest plugin, the test helpers and the `kata` command.

docs/ARCHITECTURE.md shows how the parts fit together.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__version__ = "0.1.0"

PACKAGE = Path(__file__).resolve().parent


def module_file(dotted: str, package: Path = PACKAGE) -> Path:
    """Where a module of this package (or of a copy of it, `package`) lives:
    "grader.learner.status" -> .../learner/status.py, whether it is there or not."""
    folder = package.joinpath(*dotted.split(".")[1:])
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def source_files() -> list[Path]:
    """Every module of the package, its own tests left out: what can change how a run is graded."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "tests" not in p.relative_to(PACKAGE).parts[:1])


@functools.cache
def source_digest() -> str:
    """A hash of every module of the package (`source_files`), read once a process."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
