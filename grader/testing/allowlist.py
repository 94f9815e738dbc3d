"""What a learner's code uses that the kit's answer to the lesson does not: an allowlist read.

The kit's answer says what the lesson needs (`needs_of`): its imports, the modules it reaches
through attributes, the private attributes it reads, the attributes it assigns to objects it
did not make, the WATCHED names it uses. A learner's code that goes past that is a note for a
person (grader.testing.source.reaching): an import, a private attribute (``x._y``) of anything
but self or cls, getattr of anything but self by a name built at run time, an attribute
assigned to an object the code did not make (``t = torch; t.is_autocast_enabled = f``).
"""

from __future__ import annotations

import ast
import sys
from typing import Iterable, NamedTuple

from grader.testing.reaching import root

# Imports any lesson's answer may make beyond its own: the language's plainest tools.
ALWAYS_IMPORTED = frozenset(
    {
        "__future__",
        "math",
        "typing",
        "dataclasses",
        "functools",
        "itertools",
        "collections",
        "numbers",
        "abc",
        "enum",
        "torch",
    }
)

# torch's public namespaces, which honest code may reach where the answer does not (torch.linalg
# for a norm): the modules the source read asks of (`modules_used`) are the rest, torch's
# workings (torch.serialization, torch.utils.data.dataloader), which an attack reaches for.
PUBLIC_TORCH = frozenset(
    {
        "torch.nn",
        "torch.nn.functional",
        "torch.nn.init",
        "torch.linalg",
        "torch.special",
        "torch.fft",
        "torch.optim",
        "torch.amp",
        "torch.autograd",
        "torch.distributions",
        "torch.random",
        "torch.testing",
        "torch.utils.data",
        "torch.func",
    }
)

# Names honest code in these lessons has little use for and an attack much: a file read (a
# timed call told by /proc/self/maps), an object's address, a tensor subclass whose own
# __torch_dispatch__ runs ops while the recording mode is popped (the red team's, round 4).
WATCHED = frozenset(
    {
        "open",
        "id",
        "memoryview",
        "as_subclass",
        "__torch_dispatch__",
        "__torch_function__",
        "a torch.Tensor subclass",
        # a tensor's values as Python objects, where a loop runs no op (round 6: a row loop over
        # tolist(); where the answer has them too, the loop read still sees its map)
        "tolist",
        "item",
        "numpy",
    }
)


class Needs(NamedTuple):
    """What the kit's answer to a lesson uses of what `reaching` flags in a learner's."""

    imports: frozenset[str]  # the top-level modules it imports
    modules: frozenset[str]  # the modules it reaches, by their dotted names (torch.nn.functional)
    private: frozenset[str]  # the private attributes it reads
    assigned: frozenset[str]  # the attributes it assigns to objects it did not make
    names: frozenset[str]  # the WATCHED names it uses


def needs_of(answer: Iterable[ast.Module]) -> Needs:
    """What the answer's modules (parsed) use, with ALWAYS_IMPORTED and torch."""
    imports, private, assigned, modules, names = set(ALWAYS_IMPORTED), set(), set(), {"torch"}, set()
    for tree in answer:
        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports.add(_imported(node))
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                private.add(node.attr)
            if word := _watched(node):
                names.add(word)
        assigned.update(word.split(".")[-1].removesuffix(" =") for word, _ in assignments(tree, nodes, frozenset()))
        modules.update(module for module, _ in modules_used(nodes, imported=True))
    return Needs(
        imports=frozenset(imports),
        modules=frozenset(modules),
        private=frozenset(private),
        assigned=frozenset(assigned),
        names=frozenset(names),
    )


def not_needed(node: ast.AST, needs: Needs) -> str | None:
    """What `node` uses that the lesson's answer does not: an import, a private attribute, a
    name looked up at run time."""
    if isinstance(node, ast.Import):
        return next((f"import {a.name}" for a in node.names if a.name.split(".")[0] not in needs.imports), None)
    if isinstance(node, ast.ImportFrom) and _imported(node) not in needs.imports and node.level == 0:
        return f"from {node.module} import"
    if (
        isinstance(node, ast.ImportFrom)
        and node.module
        and node.level == 0
        and node.module.split(".")[0] not in ALWAYS_IMPORTED - {"torch"}
    ):
        return next(
            (
                f"{node.module}.{a.name} (not in the answer)"
                for a in node.names
                if f"{node.module}.{a.name}" in sys.modules
                and f"{node.module}.{a.name}" not in needs.modules | PUBLIC_TORCH
            ),
            None,
        )
    if (
        isinstance(node, ast.Attribute)
        and _is_private(node.attr)
        and node.attr not in needs.private
        and root(node) not in ("self", "cls")
    ):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and root(node.args[0]) != "self"
        and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))
    ):
        return "getattr(<a name built at run time>)"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("setattr", "delattr")
        and node.args
        and root(node.args[0]) not in ("self", "cls")
    ):
        return f"{node.func.id}(...)"
    if (word := _watched(node)) and word not in needs.names:
        return word
    return None


def past_the_answer(tree: ast.Module, nodes: list[ast.AST], modules: set[str], needs: Needs) -> list[tuple[str, int]]:
    """What a whole module (`tree`, its `nodes` walked) does that the answer does not: attributes
    it assigns to objects it did not make, modules of torch's workings it reaches (each with a line)."""
    found = [
        (word, line)
        for word, line in assignments(tree, nodes, modules)
        if word.split(".")[-1].removesuffix(" =") not in needs.assigned
    ]
    return found + [
        (f"{module} (not in the answer)", line)
        for module, line in modules_used(nodes)
        if module not in needs.modules | PUBLIC_TORCH and module.split(".")[0] not in ALWAYS_IMPORTED - {"torch"}
    ]


def _imported(node: ast.Import | ast.ImportFrom) -> str:
    """The top-level module an import statement reads from ("" for a relative one: the lesson's own)."""
    if isinstance(node, ast.ImportFrom):
        return "" if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def _watched(node: ast.AST) -> str | None:
    """The WATCHED name `node` uses, if any."""
    if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Attribute) and b.attr == "Tensor" for b in node.bases):
        return "a torch.Tensor subclass"
    name = (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else node.name
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        else None
    )
    return name if name in WATCHED else None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def modules_used(nodes: list[ast.AST], imported: bool = False) -> list[tuple[str, int]]:
    """The modules of an imported package's a source (its `nodes`, walked) reaches through
    attributes, by dotted name, each with a line: ``torch.serialization.sys`` reaches
    torch.serialization (and sys, which grader.testing.reaching names). A module is what the
    tests' process has imported by that name. With `imported`, the modules its imports name
    count too (`from torch import nn` reaches torch.nn): what an answer needs; a learner's
    imports are read as imports."""
    aliases, found = {}, []
    for node in nodes:
        if isinstance(node, ast.Import):
            aliases.update(
                {(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0]) for a in node.names}
            )
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            aliases.update({(a.asname or a.name): f"{node.module}.{a.name}" for a in node.names})
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names if imported else ():  # with its packages
            parts = name.split(".")
            found += [
                (dotted, node.lineno)
                for dotted in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if dotted in sys.modules
            ]
    for node in nodes:  # a name bound to a module or one of its attributes: `t = torch`
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and (dotted := _dotted(node.value, aliases)) is not None
        ):
            aliases[node.targets[0].id] = dotted
    for node in nodes:
        if isinstance(node, ast.Attribute) and (dotted := _dotted(node, aliases)) is not None and dotted in sys.modules:
            found.append((dotted, node.lineno))
    return found


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """What a Name or attribute chain names, through `aliases` (`t.nn` with t = torch: torch.nn)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([aliases[node.id], *reversed(parts)]) if isinstance(node, ast.Name) and node.id in aliases else None


def assignments(tree: ast.Module, nodes: list[ast.AST], modules: frozenset[str] | set[str]) -> list[tuple[str, int]]:
    """Attributes assigned (or handed to setattr/delattr) to an object the code did not make:
    a module, a name bound to an attribute chain of one (an alias, the module's own reaching
    into its functions), or a function's parameter; each as "root.attr =" with its line.
    `nodes` are the module's, walked; each function's body is walked once more, on its own."""
    found = []
    module_aliases = None  # the module's, seen by its functions
    for function in [tree, *(n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        body = [n for statement in function.body for n in ast.walk(statement)]
        aliases = _aliases(body, modules)
        if module_aliases is None:
            module_aliases = aliases
        foreign = set(modules) | module_aliases
        if not isinstance(function, ast.Module):
            foreign.update(a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs])
            foreign.discard("self")
            foreign.discard("cls")
        foreign |= aliases
        for node in body:
            for target in _targets(node):
                if isinstance(target, ast.Attribute) and root(target) in foreign:
                    found.append((f"{root(target)}.{target.attr} =", node.lineno))
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
                and root(node.args[0]) in foreign
            ):
                name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else "?"
                found.append((f"{root(node.args[0])}.{name} =", node.lineno))
    return found


def _aliases(body: list[ast.AST], modules: frozenset[str] | set[str]) -> set[str]:
    """The names a body (its nodes, walked) binds to a module or an attribute chain of one: `t = torch`."""
    return {
        t.id
        for node in body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, (ast.Name, ast.Attribute))
        and root(node.value) in modules
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def _targets(node: ast.AST) -> list[ast.expr]:
    """What `node` assigns to or deletes, tuples unpacked: `a.x, b[0] = ...` gives a.x and b[0]."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        pending = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        pending = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        pending = [node.optional_vars]
    else:
        return []
    found = []
    while pending:
        target = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
        elif isinstance(target, ast.Starred):
            pending.append(target.value)
        else:
            found.append(target)
    return found
