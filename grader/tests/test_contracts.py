"""Every lesson's test module ends with its contract table, `CONTRACT` (docs/TESTING.md): the
promises of the lesson, each with the tests that check it. The table names only tests that exist, and
every test of the module is in it, so a renamed or a new test cannot leave it behind."""

from __future__ import annotations

import ast
import re

import pytest

from grader.lessons import all_lessons
from grader.tests.kits import ROOT

MODULES = sorted(path for lesson in all_lessons(ROOT) for path in lesson.tests_dir.glob("test_*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.parent.name)
def test_the_contract_table_names_every_test_and_only_those(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = contract(tree)
    assert re.search(r"^Contract\b.*->", doc, re.M), f"{path}: no contract table"
    named = set(re.findall(r"\btest_\w+", doc))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
    assert not named - defined, f"{path}: the contract table names tests that do not exist: {sorted(named - defined)}"
    assert not defined - named, f"{path}: tests that check no promise of the table: {sorted(defined - named)}"


def contract(tree: ast.Module) -> str:
    """The text of the module's `CONTRACT = \"\"\"...\"\"\"` (the old place, its docstring, while lessons move)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["CONTRACT"]:
            return ast.literal_eval(node.value)
    return ast.get_docstring(tree) or ""
