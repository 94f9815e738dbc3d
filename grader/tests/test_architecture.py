"""docs/ARCHITECTURE.md names every module of the grader package, and only modules that exist;
lesson code knows nothing of grading."""

from __future__ import annotations

import ast
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
        return (node.name.startswith("pytest_") and not any("hookspec" in m for m in marks)) or any(
            "fixture" in m for m in marks
        )

    hooked = {
        path.stem
        for path in (PACKAGE / "plugin").glob("*.py")
        if any(is_plugin_code(node) for node in ast.parse(path.read_text(encoding="utf-8")).body)
    }
    assert hooked - {"__init__"} == set(grader.plugin.MODULES)
    # --kata-remote's part is a plugin object (grader.plugin.remote.RemoteSession) that the module
    # registers at configure time only where the option is given, as pytest's junitxml does: the
    # module itself only declares the options.
    from grader.plugin import remote

    assert {name for name in vars(remote) if name.startswith("pytest_")} == {"pytest_addoption", "pytest_configure"}
    assert any(name.startswith("pytest_") for name in vars(remote.RemoteSession))


def _imports() -> dict[str, set[str]]:
    """Each module of the grader package (its tests aside) -> the grader modules it imports,
    function-local imports included, read with ast."""
    import ast

    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[1:2] == ("tests",):
            continue
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    found = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = (
                    ".".join(package[: len(package) - node.level + 1] + [node.module or ""])
                    if node.level
                    else node.module or ""
                )
                targets.update(f"{base.strip('.')}.{alias.name}" for alias in node.names)
        deps = set()
        for target in targets:
            while target and target not in modules:  # `from grader.x import name`: the module grader.x
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        found[name] = deps
    return found


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.add(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in edges:
        if node not in index:
            visit(node)
    return found


LAYERS = ("grader.plugin", "grader.remote", "grader.testing")


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_plugin_the_remote_protocol_and_the_test_helpers_import_in_one_direction():
    """No module of the grader imports, through others, itself (function-local imports included).
    plugin/ may import remote/ and testing/; remote/ may import testing/; testing/ imports only
    itself and grader's own leaf modules (grader/*.py that import none of these layers)."""
    edges = _imports()
    assert not _cycles(edges), f"import cycles: {_cycles(edges)}"
    upward = sorted(
        (module, dep)
        for module, deps in edges.items()
        for dep in deps
        if (_in(module, "grader.testing") or _in(module, "grader.remote")) and _in(dep, "grader.plugin")
    )
    assert not upward, f"imports of the plugin from below it: {upward}"
    leaves = {
        m
        for m in edges
        if m.count(".") == 1
        and m not in ("grader.cli", "grader.__main__")
        and not any(_in(dep, layer) for dep in edges[m] for layer in (*LAYERS, "grader.grading"))
    }
    beyond = sorted(
        (module, dep)
        for module, deps in edges.items()
        if _in(module, "grader.testing")
        for dep in deps
        if not _in(dep, "grader.testing") and dep not in leaves
    )
    assert not beyond, f"grader.testing imports what is above it: {beyond}"


def test_no_module_of_the_plugin_the_remote_protocol_or_the_test_helpers_keeps_mutable_state():
    """A session's state lives in config.stash and the running test's context, never in a
    module: constant tables are tuples, frozensets or MappingProxyType. The one exception is
    grader.running.TEST, the ContextVar through which the tests' helpers reach the running test
    (a ContextVar's value is per context, set and reset by the plugin around each test)."""
    import ast

    containers = {
        "list",
        "dict",
        "set",
        "defaultdict",
        "Counter",
        "OrderedDict",
        "deque",
        "WeakKeyDictionary",
        "WeakValueDictionary",
        "WeakSet",
        "local",
        "Lock",
        "RLock",
        "Event",
        "bytearray",
        "ContextVar",
    }
    allowed = {"grader.running:TEST"}
    found = set()
    for module in _imports():
        if not (any(_in(module, layer) for layer in LAYERS) or module == "grader.running"):
            continue
        path = PACKAGE.parent.joinpath(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            target, value = (
                (node.targets[0], node.value)
                if isinstance(node, ast.Assign)
                else (node.target, node.value)
                if isinstance(node, ast.AnnAssign)
                else (None, None)
            )
            if value is None:
                continue
            mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
                isinstance(value, ast.Call) and ast.unparse(value.func).rpartition(".")[2] in containers
            )
            if mutable:
                found.add(f"{module}:{ast.unparse(target)}")
        found.update(
            f"{module}:global {', '.join(node.names)}" for node in ast.walk(tree) if isinstance(node, ast.Global)
        )
    assert not found - allowed, sorted(found - allowed)


def test_no_module_of_the_grader_is_over_400_lines():
    """One concern a module: a newcomer reads any of them top to bottom in one sitting."""
    long = {
        f"grader/{path.relative_to(PACKAGE).as_posix()}": lines
        for path in source_files()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, f"modules over 400 lines: {long}"


def test_each_lesson_test_file_starts_with_its_tests():
    """A lesson's test file reads top down: its first test within its first 80 lines, the helpers and
    tables after the tests (grader.testing.below) and the contract table at the end (CONTRACT)."""
    late = {}
    for path in sorted(ROOT.glob("tests/*/test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        first = min(
            node.lineno for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        )
        first = min(
            [
                first,
                *(
                    d.lineno
                    for node in tree.body
                    if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
                    for d in node.decorator_list
                ),
            ]
        )
        if first > 80:
            late[path.relative_to(ROOT).as_posix()] = first
    assert not late, f"test files whose first test starts after line 80: {late}"


def test_the_architecture_page_opens_with_a_glossary_of_at_most_15_words():
    """A newcomer learns at most 15 nouns before reading on (docs/ARCHITECTURE.md, "Words this page uses")."""
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    glossary = page.split("## Words this page uses", 1)[1].split("\n## ", 1)[0]
    words = re.findall(r"^- \*\*(.+?)\*\*:", glossary, re.M)
    assert 0 < len(words) <= 15, words
