"""``kata nbgrader autograde COURSE ASSIGNMENT``: every submitted notebook graded by kata grade's
engine, without running it in a kernel.

    1. each submission as nbgrader's autograde sanitizes it (nbgrader's own preprocessors: the
       grade cells and locked cells are the instructor's again, whatever the student did to them)
    2. the student's code from it (`graded_code`): the answer cells as written, and the
       imports, functions, classes and constants of the other code cells; the grade cells
       never run      -> COURSE/kata/ASSIGNMENT/class/STUDENT/exercises/LESSON/MODULE.py
    3. kata grade's engine grades that class: the runs forked from one preloaded process, behind
       the namespaces, the checks in a process of their own; the same verdicts and limits as
       ``kata grade``      -> COURSE/kata/ASSIGNMENT/results/ (students/*.json, summary.txt)
    4. nbgrader autograde, with `KitGrades` in the place of its `Execute`: each grade cell's
       output is the kit's PASS/FAIL lines, and its value the score. nbgrader's SaveAutoGrades,
       late penalties, formgrader, generate_feedback and export work on it as on any autograde.

KitGrades takes the code of the notebook nbgrader hands it again, and fills the grade cells only
when that code is what was graded. What a grade cell shows is grader.notebooks.cells'. Why this seam, and what each path protects:
docs/INSTRUCTORS.md.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import warnings
from pathlib import Path

from grader.authoring.exercises import BEGIN
from grader.files import read_regular, write_json, write_text
from grader.lessons import KitError, Lesson, get_lesson
from grader.notebooks.cells import cell_output, grade_call
from grader.notebooks.grade_cell import Module, module_of
from grader.tables import Column, format_table

CELLS = "cells.json"  # what each grade cell of each student's notebook shows, by KitGrades


def kit_folder(course: Path, assignment: str) -> Path:
    """Where the kit keeps an assignment's graded code and results, inside the course."""
    return course / "kata" / assignment


# --- 1 and 2: the student's code --------------------------------------------------------------


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _is_grade_cell(cell) -> bool:
    return bool(_nbgrader(cell).get("grade")) and not _nbgrader(cell).get("solution")


def graded_code(nb) -> Module:
    """The code kata grade grades: every code cell but the grade cells, in order; an answer cell
    (nbgrader's solution cell) as written, any other its definitions only, as a grade cell
    takes them (so an experiment, a print or a plot outside the answers does not run again)."""
    cells, number = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        number += 1
        if _is_grade_cell(cell):
            continue
        meta = _nbgrader(cell)
        answer = bool(meta.get("solution"))
        name = f"the {meta['grade_id']} cell" if answer and meta.get("grade_id") else f"code cell {number}"
        cells.append((name, cell.source, answer))
    return module_of(cells)


def digest(module: Module) -> str:
    return hashlib.sha256(module.text.encode()).hexdigest()


def sanitized(nb, config, student: str, assignment: str, notebook: str, db_url: str):
    """The notebook as nbgrader's autograde sanitizes it before it executes it: its own
    sanitize preprocessors, as the course configures them (the database is only read)."""
    from nbgrader.converters import Autograde

    resources = {"nbgrader": {"student": student, "assignment": assignment, "notebook": notebook, "db_url": db_url}}
    for kind in Autograde(config=config).sanitize_preprocessors:
        nb, resources = kind(config=config)(nb, resources)
    return nb


def lesson_module(lesson: Lesson) -> str:
    """The file name of the lesson's one module, as a learner's exercises/ folder has it."""
    modules = lesson.modules("solutions")
    if len(modules) != 1:
        raise KitError(f"{lesson.name} has {len(modules)} modules; a notebook is graded as one")
    return f"{modules[0]}.py"


# --- 4: nbgrader's autograde, the kit's results in place of a kernel ---------------------------------


def kit_grades():
    """The `KitGrades` preprocessor class (nbgrader is imported only when an instructor grades)."""
    from nbformat.v4 import new_output
    from nbgrader.preprocessors import NbGraderPreprocessor
    from traitlets import Unicode

    class KitGrades(NbGraderPreprocessor):
        """In the place of nbgrader's Execute: each grade cell's output is what kata grade found
        for the code of this notebook, read from `results` (cells.json)."""

        results = Unicode("", help="the cells.json `kata nbgrader autograde` wrote").tag(config=True)

        def preprocess(self, nb, resources):
            student = resources["nbgrader"]["student"]
            graded = json.loads(Path(self.results).read_text(encoding="utf-8")).get(student)
            if graded is None:
                raise KitError(f"{student}'s notebook was not graded by the kit (could it be read?)")
            same = digest(graded_code(nb)) == graded["digest"]
            for cell in nb.cells:
                if cell.cell_type == "code" and _is_grade_cell(cell):
                    shown = graded["cells"].get(_nbgrader(cell)["grade_id"]) if same else None
                    value, text = (
                        (shown["value"], shown["text"])
                        if shown
                        else (0.0, "FAIL  not graded: this notebook's code is not the code the kit graded\n")
                    )
                    cell.execution_count = None
                    cell.outputs = [
                        new_output("stream", name="stdout", text=text),
                        new_output("execute_result", data={"text/plain": repr(value)}, execution_count=None),
                    ]
            return nb, resources

    return KitGrades


def nbgrader_config(course: Path, results: Path):
    """The course's nbgrader_config.py, with KitGrades in the place of Execute."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    KitGrades = kit_grades()
    steps = Autograde(config=config).autograde_preprocessors
    if Execute not in steps:
        raise KitError(
            "the course's Autograde.autograde_preprocessors have no Execute for the kit to take the place of"
        )
    config.Autograde.autograde_preprocessors = [KitGrades if step is Execute else step for step in steps]
    config.KitGrades.results = str(results)
    return config


# --- the command ---------------------------------------------------------------------------------


def autograde(root: Path, args: argparse.Namespace) -> int:
    import nbformat
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from grader.grading.grade import grading_of
    from grader.grading.intake import Student

    course, assignment = args.course.resolve(), args.assignment
    if not (course / "nbgrader_config.py").is_file():
        raise KitError(f"{course} has no nbgrader_config.py: build the course first (`kata nbgrader build {course}`)")
    lesson = get_lesson(root, assignment)
    file = lesson_module(lesson)
    notebook = f"{assignment}.ipynb"
    found = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}") if p.is_dir())
    chosen = args.students or found
    if unknown := sorted(set(chosen) - set(found)):
        raise KitError(f"no submission of {assignment} for {', '.join(unknown)} under {course / 'submitted'}")
    if not chosen:
        raise KitError(
            f"no submissions of {assignment} under {course / 'submitted'} (expected submitted/STUDENT/{assignment}/)"
        )
    folder = kit_folder(course, assignment)
    config = nbgrader_config(course, folder / CELLS)
    coursedir = CourseDirectory(config=config)

    # 1, 2: each student's code, from the notebook as nbgrader sanitizes it
    notebooks, roster, problems, flags = {}, [], {}, {}
    for student in chosen:
        path = course / "submitted" / student / assignment / notebook
        try:
            data = read_regular(path)  # a link (to source/, to a classmate's) is never followed
            if data is None:
                raise KitError(f"{path.relative_to(course)} is not a regular file (a symbolic link?)")
            nb = sanitized(
                nbformat.reads(data.decode("utf-8"), as_version=4),
                config,
                student,
                assignment,
                assignment,
                coursedir.db_url,
            )
            code = graded_code(nb)
            write_text(folder / "class" / student / "exercises" / assignment / file, code.text)
            if any(BEGIN in str(cell.source) for cell in nb.cells if cell.cell_type == "code"):  # a copy of source/'s
                flags[student] = [
                    f"{assignment}: look at it: its code holds the answer markers ({BEGIN}) of the instructor's source notebook"
                ]
        except Exception as exc:  # noqa: BLE001 (whatever one notebook does, the others are graded; nbgrader fails it too)
            problems[student] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        notebooks[student] = nb, code
        roster.append(Student(student, folder / "class" / student))

    # 3: kata grade's engine, then what each grade cell shows
    # No run sees the course's notebooks: the answers in source/, the classmates' in submitted/.
    hidden = tuple(course / name for name in ("source", "release", "submitted", "autograded", "feedback", "kata"))
    grading_of(args, root, [lesson], folder / "results", hidden).run(roster, force=False)
    shown, records = {}, {}
    for student, (nb, module) in notebooks.items():
        try:
            records[student] = record = json.loads((folder / "results" / "students" / f"{student}.json").read_text())
            record["flags"] = [*flags.get(student, []), *record.get("flags", [])]
            cells = {}
            for cell in nb.cells:
                if cell.cell_type == "code" and _is_grade_cell(cell) and (call := grade_call(cell.source)):
                    value, text = cell_output(record, *call, module, file)
                    cells[_nbgrader(cell)["grade_id"]] = {"value": value, "text": text}
        except Exception as exc:  # noqa: BLE001 (a grader's bug on one student: the others' cells are still filled)
            problems[student] = f"the kit could not show its results: {type(exc).__name__}: {exc}"[:300]
            continue
        shown[student] = {"digest": digest(module), "cells": cells}
    write_json(folder / CELLS, shown, indent=1)

    # 4: nbgrader's autograde, one student at a time, in this process
    api = NbGraderAPI(coursedir, config=config)
    with warnings.catch_warnings():
        # nbgrader 0.9's gradebook makes SQLAlchemy warn of its autoflush: nothing an instructor can act on
        warnings.simplefilter("ignore", category=_sqlalchemy_warning())
        for student in chosen:
            done = api.autograde(assignment, student, force=True, create=True)
            if not done["success"]:
                problems.setdefault(student, _last_error(done))
    return _report(course, assignment, chosen, records, problems, args.csv)


def _sqlalchemy_warning() -> type[Warning]:
    from sqlalchemy.exc import SAWarning

    return SAWarning


def _last_error(done: dict) -> str:
    """The line of nbgrader's log that says what went wrong: the last exception's."""
    lines = [line.strip() for line in (done.get("log") or "").splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"[\w.]*(Error|Exception|Exit)\b", line)]
    return (errors or lines or ["nbgrader autograde failed without a message"])[-1][:300]


def _report(course, assignment, students, records, problems, csv_path) -> int:
    from nbgrader.api import Gradebook, MissingEntry

    rows, table = [], [["student", "score", "status", "flags"]]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in students:
            try:
                submission = gradebook.find_submission(assignment, student)
                penalty = submission.late_submission_penalty or 0.0  # what nbgrader export takes off
                score, max_score = max(0.0, submission.score - penalty), submission.max_score
            except MissingEntry:
                score, max_score, penalty = None, None, 0.0
            status = "failed" if student in problems else "graded"
            flags = (records.get(student) or {}).get("flags", [])
            table.append(
                [student, "" if status == "failed" else f"{score:g} / {max_score:g}", status, str(len(flags) or "")]
            )
            rows.append(
                {
                    "student": student,
                    "assignment": assignment,
                    "score": "" if status == "failed" or score is None else round(score, 4),
                    "max_score": "" if max_score is None else max_score,
                    "late_penalty": penalty,
                    "status": status,
                    "problem": problems.get(student, "; ".join(flags)),
                }
            )
    print(
        "\n"
        + "\n".join(format_table(table, [Column("<", fit=True), Column(">", 12), Column("<"), Column(">")], sep="  "))
    )
    csv_path = csv_path or course / f"grades-{assignment}.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    results = kit_folder(course, assignment) / "results"
    print(f"\nwrote {csv_path}\nthe kit's results, with every flag and each run's log: {results}")
    for student, problem in problems.items():
        print(f"FAILED {student}: not graded: {problem}")
    return 1 if problems else 0
