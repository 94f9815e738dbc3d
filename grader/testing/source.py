"""What the learner's source names, read without running it: a second look at forbidden built-ins.

Under --kata-remote the code under test runs in another process, and so does the dispatch mode
that sees its ops (grader.testing.forbid): code that knows it is watched can keep a built-in
out of that mode's sight (a worker thread, a check for an active mode). Its source cannot hide
the name that way. So when a check that forbids ops passes, the tests' process reads the
functions the check called, and every definition of the module they reach by name, for the
ops' Python spellings. A spelling found there is a disagreement for a person to read, not a
failure: the branch that names it may simply not have run on the test's inputs. The same
goes for loops (`looped`): the ops that show a loop are counted in the other process too.

Read are attribute names (``torch.softmax``, ``x.softmax``, ``nn.Softmax``), names imported
(``from torch.nn.functional import softmax as s``) and the string given to ``getattr``. Not
read: names built at run time (``getattr(torch, "soft" + "max")``), which the dispatch mode sees
where the code does not hide from it, and other modules.
"""

from __future__ import annotations

import ast
import builtins
import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple


@dataclass(frozen=True)
class Spelling:
    """One place a source names a forbidden built-in, e.g. ("stable_softmax.py", 12, "softmax")."""

    file: str
    line: int
    word: str


def normalise(word: str) -> str:
    """A name as spellings are compared: lower case, no underscores (``LogSoftmax`` is ``log_softmax``)."""
    return word.lower().replace("_", "")


def spelled(files: Iterable[Path], functions: Iterable[str], words: frozenset[str]) -> list[Spelling]:
    """Where the definitions of `functions`, in the module the `files` make together (a later
    file's definitions replace an earlier one's, as a mutant's replace the reference's), and the
    definitions they reach by name, name one of `words` (normalised: `normalise`). A module
    class's ``...Loss`` suffix is left out in the comparison (``nn.CrossEntropyLoss``)."""
    # A test checks the same functions many times over: each file is read once while unchanged.
    return list(_spelled(tuple(_stamp(Path(file)) for file in files), tuple(functions), words))


def _stamp(file: Path) -> tuple[str, int, int]:
    try:
        stat = file.stat()
    except OSError:
        return str(file), -1, -1
    return str(file), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=256)
def _spelled(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...], words: frozenset[str]) -> tuple[Spelling, ...]:
    found: list[Spelling] = []
    for sub, file in _reached(files, functions):
        word = _word(sub)
        if word is not None and (normalise(word) in words or normalise(word).removesuffix("loss") in words):
            found.append(Spelling(file, getattr(sub, "lineno", 0), word))
    return tuple(sorted(set(found), key=lambda s: (s.file, s.line, s.word)))


# What runs Python code once per item, as a source spells it: a loop statement or a
# comprehension (not recursion, nor map over a function).
LOOPS = {ast.For: "for", ast.AsyncFor: "for", ast.While: "while", ast.ListComp: "a list comprehension",
         ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension", ast.GeneratorExp: "a generator"}
LOOPING_CALLS = frozenset({"map", "filter", "reduce"})  # a loop without a loop's words (the red team's, round 6)


def looped(files: Iterable[Path], functions: Iterable[str]) -> list[Spelling]:
    """Where the definitions of `functions` (as `spelled` reads them), and the definitions they
    reach by name, loop in Python: each `LOOPS` construct, with the word for it."""
    return list(_looped(tuple(_stamp(Path(file)) for file in files), tuple(functions)))


@functools.lru_cache(maxsize=256)
def _looped(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> tuple[Spelling, ...]:
    found = {Spelling(file, sub.lineno, LOOPS[type(sub)] if type(sub) in LOOPS else f"{_called(sub)}()")
             for sub, file in _reached(files, functions) if type(sub) in LOOPS or _looping(sub)}
    return tuple(sorted(found, key=lambda s: (s.file, s.line, s.word)))


def _looping(node: ast.AST) -> bool:
    """A LOOPING_CALLS call of code of the module's own (a lambda, a name that is not a built-in):
    map(str, where) formats, map(lambda i: ..., range(n)) loops."""
    if _called(node) not in LOOPING_CALLS or not node.args:
        return False
    first = node.args[0]
    return not (isinstance(first, ast.Name) and hasattr(builtins, first.id))


def _called(node: ast.AST) -> str | None:
    """The name a call calls (`map` for map(...) and functools.map(...)), or None."""
    if not isinstance(node, ast.Call):
        return None
    return node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None


def _reached(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> Iterable[tuple[ast.AST, str]]:
    """Every node of the code that runs at import (top-level statements other than definitions
    and imports: a thread started there runs whatever it names) and of the definitions of
    `functions`, and of those they reach by name, with its file."""
    definitions: dict[str, tuple[ast.AST, str]] = {}
    import_time: list[tuple[ast.stmt, str]] = []  # statements that run code at import: not a def, class or import
    for file, _, _ in files:
        try:
            tree = ast.parse(Path(file).read_text(encoding="utf-8"), file)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # nothing read: nothing found
            continue
        for statement in tree.body:
            for name, node in bindings(statement):
                definitions[name] = (node, file)
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                                          ast.ImportFrom)) and not _a_docstring(statement):
                import_time.append((statement, file))
    todo, seen = list(functions), set()
    for statement, file in import_time:  # what runs at import reaches as much as a call does
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name) and sub.id in definitions:
                todo.append(sub.id)
            yield sub, file
    while todo:
        name = todo.pop()
        if name in seen or name not in definitions:
            continue
        seen.add(name)
        node, file = definitions[name]
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in definitions:
                todo.append(sub.id)
            yield sub, file


def _a_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def bindings(statement: ast.stmt) -> list[tuple[str, ast.AST]]:
    """The module-level names a statement binds, each with what binds it (an import's own
    alias: ``from m import a, b`` binds `a` to ``a`` alone)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(statement.name, statement)]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [((a.asname or a.name).split(".")[0], a) for a in statement.names]
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [(n.id, statement) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _word(node: ast.AST) -> str | None:
    """The name a node spells that could reach a built-in: an attribute, an imported name, the
    string a ``getattr`` is given."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.alias):
        return node.name.rsplit(".", 1)[-1]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        return node.args[1].value
    return None


# What code reaches for to act on its grader rather than on its inputs: the interpreter's
# frames, modules and objects, threads (which a dispatch mode does not follow), torch's C
# module and its modes (whose guards switch the recording modes off), another library's
# attributes patched or looked up by a name built at run time (``vars(torch)[...]``). A
# lesson's answer needs none of these; a run that lies to the checks about what it did needs
# one of them.
REACHING_MODULES = frozenset({
    "grader", "pytest", "_pytest", "inspect", "gc", "ctypes", "importlib", "builtins", "traceback", "threading",
    "_thread", "concurrent", "multiprocessing", "signal", "faulthandler", "dis", "marshal", "runpy", "code",
    "subprocess", "socket", "mmap", "resource", "atexit", "sysconfig", "site",
})
REACHING_ATTRIBUTES = frozenset({
    "__globals__", "__builtins__", "__code__", "__closure__", "__subclasses__", "__import__", "__loader__", "__spec__",
    "f_back", "f_globals", "f_locals", "f_code", "f_builtins", "f_trace", "tb_frame", "tb_next", "gi_frame", "cr_frame",
    "ag_frame", "_getframe", "_current_frames", "_python_dispatch", "_set_dispatch_mode", "_pop_mode", "_push_mode",
    "__dict__", "_C", "overrides", "TorchFunctionMode", "TorchDispatchMode",
})
REACHING_NAMES = frozenset({"__builtins__", "__loader__", "__spec__"})  # read as bare names
REACHING_SYS = frozenset({"modules", "meta_path", "path_hooks", "path", "settrace", "setprofile", "addaudithook"})
REACHING_CALLS = frozenset({"__import__", "eval", "exec", "compile", "globals", "breakpoint", "vars"})
# Modules another module holds as an attribute (torch.serialization.sys, torch.utils.data.dataloader.threading):
# reached that way, no import statement names them.
REACHING_AS_ATTRIBUTES = frozenset({"sys", "os", "threading", "_thread", "queue", "asyncio", "concurrent",
                                    "multiprocessing", "subprocess", "socket", "ctypes", "importlib", "builtins", "gc",
                                    "inspect", "signal"})


# Imports any lesson's answer may make beyond its own: the language's plainest tools.
ALWAYS_IMPORTED = frozenset({"__future__", "math", "typing", "dataclasses", "functools", "itertools", "collections",
                             "numbers", "abc", "enum", "torch"})


def reaching(files: Iterable[Path], answer: Iterable[Path] = ()) -> list[Spelling]:
    """Where the `files` (each read whole, import-time code included) reach past their own
    code: an import of one of REACHING_MODULES or of a private module (``torch._C``), an
    attribute in REACHING_ATTRIBUTES, a name in REACHING_NAMES, a call of one of REACHING_CALLS,
    one of REACHING_SYS read off ``sys``, an attribute of an imported module assigned
    (``torch.finfo = f``) or handed to setattr or delattr, and getattr of one by a name built at
    run time. Where the lesson's `answer` (the kit's files) is given, also what an answer does not
    need, by allowlist: an import that neither it nor ALWAYS_IMPORTED makes, a private attribute
    (``x._y``) of anything but self or cls, getattr of anything but self by a name built at run
    time, and an attribute the answer never assigns, assigned to an object the code did not make
    (a module, an alias of one, a parameter: ``t = torch; t.is_autocast_enabled = f``)."""
    stamps = tuple(_stamp(Path(file)) for file in answer)
    return list(_reaching(tuple(_stamp(Path(file)) for file in files), _needed(stamps) if stamps else None))


class _Needs(NamedTuple):
    """What the kit's answer to a lesson uses of what `reaching` flags in a learner's."""

    imports: frozenset[str]  # the top-level modules it imports
    modules: frozenset[str]  # the modules it reaches, by their dotted names (torch.nn.functional)
    private: frozenset[str]  # the private attributes it reads
    assigned: frozenset[str]  # the attributes it assigns to objects it did not make
    names: frozenset[str]  # the WATCHED names it uses


# torch's public namespaces, which honest code may reach where the answer does not (torch.linalg
# for a norm): the modules the source read asks of (`_modules_used`) are the rest, torch's
# workings (torch.serialization, torch.utils.data.dataloader), which an attack reaches for.
PUBLIC_TORCH = frozenset({"torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.special",
                          "torch.fft", "torch.optim", "torch.amp", "torch.autograd", "torch.distributions",
                          "torch.random", "torch.testing", "torch.utils.data", "torch.func"})

# Names honest code in these lessons has little use for and an attack much: a file read (a
# timed call told by /proc/self/maps), an object's address, a tensor subclass whose own
# __torch_dispatch__ runs ops while the recording mode is popped (the red team's, round 4).
WATCHED = frozenset({"open", "id", "memoryview", "as_subclass", "__torch_dispatch__", "__torch_function__",
                     "a torch.Tensor subclass",
                     # a tensor's values as Python objects, where a loop runs no op (round 6: a row loop over
                     # tolist(); where the answer has them too, the loop read still sees its map)
                     "tolist", "item", "numpy"})


@functools.lru_cache(maxsize=16)
def _needed(answer: tuple[tuple[str, int, int], ...]) -> _Needs:
    imports, private, assigned, modules, names = set(ALWAYS_IMPORTED), set(), set(), {"torch"}, set()
    for file, _, _ in answer:
        try:
            tree = ast.parse(Path(file).read_text(encoding="utf-8"), file)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        imports.update(_imported(node) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))
        private.update(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _is_private(n.attr))
        assigned.update(word.split(".")[-1].removesuffix(" =") for word, _ in _assignments(tree, frozenset()))
        modules.update(module for module, _ in _modules_used(tree, imported=True))
        names.update(word for node in ast.walk(tree) if (word := _watched(node)))
    return _Needs(imports=frozenset(imports), modules=frozenset(modules), private=frozenset(private),
                  assigned=frozenset(assigned), names=frozenset(names))


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """What a Name or attribute chain names, through `aliases` (`t.nn` with t = torch: torch.nn)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([aliases[node.id], *reversed(parts)]) if isinstance(node, ast.Name) and node.id in aliases else None


def _modules_used(tree: ast.AST, imported: bool = False) -> list[tuple[str, int]]:
    """The modules of an imported package's a source reaches through attributes, by dotted name,
    each with a line: ``torch.serialization.sys`` reaches torch.serialization (and sys, which
    `_reaches` names). A module is what the tests' process has imported by that name. With
    `imported`, the modules its imports name count too (`from torch import nn` reaches torch.nn):
    what an answer needs; a learner's imports are read as imports."""
    aliases, found = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0])
                            for a in node.names})
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            aliases.update({(a.asname or a.name): f"{node.module}.{a.name}" for a in node.names})
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names if imported else ():  # with its packages
            parts = name.split(".")
            found += [(dotted, node.lineno) for dotted in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                      if dotted in sys.modules]
    for node in ast.walk(tree):  # a name bound to a module or one of its attributes: `t = torch`
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and (dotted := _dotted(node.value, aliases)) is not None):
            aliases[node.targets[0].id] = dotted
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        parts, inner = [node.attr], node.value
        while isinstance(inner, ast.Attribute):
            parts.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and inner.id in aliases:
            dotted = ".".join([aliases[inner.id], *reversed(parts)])
            if dotted in sys.modules:
                found.append((dotted, node.lineno))
    return found


@functools.lru_cache(maxsize=64)
def _reaching(files: tuple[tuple[str, int, int], ...], needs: _Needs | None) -> tuple[Spelling, ...]:
    found: set[Spelling] = set()
    for file, _, _ in files:
        try:
            tree = ast.parse(Path(file).read_text(encoding="utf-8"), file)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # nothing read: nothing found
            continue
        imports = [(n, a) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names]
        modules = {(a.asname or a.name).split(".")[0] for n, a in imports if isinstance(n, ast.Import) or _is_module(n, a)}
        sys_names = {a.asname or a.name for n, a in imports if a.name == "sys"}  # (from torch import sys too)
        for node in ast.walk(tree):
            word = _reaches(node, modules, sys_names)
            if word is None and needs is not None:
                word = _not_needed(node, needs)
            if word is not None:
                found.add(Spelling(file, getattr(node, "lineno", 0), word))
        found.update(Spelling(file, line, word) for word, line in _handed_on(tree))
        if needs is not None:
            found.update(Spelling(file, line, word) for word, line in _assignments(tree, modules)
                         if word.split(".")[-1].removesuffix(" =") not in needs.assigned)
            found.update(Spelling(file, line, f"{module} (not in the answer)") for module, line in _modules_used(tree)
                         if module not in needs.modules | PUBLIC_TORCH and module.split(".")[0] not in ALWAYS_IMPORTED - {"torch"})
    return tuple(sorted(found, key=lambda s: (s.file, s.line, s.word)))


def _imported(node: ast.Import | ast.ImportFrom) -> str:
    """The top-level module an import statement reads from ("" for a relative one: the lesson's own)."""
    if isinstance(node, ast.ImportFrom):
        return "" if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def _not_needed(node: ast.AST, needs: _Needs) -> str | None:
    """What `node` uses that the lesson's answer does not: an import, a private attribute, a
    name looked up at run time."""
    if isinstance(node, ast.Import):
        return next((f"import {a.name}" for a in node.names if a.name.split(".")[0] not in needs.imports), None)
    if isinstance(node, ast.ImportFrom) and _imported(node) not in needs.imports and node.level == 0:
        return f"from {node.module} import"
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
            and node.module.split(".")[0] not in ALWAYS_IMPORTED - {"torch"}:
        return next((f"{node.module}.{a.name} (not in the answer)" for a in node.names
                     if f"{node.module}.{a.name}" in sys.modules
                     and f"{node.module}.{a.name}" not in needs.modules | PUBLIC_TORCH), None)
    if isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in needs.private \
            and _root(node) not in ("self", "cls"):
        return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and _root(node.args[0]) != "self"
            and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))):
        return "getattr(<a name built at run time>)"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
            and node.args and _root(node.args[0]) not in ("self", "cls")):
        return f"{node.func.id}(...)"
    if (word := _watched(node)) and word not in needs.names:
        return word
    return None


def _watched(node: ast.AST) -> str | None:
    """The WATCHED name `node` uses, if any."""
    if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Attribute) and b.attr == "Tensor" for b in node.bases):
        return "a torch.Tensor subclass"
    name = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
            else node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None)
    return name if name in WATCHED else None


def _handed_on(tree: ast.AST) -> list[tuple[str, int]]:
    """getattr, setattr, delattr or vars named other than as the function of a call (map(getattr,
    ...), functools.reduce(getattr, ...)): a lookup whose names no call shows."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return [(f"{n.id} (handed on)", n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id in ("getattr", "setattr", "delattr", "vars") and id(n) not in called]


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _assignments(tree: ast.AST, modules: frozenset[str] | set[str]) -> list[tuple[str, int]]:
    """Attributes assigned (or handed to setattr/delattr) to an object the code did not make:
    a module, a name bound to an attribute chain of one (an alias, the module's own reaching
    into its functions), or a function's parameter; each as "root.attr =" with its line."""
    found = []
    aliases = _aliases(tree.body if isinstance(tree, ast.Module) else [], modules)  # the module's, seen by its functions
    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        foreign = set(modules) | aliases
        if not isinstance(function, ast.Module):
            foreign.update(a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs])
            foreign.discard("self")
            foreign.discard("cls")
        foreign |= _aliases(function.body, modules)
        for node in (n for statement in function.body for n in ast.walk(statement)):
            for target in _targets(node):
                if isinstance(target, ast.Attribute) and _root(target) in foreign:
                    found.append((f"{_root(target)}.{target.attr} =", node.lineno))
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
                    and node.args and _root(node.args[0]) in foreign):
                name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else "?"
                found.append((f"{_root(node.args[0])}.{name} =", node.lineno))
    return found


def _aliases(body: list[ast.stmt], modules: frozenset[str] | set[str]) -> set[str]:
    """The names `body` binds to a module or an attribute chain of one: `t = torch`."""
    return {t.id for statement in body for node in ast.walk(statement)
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute))
            and _root(node.value) in modules for t in node.targets if isinstance(t, ast.Name)}


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


def _is_module(statement: ast.ImportFrom, alias: ast.alias) -> bool:
    """Whether ``from M import NAME`` likely binds a module (``from torch import nn``): a lower-case name."""
    return alias.name.islower() and not alias.name.startswith("_") and statement.module is not None \
        and statement.module.split(".")[0] in ("torch", "numpy")


def _reaches(node: ast.AST, modules: set[str], sys_names: set[str]) -> str | None:
    if isinstance(node, ast.Import):
        return next((a.name for a in node.names if a.name.split(".")[0] in REACHING_MODULES or _private(a.name)), None)
    if isinstance(node, ast.ImportFrom):
        if node.module and (node.module.split(".")[0] in REACHING_MODULES or _private(node.module)):
            return node.module
        return next((a.name for a in node.names if a.name in REACHING_ATTRIBUTES | REACHING_AS_ATTRIBUTES
                     or a.name.split(".")[0] in REACHING_MODULES  # (from torch import sys: the red team's, round 5)
                     or (node.module == "sys" and a.name in REACHING_SYS)), None)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(("grader.", "_pytest")):
        return repr(node.value[:40])  # a module of the grader's named as a string: sys.modules.get("grader.testing...")
    if isinstance(node, ast.Name) and node.id in REACHING_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in REACHING_AS_ATTRIBUTES:
        return node.attr
    if isinstance(node, ast.Attribute) and (node.attr in REACHING_ATTRIBUTES or (
            node.attr in REACHING_SYS and isinstance(node.value, ast.Name) and node.value.id in sys_names)):
        return node.attr
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return next((f"{_root(t)}.{t.attr} =" for t in targets if isinstance(t, ast.Attribute) and _root(t) in modules),
                    None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name, args = node.func.id, node.args
        if name in REACHING_CALLS:
            return f"{name}()"
        if name in ("setattr", "delattr") and args and _root(args[0]) in modules:
            return f"{name}({_root(args[0])}, ...)"
        if (name == "getattr" and len(args) >= 2 and _root(args[0]) in modules
                and not (isinstance(args[1], ast.Constant) and isinstance(args[1].value, str))):
            return f"getattr({_root(args[0])}, <a name built at run time>)"
    return None


def _private(module: str) -> bool:
    """A module path with a private part (``torch._C``, ``torch.utils._python_dispatch``)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def _root(node: ast.AST) -> str | None:
    """The name an attribute chain starts from (``torch`` for ``torch.nn.functional.softmax``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
