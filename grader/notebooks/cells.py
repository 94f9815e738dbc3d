"""What a grade cell shows under `kata nbgrader autograde`: its tests' lines and its score, from
the student's kata grade record (students/NAME.json).

    07_stable, public tests: 3 of 4 passed, 4 of 5 points
    FAIL  test_softmax_of_large_logits
          stable_softmax(tensor([1000., 0.])): ...
    TODO  test_logsumexp_of_large_values: logsumexp (the logsumexp cell, line 12) is not implemented yet
          (the same in 1 more test: test_masked_and_fully_masked_rows)

A record's messages name the graded file's lines; they are shown as the notebook's cells
(grader.notebooks.grade_cell.Module.where). Its messages hold no test code: kata grade hands
records back as feedback.
"""

from __future__ import annotations

import ast
import re

from grader.notebooks.grade_cell import Module, cell_value, indented

_LABELS = {"pass": "PASS", "skip": "SKIP", "fail": "FAIL", "error": "FAIL"}


def grade_call(source: str) -> tuple[str, str, float] | None:
    """(lesson, tests, points) of a grade cell's ``grade("07_stable", "hidden", points=36)``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "grade":
            given = dict(zip(("lesson", "tests"), (ast.literal_eval(a) for a in node.args)))
            given.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
            return given["lesson"], given.get("tests", "all"), float(given["points"])
    return None


def cell_output(record: dict, lesson: str, tests: str, points: float, module: Module, file: str) -> tuple[float, str]:
    """(value, text) of a grade cell from the student's kata grade record: the cell's share of
    the lesson's points that kata grade counts (a held test waits for a person), weighted by
    each test's points; a test skipped on this machine counts for neither side."""
    wanted = [
        t
        for t in record.get("tests", [])
        if t["lesson"] == lesson and (tests == "all" or t["public"] == (tests == "public"))
    ]
    kind = {"all": "tests", "public": "public tests", "hidden": "hidden tests"}[tests]
    entry = next((e for e in record.get("lessons", []) if e["lesson"] == lesson), None)
    if not wanted:
        why = (entry or {}).get("problem") or record.get("failed") or record.get("message") or "nothing was graded"
        return 0.0, f"FAIL  the {kind} of {lesson} did not run: {_in_cells(why, module, file)}"
    counted = [t for t in wanted if t["status"] != "skip"]
    earned = sum(t["points"] for t in counted if t["status"] == "pass" and not t.get("held"))
    possible = sum(t["max_points"] for t in counted)
    value = cell_value(points, earned, possible)
    passed = sum(t["status"] == "pass" for t in wanted)
    lines = [f"{lesson}, {kind}: {passed} of {len(wanted)} passed, {value:g} of {points:g} points", *module.notes]
    if entry and entry.get("problem"):  # "the run ended (exit status 0) before ...": a sentence of its own
        problem = _in_cells(entry["problem"], module, file)
        lines.append(problem[:1].upper() + problem[1:])
    lines += [
        f"The code is flagged for your instructor to read: {flag.partition(': read the code: ')[2]}"
        for flag in record.get("flags", [])
        if flag.startswith(f"{lesson}: read the code: ")
    ]
    rows: dict[tuple[str, str], list[str]] = {}  # (label, reason) -> the tests that show it, in order
    for test in wanted:
        name = test["name"].partition(": ")[2]
        label, why = _label_and_reason(test)
        rows.setdefault((label, _in_cells(why, module, file)) if label != "PASS" else (label, name), []).append(name)
    for (label, why), names in rows.items():
        if label == "PASS":
            lines.append(f"PASS  {names[0]}")
            continue
        head = f"{label}  {names[0]}" + (f": {why}" if why and "\n" not in why else "\n" + indented(why) if why else "")
        lines.append(head + (f"\n      (the same in {_more(names[1:])})" if len(names) > 1 else ""))
    return float(value), "\n".join(lines) + "\n"


def _label_and_reason(test: dict) -> tuple[str, str]:
    """The PASS/FAIL/TODO/TIME/SKIP/HELD word of a test's line, and its reason (never test code:
    a record's messages are what kata grade hands back as feedback)."""
    if test.get("held"):
        return "HELD", "it passed; its points wait for your instructor to read the code"
    label, message = _LABELS[test["status"]], (test["message"] or "").strip()
    for kit_label, shown in (("TODO", "TODO"), ("TIMEOUT", "TIME")):
        if message.startswith(f"{kit_label}: "):
            label, message = shown, message.partition(": ")[2]
    name = test["name"].partition(": ")[2]
    message = message.removeprefix(f"{name} ")  # "test_x did not finish ...": the line names it already
    return label, "" if label == "PASS" else message


def _more(names: list[str]) -> str:
    """'2 more tests: a, b' or '9 more tests: a, b, c and 6 others'."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} others" if len(names) > 3 else "")
    return f"{len(names)} more test{'s' if len(names) > 1 else ''}: {shown}"


MESSAGE_LIMIT = 20_000  # characters of a message shown in a grade cell (the kit's own are far shorter)


def _in_cells(text: str, module: Module, file: str) -> str:
    """The graded file's lines in `text` shown as the notebook cells they came from: each
    `.../stable.py:12` and `File ".../stable.py", line 12` (the path before the file's name, up
    to a space or a quote, goes with it). Linear in the text, whatever a message holds."""
    text = text[:MESSAGE_LIMIT]
    shown, done = [], 0
    for found in re.finditer(rf'{re.escape(file)}(?::|", line )(\d{{1,9}})', text):
        start = found.start()
        while start > done and start > found.start() - 300 and text[start - 1] not in " \"'(\n":
            start -= 1  # back over the path's folders
        if text[start - 6 : start] == 'File "' and found[0].startswith(f'{file}", line'):
            start -= 6
        shown += [text[done:start], module.where(int(found[1]))]
        done = found.end()
    return "".join([*shown, text[done:]])
