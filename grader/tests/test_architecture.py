"""docs/ARCHITECTURE.md names every module of the grader package, and only modules that exist;
lesson code knows nothing of grading."""

from __future__ import annotations

import re

from grader import PACKAGE, source_files
from grader.tests.kits import ROOT


def test_the_architecture_page_names_every_module_and_only_those():
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = {name for name in re.findall(r"`(grader/[\w/]+\.py)`", page) if not name.startswith("grader/tests/")}
    # An empty __init__.py only makes a folder a package: the folder is what the page names.
    modules = {f"grader/{path.relative_to(PACKAGE).as_posix()}" for path in source_files() if path.stat().st_size}
    assert not named - modules, f"named but not in the package: {sorted(named - modules)}"
    assert not modules - named, f"in the package but not on the page: {sorted(modules - named)}"


def test_lesson_code_imports_only_the_test_helpers_of_the_grader():
    imports = re.compile(r"^\s*(?:from|import)\s+(grader[\w.]*)", re.M)
    for tree in ("exercises", "solutions", "tests"):
        for path in sorted((ROOT / tree).rglob("*.py")):
            for module in imports.findall(path.read_text(encoding="utf-8")):
                assert module == "grader.testing" or module.startswith("grader.testing."), f"{path}: imports {module}"


def test_the_plugin_registers_every_module_of_it_that_has_hooks_or_fixtures():
    import ast

    import grader.plugin

    def is_plugin_code(node: ast.stmt) -> bool:
        if not isinstance(node, ast.FunctionDef):
            return False
        marks = [ast.unparse(d) for d in node.decorator_list]
        return (node.name.startswith("pytest_") and not any("hookspec" in m for m in marks)) or any("fixture" in m for m in marks)

    hooked = {path.stem for path in (PACKAGE / "plugin").glob("*.py")
              if any(is_plugin_code(node) for node in ast.parse(path.read_text(encoding="utf-8")).body)}
    assert hooked - {"__init__"} == set(grader.plugin.MODULES)
