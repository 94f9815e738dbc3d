"""A student's results file, students/<name>.json, and the logs of their lessons' runs.

The file has ``kata report --json``'s shape (exercism v3, grader.learner.report.exercism), plus
the points, what was left out of the student's files and why, the lessons flagged for a person
to look at, and the fingerprint of everything that decided the grade (a later run skips a
student whose fingerprint did not change). Hidden tests keep their code out of it: the file
may be handed back as feedback.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from grader.files import write_json, write_text
from grader.grading.intake import Student
from grader.grading.verdict import LessonVerdict
from grader.learner.report import exercism
from grader.lessons import Lesson
from grader.results import State

FLAGGED = (State.TAMPERED, State.STOPPED)  # a person should look at these lessons


def write_student(
    out: Path, student: Student, lessons: list[Lesson], verdicts: dict[str, LessonVerdict], stamp: dict
) -> dict:
    """Write the student's file and logs; `stamp`: the kit's digest and the options. Returns the record."""
    summaries = [verdicts[lesson.name].summary for lesson in lessons]
    data = exercism([(lesson, verdicts[lesson.name].run) for lesson in lessons], summaries)
    for test in data["tests"]:
        if not test["public"]:
            test["test_code"] = ""  # hidden tests stay hidden, even in feedback handed back
    logs = out / "logs" / student.name
    for entry, lesson in zip(data["lessons"], lessons):
        verdict = verdicts[lesson.name]
        entry.update(verdict.timings())
        entry["files"] = sorted(student.files.get(lesson.name, {}))
        write_text(logs / f"{lesson.name}.txt", verdict.run.output)
    inside = [t for lesson in lessons for t in verdicts[lesson.name].run.tests if t.inside]
    data.update(
        {
            "student": student.name,
            "points": sum(s.points for s in summaries),
            "max_points": sum(s.max_points for s in summaries),
            "ignored": student.ignored,
            "flags": [f"{s.lesson}: {s.problem}" for s in summaries if s.state in FLAGGED]
            + [
                f"{lesson.name}: read the code: {note}"
                for lesson in lessons
                for note in verdicts[lesson.name].run.review
            ],
            "fingerprint": student.fingerprint,
            **stamp,
            "graded_at": _now(),
        }
    )
    if held := [t for lesson in lessons for t in verdicts[lesson.name].run.tests if t.held]:
        data["held"] = {"points": sum(t.max_points for t in held), "tests": [t.nodeid for t in held]}
    if inside:  # kata grade --remote: the points of tests that ran with their checks in the student's process
        data["checked_inside"] = {
            "points": sum(t.points for t in inside),
            "max_points": sum(t.max_points for t in inside),
        }
    write_json(out / "students" / f"{student.name}.json", data, indent=1)
    return data


def write_failed(out: Path, student: Student, max_points: float, stamp: dict) -> None:
    """The file of a student who could not be graded at all (student.problem says why)."""
    write_json(
        out / "students" / f"{student.name}.json",
        {
            "version": 3,
            "status": "error",
            "message": student.problem,
            "tests": [],
            "lessons": [],
            "student": student.name,
            "points": 0.0,
            "max_points": max_points,
            "ignored": student.ignored,
            "flags": [],
            "failed": student.problem,
            "fingerprint": None,
            **stamp,
            "graded_at": _now(),
        },
    )


def how_graded(record: dict) -> tuple[str, str]:
    """The isolation a student's runs had and where the tests' checks ran."""
    options = record.get("options", {})
    return options.get("isolation", "not recorded"), options.get("checks", "in the student's process")


def load(path: Path) -> dict | None:
    """A results file, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
