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
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable


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


def looped(files: Iterable[Path], functions: Iterable[str]) -> list[Spelling]:
    """Where the definitions of `functions` (as `spelled` reads them), and the definitions they
    reach by name, loop in Python: each `LOOPS` construct, with the word for it."""
    return list(_looped(tuple(_stamp(Path(file)) for file in files), tuple(functions)))


@functools.lru_cache(maxsize=256)
def _looped(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> tuple[Spelling, ...]:
    found = {Spelling(file, sub.lineno, LOOPS[type(sub)]) for sub, file in _reached(files, functions)
             if type(sub) in LOOPS}
    return tuple(sorted(found, key=lambda s: (s.file, s.line, s.word)))


def _reached(files: tuple[tuple[str, int, int], ...], functions: tuple[str, ...]) -> Iterable[tuple[ast.AST, str]]:
    """Every node of the definitions of `functions` and of those they reach by name, with its file."""
    definitions: dict[str, tuple[ast.AST, str]] = {}
    for file, _, _ in files:
        try:
            tree = ast.parse(Path(file).read_text(encoding="utf-8"), file)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # nothing read: nothing found
            continue
        for statement in tree.body:
            for name, node in _defines(statement):
                definitions[name] = (node, file)
    todo, seen = list(functions), set()
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


def _defines(statement: ast.stmt) -> list[tuple[str, ast.AST]]:
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
