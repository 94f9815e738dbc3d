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

`reaching` reads, as well, where code reaches past its own: always for what acts on the grader
(grader.testing.reaching), and for what the lesson's answer does not use (grader.testing.allowlist).
"""

from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Iterable

from grader.testing.allowlist import Needs, needs_of, not_needed, past_the_answer
from grader.testing.reaching import handed_on, imported_modules, reaches


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
def _spelled(
    files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...], words: frozenset[str]
) -> tuple[Spelling, ...]:
    found: list[Spelling] = []
    for sub, file in _reached(files, functions):
        word = _word(sub)
        if word is not None and (normalise(word) in words or normalise(word).removesuffix("loss") in words):
            found.append(Spelling(file, getattr(sub, "lineno", 0), word))
    return tuple(sorted(set(found), key=lambda s: (s.file, s.line, s.word)))


# What runs Python code once per item, as a source spells it: a loop statement or a
# comprehension (not recursion, nor map over a function).
LOOPS = MappingProxyType(
    {
        ast.For: "for",
        ast.AsyncFor: "for",
        ast.While: "while",
        ast.ListComp: "a list comprehension",
        ast.SetComp: "a set comprehension",
        ast.DictComp: "a dict comprehension",
        ast.GeneratorExp: "a generator",
    }
)
LOOPING_CALLS = frozenset({"map", "filter", "reduce"})  # a loop without a loop's words (the red team's, round 6)


def looped(files: Iterable[Path], functions: Iterable[str]) -> list[Spelling]:
    """Where the definitions of `functions` (as `spelled` reads them), and the definitions they
    reach by name, loop in Python: each `LOOPS` construct, with the word for it."""
    return list(_looped(tuple(_stamp(Path(file)) for file in files), tuple(functions)))


@functools.lru_cache(maxsize=256)
def _looped(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> tuple[Spelling, ...]:
    found = {
        Spelling(file, sub.lineno, LOOPS[type(sub)] if type(sub) in LOOPS else f"{_called(sub)}()")
        for sub, file in _reached(files, functions)
        if type(sub) in LOOPS or _looping(sub)
    }
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
    return (
        node.func.id
        if isinstance(node.func, ast.Name)
        else node.func.attr
        if isinstance(node.func, ast.Attribute)
        else None
    )


def _reached(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> Iterable[tuple[ast.AST, str]]:
    """Every node of the code that runs at import (top-level statements other than definitions
    and imports: a thread started there runs whatever it names) and of the definitions of
    `functions`, and of those they reach by name, with its file."""
    definitions: dict[str, tuple[ast.AST, str]] = {}
    import_time: list[tuple[ast.stmt, str]] = []  # statements that run code at import: not a def, class or import
    for file, _, _ in files:
        tree = _parse(file)
        if tree is None:
            continue
        for statement in tree.body:
            for name, node in bindings(statement):
                definitions[name] = (node, file)
            if not isinstance(
                statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
            ) and not _a_docstring(statement):
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
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def reaching(files: Iterable[Path], answer: Iterable[Path] = ()) -> list[Spelling]:
    """Where the `files` (each read whole, import-time code included) reach past their own
    code (grader.testing.reaching): an import of one of REACHING_MODULES or of a private module
    (``torch._C``), an attribute in REACHING_ATTRIBUTES, a name in REACHING_NAMES, a call of
    one of REACHING_CALLS, one of REACHING_SYS read off ``sys``, an attribute of an imported
    module assigned (``torch.finfo = f``) or handed to setattr or delattr, and getattr of one by
    a name built at run time. Where the lesson's `answer` (the kit's files) is given, also what
    an answer does not need, by allowlist (grader.testing.allowlist): an import that neither it
    nor ALWAYS_IMPORTED makes, a private attribute (``x._y``) of anything but self or cls,
    getattr of anything but self by a name built at run time, and an attribute the answer never
    assigns, assigned to an object the code did not make (a module, an alias of one, a
    parameter: ``t = torch; t.is_autocast_enabled = f``)."""
    stamps = tuple(_stamp(Path(file)) for file in answer)
    return list(_reaching(tuple(_stamp(Path(file)) for file in files), _needed(stamps) if stamps else None))


@functools.lru_cache(maxsize=16)
def _needed(answer: tuple[tuple[str, int, int], ...]) -> Needs:
    return needs_of(tree for tree in (_parse(file) for file, _, _ in answer) if tree is not None)


@functools.lru_cache(maxsize=64)
def _reaching(files: tuple[tuple[str, int, int], ...], needs: Needs | None) -> tuple[Spelling, ...]:
    found: set[Spelling] = set()
    for file, _, _ in files:
        tree = _parse(file)
        if tree is None:
            continue
        nodes = list(ast.walk(tree))  # walked once: every read below goes over this list
        modules, sys_names = imported_modules(nodes)
        for node in nodes:
            word = reaches(node, modules, sys_names)
            if word is None and needs is not None:
                word = not_needed(node, needs)
            if word is not None:
                found.add(Spelling(file, getattr(node, "lineno", 0), word))
        found.update(Spelling(file, line, word) for word, line in handed_on(nodes))
        if needs is not None:
            found.update(Spelling(file, line, word) for word, line in past_the_answer(tree, nodes, modules, needs))
    return tuple(sorted(found, key=lambda s: (s.file, s.line, s.word)))


def _parse(file: str) -> ast.Module | None:
    """The file's syntax tree, or None where it cannot be read or parsed: nothing read, nothing found."""
    try:
        return ast.parse(Path(file).read_text(encoding="utf-8"), file)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
