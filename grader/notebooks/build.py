"""A lesson as an nbgrader source notebook, cut from the lesson's one source (solutions/NN).

    lesson text        locked markdown: the module docstring
    setup              a code cell: the imports and module-level names
    one cell per def   solution cells: each public def as the source has it, its answer between
                       ### BEGIN / END SOLUTION and its TODO comments beside (nbgrader clears
                       the regions; students see the TODOs); a region of private helpers at the
                       module's level gets a solution cell of its own
    check your work    a grade cell: the lesson's public tests (``grader.notebooks.grade_cell.grade``)
    hidden tests       a grade cell whose call lies between ### BEGIN / END HIDDEN TESTS

The tests themselves stay in the kit: a grade cell only names the lesson, so neither the
release nor the feedback ever holds hidden test code. `lesson_notebook` checks what it builds:
the cells together are the source module, and each solution cell still compiles once nbgrader
has cleared it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from grader.authoring.exercises import BEGIN, END, regions
from grader.lessons import KitError, Lesson
from grader.stubs import first_line, python_lines

BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HELPERS_NOTE = "# Helpers of your own, if you want any, go here (or delete the raise below)."

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


# --- the cells ---------------------------------------------------------------------------------


@dataclass
class Cells:
    """The code of one lesson module split the way the notebook shows it."""

    doc: str
    setup: str
    solutions: list[tuple[str, str]]  # (name, cell source); "helpers-N" for a module-level region


def split_module(source: str, where: str = "<module>") -> Cells:
    """A lesson source as the notebook's cells: its text, its setup, a cell per def or helper region."""
    tree = ast.parse(source, where)
    lines = python_lines(source)
    doc = ast.get_docstring(tree, clean=True) or ""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    spans = regions(source, where)
    setup, solutions, shown = [], [], set()
    for node in tree.body:
        if node is tree.body[0] and doc:
            continue
        region = next(((b, e) for b, e in spans if b < node.lineno < e), None)
        if region:  # a module-level region (helpers): in a solution cell of its own
            if region not in shown:
                shown.add(region)
                solutions.append(
                    (f"helpers-{len(shown)}", "\n".join([HELPERS_NOTE, *lines[region[0] - 1 : region[1]]]))
                )
        elif isinstance(node, defs):
            end = node.end_lineno  # the def's last statement; its region's END marker follows it
            while end < len(lines) and lines[end].strip() == END:
                end += 1
            solutions.append((node.name, "\n".join(lines[first_line(node) - 1 : end])))
        else:
            setup.append("\n".join(lines[first_line(node) - 1 : node.end_lineno]))
    return Cells(doc=doc, setup="\n".join(setup), solutions=solutions)


def _check(nb, cells: Cells, source: str, where: str) -> None:
    """The cells together are the source module; each solution cell compiles once nbgrader has
    cleared it (nbgrader's own ClearSolutions, on a copy)."""
    import copy

    from nbgrader.preprocessors import ClearSolutions

    def top_level(text: str) -> list[str]:
        tree = ast.parse(text)
        body = tree.body[1:] if ast.get_docstring(tree) else tree.body
        return sorted(ast.dump(node) for node in body)

    together = "\n\n".join([cells.setup, *(text for _, text in cells.solutions)])
    if top_level(together) != top_level(source):
        raise KitError(f"{where}: the notebook's cells are not the source module")
    cleared, _ = ClearSolutions().preprocess(copy.deepcopy(nb), {})
    for cell in cleared.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            try:
                compile(cell.source, f"<cell {cell.metadata['nbgrader']['grade_id']}>", "exec")
            except SyntaxError as exc:
                raise KitError(
                    f"{where}: the cell for {cell.metadata['nbgrader']['grade_id']} does not "
                    f"compile once nbgrader clears its answer: {exc}"
                ) from None


# --- the notebook ------------------------------------------------------------------------------


def _meta(
    grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False, points: float | None = None
) -> dict:
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
    stems = [
        stem
        for stem in lesson.modules("solutions")
        if regions((lesson.dir("solutions") / f"{stem}.py").read_text(encoding="utf-8"))
    ]
    if not stems:
        raise KitError(f"lesson {lesson.name} has no module with an answer region in solutions/{lesson.name}/")
    nb = v4.new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    for stem in stems:
        path = lesson.dir("solutions") / f"{stem}.py"
        source = path.read_text(encoding="utf-8")
        cells = split_module(source, str(path))
        first = len(nb.cells)
        if cells.doc:
            nb.cells.append(
                v4.new_markdown_cell(_markdown_of(cells.doc), metadata=_meta(f"{stem}-lesson", locked=True))
            )
        if stem == stems[0]:
            nb.cells.append(v4.new_markdown_cell(GRADING_NOTE, metadata=_meta("how-it-is-graded", locked=True)))
        if cells.setup:
            nb.cells.append(v4.new_code_cell(cells.setup))
        for name, text in cells.solutions:
            # A solution cell without a region would be cleared whole: leave such code as it is.
            meta = (
                _meta(f"{stem}-{name}" if name.startswith("helpers-") else name, solution=True) if BEGIN in text else {}
            )
            nb.cells.append(v4.new_code_cell(text, metadata=meta))
        module_nb = v4.new_notebook()
        module_nb.cells = nb.cells[first:]
        _check(module_nb, cells, source, str(path))
    call = f'from grader.notebooks.grade_cell import grade\n\ngrade("{lesson.name}", "%s", points={{:g}})'
    nb.cells += [
        v4.new_markdown_cell(
            "## Check your work\n\nThe lesson's public tests, the same as "
            f"`pytest exercises/{lesson.name} -m public` in the kit.",
            metadata=_meta("check-your-work", locked=True),
        ),
        v4.new_code_cell(
            (call % "public").format(points.public),
            metadata=_meta(f"{lesson.name}-public-tests", grade=True, locked=True, points=points.public),
        ),
        v4.new_markdown_cell(
            "## Hidden tests\n\nThey run when your notebook is graded.", metadata=_meta("hidden-tests", locked=True)
        ),
        v4.new_code_cell(
            f"# The hidden tests of {lesson.name} run here when your notebook is graded.\n"
            f"{BEGIN_HIDDEN}\n{(call % 'hidden').format(points.hidden)}\n{END_HIDDEN}",
            metadata=_meta(f"{lesson.name}-hidden-tests", grade=True, locked=True, points=points.hidden),
        ),
    ]
    if points.hidden == 0:
        nb.cells = nb.cells[:-2]  # a lesson whose tests are all public
    MetadataValidator().validate_nb(nb)
    nbformat.validate(nb)
    return nb
