"""What code reaches for past its own, to act on its grader rather than on its inputs.

The interpreter's frames, modules and objects, threads (which a dispatch mode does not follow),
torch's C module and its modes (whose guards switch the recording modes off), another
library's attributes patched or looked up by a name built at run time (``vars(torch)[...]``).
A lesson's answer needs none of these; a run that lies to the checks about what it did needs
one of them. Each is flagged wherever it is (grader.testing.source.reaching), whatever the
lesson's answer uses; grader.testing.allowlist adds what that answer does not use.
"""

from __future__ import annotations

import ast

REACHING_MODULES = frozenset(
    {
        "grader",
        "pytest",
        "_pytest",
        "inspect",
        "gc",
        "ctypes",
        "importlib",
        "builtins",
        "traceback",
        "threading",
        "_thread",
        "concurrent",
        "multiprocessing",
        "signal",
        "faulthandler",
        "dis",
        "marshal",
        "runpy",
        "code",
        "subprocess",
        "socket",
        "mmap",
        "resource",
        "atexit",
        "sysconfig",
        "site",
    }
)
REACHING_ATTRIBUTES = frozenset(
    {
        "__globals__",
        "__builtins__",
        "__code__",
        "__closure__",
        "__subclasses__",
        "__import__",
        "__loader__",
        "__spec__",
        "f_back",
        "f_globals",
        "f_locals",
        "f_code",
        "f_builtins",
        "f_trace",
        "tb_frame",
        "tb_next",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "_getframe",
        "_current_frames",
        "_python_dispatch",
        "_set_dispatch_mode",
        "_pop_mode",
        "_push_mode",
        "__dict__",
        "_C",
        "overrides",
        "TorchFunctionMode",
        "TorchDispatchMode",
    }
)
REACHING_NAMES = frozenset({"__builtins__", "__loader__", "__spec__"})  # read as bare names
REACHING_SYS = frozenset({"modules", "meta_path", "path_hooks", "path", "settrace", "setprofile", "addaudithook"})
REACHING_CALLS = frozenset({"__import__", "eval", "exec", "compile", "globals", "breakpoint", "vars"})
# Modules another module holds as an attribute (torch.serialization.sys, torch.utils.data.dataloader.threading):
# reached that way, no import statement names them.
REACHING_AS_ATTRIBUTES = frozenset(
    {
        "sys",
        "os",
        "threading",
        "_thread",
        "queue",
        "asyncio",
        "concurrent",
        "multiprocessing",
        "subprocess",
        "socket",
        "ctypes",
        "importlib",
        "builtins",
        "gc",
        "inspect",
        "signal",
    }
)


def imported_modules(nodes: list[ast.AST]) -> tuple[set[str], set[str]]:
    """The names a module's imports (among its `nodes`) bind to modules, and those bound to sys."""
    imported = [(n, a) for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names]
    modules = {(a.asname or a.name).split(".")[0] for n, a in imported if isinstance(n, ast.Import) or _is_module(n, a)}
    sys_names = {a.asname or a.name for n, a in imported if a.name == "sys"}  # (from torch import sys too)
    return modules, sys_names


def _is_module(statement: ast.ImportFrom, alias: ast.alias) -> bool:
    """Whether ``from M import NAME`` likely binds a module (``from torch import nn``): a lower-case name."""
    return (
        alias.name.islower()
        and not alias.name.startswith("_")
        and statement.module is not None
        and statement.module.split(".")[0] in ("torch", "numpy")
    )


def reaches(node: ast.AST, modules: set[str], sys_names: set[str]) -> str | None:
    """The word for what `node` reaches for, or None: an import of one of REACHING_MODULES or of
    a private module, an attribute in REACHING_ATTRIBUTES, a name in REACHING_NAMES, a call of
    one of REACHING_CALLS, one of REACHING_SYS read off ``sys``, an attribute of an imported
    module assigned or handed to setattr or delattr, getattr of one by a name built at run time."""
    if isinstance(node, ast.Import):
        return next((a.name for a in node.names if a.name.split(".")[0] in REACHING_MODULES or _private(a.name)), None)
    if isinstance(node, ast.ImportFrom):
        if node.module and (node.module.split(".")[0] in REACHING_MODULES or _private(node.module)):
            return node.module
        return next(
            (
                a.name
                for a in node.names
                if a.name in REACHING_ATTRIBUTES | REACHING_AS_ATTRIBUTES
                or a.name.split(".")[0] in REACHING_MODULES  # (from torch import sys: the red team's, round 5)
                or (node.module == "sys" and a.name in REACHING_SYS)
            ),
            None,
        )
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(("grader.", "_pytest")):
        return repr(node.value[:40])  # a module of the grader's named as a string: sys.modules.get("grader.testing...")
    if isinstance(node, ast.Name) and node.id in REACHING_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in REACHING_AS_ATTRIBUTES:
        return node.attr
    if isinstance(node, ast.Attribute) and (
        node.attr in REACHING_ATTRIBUTES
        or (node.attr in REACHING_SYS and isinstance(node.value, ast.Name) and node.value.id in sys_names)
    ):
        return node.attr
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return next(
            (f"{root(t)}.{t.attr} =" for t in targets if isinstance(t, ast.Attribute) and root(t) in modules), None
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name, args = node.func.id, node.args
        if name in REACHING_CALLS:
            return f"{name}()"
        if name in ("setattr", "delattr") and args and root(args[0]) in modules:
            return f"{name}({root(args[0])}, ...)"
        if (
            name == "getattr"
            and len(args) >= 2
            and root(args[0]) in modules
            and not (isinstance(args[1], ast.Constant) and isinstance(args[1].value, str))
        ):
            return f"getattr({root(args[0])}, <a name built at run time>)"
    return None


def handed_on(nodes: list[ast.AST]) -> list[tuple[str, int]]:
    """getattr, setattr, delattr or vars named other than as the function of a call (map(getattr,
    ...), functools.reduce(getattr, ...)): a lookup whose names no call shows."""
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    return [
        (f"{n.id} (handed on)", n.lineno)
        for n in nodes
        if isinstance(n, ast.Name) and n.id in ("getattr", "setattr", "delattr", "vars") and id(n) not in called
    ]


def _private(module: str) -> bool:
    """A module path with a private part (``torch._C``, ``torch.utils._python_dispatch``)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def root(node: ast.AST) -> str | None:
    """The name an attribute chain starts from (``torch`` for ``torch.nn.functional.softmax``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
