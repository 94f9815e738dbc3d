"""A lesson's mutants: every single-point mutation cosmic-ray makes of its answer, and the kit's own.

cosmic-ray's operators (every one that takes no arguments: arithmetic, comparison, boolean,
unary and number replacement, break/continue, exceptions, decorators, zero-iteration loops)
make every single-point mutant of solutions/NN/*.py, and one more operator of the kit's own,
`kata/UnsetDefault`: a parameter's default that is not a number or a bool (cosmic-ray's number
and boolean operators mutate those) becomes ``object()``, which fails wherever it is used: the
mutant survives when no test ever relies on that default.

Annotations in a module with ``from __future__ import annotations`` are never evaluated, so
they are not mutated at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from grader.lessons import Lesson

UNSET_DEFAULT = "kata/UnsetDefault"


@dataclass
class Mutant:
    """One single-point mutation of a reference module."""

    lesson: Lesson
    stem: str  # the module mutated: solutions/NN/<stem>.py
    operator: str  # cosmic-ray's name, e.g. "core/ReplaceBinaryOperator_Add_Sub"
    occurrence: int
    code: str  # the whole mutated module
    lineno: int  # first line that differs (1-based)
    function: str  # the def or class holding it, "<module>" outside any
    line: str  # the reference's line, stripped
    mutated: str  # the mutant's line, stripped
    fate: str = "pending"  # killed, equivalent, survived, untested
    killer: str = ""  # the first test that failed, or why the run told nothing
    why: str = ""  # for an equivalent mutant, the recorded reason

    @property
    def label(self) -> str:
        return f"{self.lesson.name}/{self.stem}.py:{self.lineno} ({self.function}) {self.operator.removeprefix('core/')}#{self.occurrence}"


@dataclass
class LessonScore:
    """A lesson's mutants with their fates, and its equivalence records that match none."""

    lesson: Lesson
    mutants: list[Mutant] = field(default_factory=list)
    stale: list[dict] = field(default_factory=list)  # equivalence records that match no mutant

    def count(self, fate: str) -> int:
        return sum(m.fate == fate for m in self.mutants)

    @property
    def score(self) -> float:
        """Killed or recorded equivalent, as a share of every mutant (1.0 for none)."""
        if not self.mutants:
            return 1.0
        return (self.count("killed") + self.count("equivalent")) / len(self.mutants)


def operators():
    """(name, operator) for each of cosmic-ray's operators that needs no arguments."""
    import cosmic_ray.plugins

    for name in cosmic_ray.plugins.operator_names():
        cls = cosmic_ray.plugins.get_operator(name)
        if not cls.arguments():
            yield name, cls()


def mutants_of(lesson: Lesson) -> list[Mutant]:
    """Every single-point mutant of the lesson's reference modules."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    found = []
    for stem in lesson.modules("solutions"):
        path = lesson.dir("solutions") / f"{stem}.py"
        code = path.read_text(encoding="utf-8")
        lines = code.splitlines()
        holders = _holders(code)
        unevaluated = _annotations(code)
        tree = get_ast(code)
        for name, operator in operators():
            positions = [pos for node in ast_nodes(tree) for pos in operator.mutation_positions(node)]
            for occurrence, (start, end) in enumerate(positions):
                if any(a <= start and end <= b for a, b in unevaluated):
                    continue  # an annotation Python never evaluates: no run can tell the mutant apart
                mutated = mutate_code(code, operator, occurrence)
                if mutated is None or mutated == code:
                    continue
                new_lines = mutated.splitlines()
                lineno = next(
                    (i for i, (a, b) in enumerate(zip(lines, new_lines)) if a != b), min(len(lines), len(new_lines))
                )
                line, changed = (text[lineno] if lineno < len(text) else "" for text in (lines, new_lines))
                found.append(_mutant(lesson, stem, name, occurrence, mutated, lineno + 1, holders, line, changed))
        found += _unset_defaults(lesson, stem, code, holders)
    return found


def _unset_defaults(lesson: Lesson, stem: str, code: str, holders: dict[int, str]) -> list[Mutant]:
    """One mutant per parameter default that is not made of numbers and bools alone: the default
    replaced by ``object()``, which no op accepts (and which is truthy, as True is: hence no
    bools). It survives when no test calls the function without that argument."""
    lines = code.splitlines(keepends=True)
    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        for occurrence, default in enumerate(d for d in defaults if not _numeric(d)):
            start, end = default.lineno - 1, default.end_lineno - 1
            # ast's columns count UTF-8 bytes, not characters
            head = lines[start].encode()[: default.col_offset].decode()
            tail = lines[end].encode()[default.end_col_offset :].decode()
            mutated = "".join([*lines[:start], head, "object()", tail, *lines[end + 1 :]])
            changed = head + "object()" + tail
            found.append(
                _mutant(lesson, stem, UNSET_DEFAULT, occurrence, mutated, start + 1, holders, lines[start], changed)
            )
    return found


def _mutant(
    lesson: Lesson,
    stem: str,
    operator: str,
    occurrence: int,
    code: str,
    lineno: int,
    holders: dict[int, str],
    line: str,
    changed: str,
) -> Mutant:
    """The mutant `code` of the answer `stem`, told by its line (1-based) before and after."""
    function = holders.get(lineno, "<module>")
    return Mutant(
        lesson=lesson,
        stem=stem,
        operator=operator,
        occurrence=occurrence,
        code=code,
        lineno=lineno,
        function=function,
        line=code_of(line),
        mutated=code_of(changed),
    )


def _numeric(expr: ast.expr) -> bool:
    """Whether an expression is made of number and bool constants alone (``-1``, ``2.0 ** 16``)."""
    leaves = [n for n in ast.walk(expr) if not isinstance(n, (ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop))]
    return all(isinstance(n, ast.Constant) and isinstance(n.value, (bool, int, float, complex)) for n in leaves)


def _annotations(code: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (start, end) positions, as (line, column), of the annotations in a module that has
    ``from __future__ import annotations``: kept as strings, never evaluated. None otherwise."""
    tree = ast.parse(code)
    if not any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    ):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found += [a.annotation for a in every if a is not None and a.annotation is not None]
            found += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in found]


def code_of(line: str) -> str:
    """A line without its indent and trailing comment: what an equivalence record quotes."""
    return line.split("  # ", 1)[0].strip()


def _holders(code: str) -> dict[int, str]:
    """Line number -> the innermost def or class around it, as "Class.method"."""
    holders: dict[int, str] = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    holders[line] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(code), "")
    return holders
