"""A lesson as an nbgrader source notebook: the stub's text and signatures, the answer in regions.

    lesson text        locked markdown: the stub's module docstring
    setup              a code cell: the stub's imports and module-level names
    one cell per name  solution cells: the stub's code with every ``raise NotImplementedError``
                       replaced by the reference body between ### BEGIN / END SOLUTION (its
                       TODO comments stay: students see them in the release); the reference's
                       private helpers come with their signature and docstring, body cleared
    check your work    a grade cell: the lesson's public tests (``grader.notebooks.grade_cell.grade``)
    hidden tests       a grade cell whose call lies between ### BEGIN / END HIDDEN TESTS

The tests themselves stay in the kit: a grade cell only names the lesson, so neither the
release nor the feedback ever holds hidden test code. `lesson_notebook` checks what it builds:
the solution cells together are the reference module, and each one still compiles once nbgrader
has cleared its solution regions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from grader.lessons import KitError, Lesson
from grader.stubs import first_line, is_todo_raise

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"  # what nbgrader writes in a region
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}

GRADING_NOTE = """\
## How this notebook is graded

Fill in the code where a cell says `# YOUR CODE HERE`, in place of `raise NotImplementedError()`.
Keep every name and signature: the tests call them. The TODO comments say what to do.

When your notebook is graded, your imports, functions, classes and constants (assignments to
UPPER_CASE names, or that call nothing) are taken from its cells, in order, and the lesson's
tests run on them; other top-level code (prints, experiments, plots) is not graded, so keep the
code the functions need inside them.

The cell under **Check your work** runs the lesson's public tests and prints PASS or FAIL for
each, with the reason. More tests, hidden ones, run when the notebook is graded."""


@dataclass
class Points:
    """The points of a lesson's tests (their ``points`` markers), public and hidden."""

    public: float
    hidden: float


# --- solution cells ----------------------------------------------------------------------------


def _docstring_end(node) -> int | None:
    """The last line of a def's docstring, or None."""
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno
    return None


def _region(answer, answer_lines: list[str], skip: int, indent: str) -> list[str]:
    """The reference body of `answer` (after its docstring and its first `skip` statements) in markers."""
    body = [n for n in answer.body if not (n is answer.body[0] and _docstring_end(answer))]
    rest = body[skip:]
    if not rest:
        return [indent + BEGIN, indent + "pass", indent + END]
    start = (body[skip - 1].end_lineno if skip else (_docstring_end(answer) or answer.body[0].lineno - 1)) + 1
    lines = answer_lines[start - 1:answer.end_lineno]
    while lines and not lines[0].strip():
        lines.pop(0)
    return [indent + BEGIN, *lines, indent + END]


def _merge_def(stub, stub_lines: list[str], answer, answer_lines: list[str]) -> list[str]:
    """The stub's def with each TODO ``raise`` replaced by the reference's code, in markers."""
    if isinstance(stub, ast.ClassDef):
        methods = {n.name: n for n in answer.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        edits = []  # (first line, last line, replacement) in the stub, 1-based and inclusive
        for node in stub.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in methods:
                merged = _merge_def(node, stub_lines, methods.pop(node.name), answer_lines)
                edits.append((first_line(node), node.end_lineno, merged))
        lines = stub_lines[first_line(stub) - 1:stub.end_lineno]
        for first, last, merged in reversed(edits):
            offset = first_line(stub)
            lines[first - offset:last - offset + 1] = merged
        for extra in methods.values():  # the reference's own methods: signature kept, body cleared
            lines += ["", *_cleared(extra, answer_lines)]
        return lines
    todo = next((n for n in stub.body if is_todo_raise(n)), None)
    if todo is None:  # nothing to write here: the stub's code as it is
        return stub_lines[first_line(stub) - 1:stub.end_lineno]
    before = [n for n in stub.body[: stub.body.index(todo)] if not (n is stub.body[0] and _docstring_end(stub))]
    answer_body = [n for n in answer.body if not (n is answer.body[0] and _docstring_end(answer))]
    shared = len(before) if [ast.dump(n) for n in before] == [ast.dump(n) for n in answer_body[: len(before)]] else 0
    if not shared and before:
        raise KitError(f"{stub.name}: the code before its `raise NotImplementedError` is not how the reference starts")
    indent = re.match(r"\s*", stub_lines[todo.lineno - 1]).group()
    head = stub_lines[first_line(stub) - 1:todo.lineno - 1]
    tail = stub_lines[todo.end_lineno:stub.end_lineno]
    return [*head, *_region(answer, answer_lines, shared, indent), *tail]


def _cleared(answer, answer_lines: list[str]) -> list[str]:
    """A def of the reference's own (a helper): its signature and docstring, its body in markers."""
    if isinstance(answer, ast.ClassDef):
        raise KitError(f"class {answer.name} is in the reference but not in the stub: a notebook cannot hide it")
    body_start = _docstring_end(answer) or answer.body[0].lineno - 1
    indent = re.match(r"\s*", answer_lines[answer.body[0].lineno - 1]).group()
    return [*answer_lines[first_line(answer) - 1:body_start], *_region(answer, answer_lines, 0, indent)]


def clear_solutions(source: str) -> str:
    """What nbgrader's ClearSolutions makes of a cell: each region replaced by the code stub."""
    out, inside = [], False
    for line in source.split("\n"):
        if BEGIN in line:
            inside = True
            indent = line[: line.index(BEGIN)]
            out += [indent + stub_line for stub_line in CODE_STUB.split("\n")]
        elif END in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


@dataclass
class Cells:
    """The code of one lesson module split the way the notebook shows it."""

    doc: str
    setup: str
    solutions: list[tuple[str, str]]  # (public name, cell source)


def split_module(stub_text: str, answer_text: str, where: str = "<module>") -> Cells:
    """The stub and the reference of one module, as the notebook's cells."""
    stub, answer = ast.parse(stub_text), ast.parse(answer_text)
    stub_lines, answer_lines = stub_text.splitlines(), answer_text.splitlines()
    doc = ast.get_docstring(stub, clean=True) or ""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    stub_defs = {n.name: n for n in stub.body if isinstance(n, defs)}
    answer_defs = {n.name: n for n in answer.body if isinstance(n, defs)}
    missing = sorted(set(stub_defs) - set(answer_defs))
    if missing:
        raise KitError(f"{where}: the reference lacks {', '.join(missing)}, which the stub has")
    setup = [
        "\n".join(stub_lines[first_line(n) - 1:n.end_lineno])
        for n in stub.body
        if not isinstance(n, defs) and not (n is stub.body[0] and doc)
    ]
    solutions: list[tuple[str, str]] = []
    helpers: list[list[str]] = []  # the reference's own defs, shown in the next public def's cell
    for node in answer.body:
        if not isinstance(node, defs):
            continue
        if node.name not in stub_defs:
            helpers.append(_cleared(node, answer_lines))
            continue
        merged = _merge_def(stub_defs[node.name], stub_lines, node, answer_lines)
        lines = [line for helper in helpers for line in (*helper, "", "")] + merged
        helpers = []
        solutions.append((node.name, "\n".join(lines)))
    if helpers and solutions:
        name, source = solutions[-1]
        solutions[-1] = (name, source + "\n\n\n" + "\n\n\n".join("\n".join(h) for h in helpers))
    return Cells(doc=doc, setup="\n".join(setup), solutions=solutions)


def _check(cells: Cells, answer_text: str, where: str) -> None:
    """The solution cells are the reference; each compiles with its regions cleared."""
    def top_level(text: str) -> list[str]:
        tree = ast.parse(text)
        body = tree.body[1:] if ast.get_docstring(tree) else tree.body
        return sorted(ast.dump(node) for node in body)

    together = "\n\n".join([cells.setup, *(source for _, source in cells.solutions)])
    if top_level(together) != top_level(answer_text):
        raise KitError(f"{where}: the notebook's cells are not the reference module; "
                       "keep the stub's and the reference's top-level statements in the same order")
    for name, source in cells.solutions:
        try:
            compile(clear_solutions(source), f"<cell {name}>", "exec")
        except SyntaxError as exc:
            raise KitError(f"{where}: the cell for {name} does not compile once its answer is cleared: {exc}") from None


# --- the notebook ------------------------------------------------------------------------------


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _markdown_of(doc: str) -> str:
    """The module docstring as markdown: its first line a title, the "Check your work" line gone."""
    title, _, body = doc.partition("\n")
    body = re.sub(r"\n*Check your work with:.*$", "", body.strip(), flags=re.DOTALL | re.MULTILINE)
    return f"# {title.strip()}\n\n{body.strip()}"


def lesson_notebook(lesson: Lesson, points: Points):
    """The nbgrader source notebook of `lesson` (an nbformat v4 NotebookNode, metadata validated)."""
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

    v4 = nbformat.v4
    stems = lesson.modules("exercises")
    if not stems:
        raise KitError(f"lesson {lesson.name} has no module in exercises/{lesson.name}/")
    nb = v4.new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    for stem in stems:
        stub_path, answer_path = lesson.dir("exercises") / f"{stem}.py", lesson.dir("solutions") / f"{stem}.py"
        if not answer_path.is_file():
            raise KitError(f"{answer_path} not found: a notebook needs the lesson's reference answer")
        answer_text = answer_path.read_text(encoding="utf-8")
        cells = split_module(stub_path.read_text(encoding="utf-8"), answer_text, str(answer_path))
        _check(cells, answer_text, str(answer_path))
        if cells.doc:
            nb.cells.append(v4.new_markdown_cell(_markdown_of(cells.doc), metadata=_meta(f"{stem}-lesson", locked=True)))
        if stem == stems[0]:
            nb.cells.append(v4.new_markdown_cell(GRADING_NOTE, metadata=_meta("how-it-is-graded", locked=True)))
        if cells.setup:
            nb.cells.append(v4.new_code_cell(cells.setup))
        for name, source in cells.solutions:
            # A solution cell without a region would be cleared whole: leave such code as it is.
            meta = _meta(name, solution=True) if BEGIN in source else {}
            nb.cells.append(v4.new_code_cell(source, metadata=meta))
    call = f'from grader.notebooks.grade_cell import grade\n\ngrade("{lesson.name}", "%s", points={{:g}})'
    nb.cells += [
        v4.new_markdown_cell("## Check your work\n\nThe lesson's public tests, the same as "
                             f"`pytest exercises/{lesson.name} -m public` in the kit.",
                             metadata=_meta("check-your-work", locked=True)),
        v4.new_code_cell((call % "public").format(points.public),
                         metadata=_meta(f"{lesson.name}-public-tests", grade=True, locked=True, points=points.public)),
        v4.new_markdown_cell("## Hidden tests\n\nThey run when your notebook is graded.",
                             metadata=_meta("hidden-tests", locked=True)),
        v4.new_code_cell(f"# The hidden tests of {lesson.name} run here when your notebook is graded.\n"
                         f"{BEGIN_HIDDEN}\n{(call % 'hidden').format(points.hidden)}\n{END_HIDDEN}",
                         metadata=_meta(f"{lesson.name}-hidden-tests", grade=True, locked=True, points=points.hidden)),
    ]
    if points.hidden == 0:
        nb.cells = nb.cells[:-2]  # a lesson whose tests are all public
    MetadataValidator().validate_nb(nb)
    nbformat.validate(nb)
    return nb
