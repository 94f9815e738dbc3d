"""The grader modules a student release ships: what a learner's runs and commands import.

A release names where a learner's code starts (`LEARNER_ENTRY`) and follows the import
statements from there, so what only an instructor runs stays out without a list that names it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader import module_file

# Where what a learner runs starts (a package stands for all its modules): the `kata` command and
# its learner's commands, the plugin and test helpers of every test run, and what a notebook's
# grade cells call ("Check your work"). The bundle's grader/ is these and every module of the
# package they import (`learner_modules`), so class grading, verify, release, the notebook
# builders and the tooling's own tests stay out without being named.
LEARNER_ENTRY = (
    "grader.__main__",
    "grader.cli",
    "grader.plugin",
    "grader.testing",
    "grader.learner",
    "grader.notebooks.grade_cell",
)


def learner_modules(package: Path) -> set[Path]:
    """The files of `package` (a grader/ folder) that LEARNER_ENTRY names, and every module of
    the package they import, read from their import statements (with the packages' __init__)."""

    def module(dotted: str) -> Path | None:
        path = module_file(dotted, package)
        return path if path.is_file() else None  # a name imported from a module, not a module

    def entry(dotted: str) -> list[Path]:
        folder = package.joinpath(*dotted.split(".")[1:])
        return sorted(folder.rglob("*.py")) if folder.is_dir() else [m for m in [module(dotted)] if m]

    pending = [path for name in LEARNER_ENTRY for path in entry(name)]
    found: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        folder = path.parent
        while folder != package.parent:  # the packages it is in
            pending.append(folder / "__init__.py")
            folder = folder.parent
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if node in optional:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            pending += [m for name in names if name.split(".")[0] == "grader" and (m := module(name))]
    return {path for path in found if path.is_file()}


def _optional_imports(tree: ast.Module) -> set[ast.AST]:
    """The import statements in the body of a ``try`` that catches ImportError: the code has
    its way on without them (``kata status`` forks its runs through class grading's runner,
    and runs each lesson fresh where that is missing), so a release leaves them out."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h.type) for h in node.handlers):
            found |= {n for part in node.body for n in ast.walk(part) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return found


def _catches_import_error(caught: ast.expr | None) -> bool:
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)
