"""The class's files: class.csv, summary.txt and report.html from the students' results files, and merging shards.

All three are made from students/*.json alone, so a class graded in shards (kata grade --shard I/N,
on as many machines) is put together by copying the students' files into one folder
(kata grade --merge) and making the tables again; an interrupted run makes them from the
students done so far.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from grader.files import write_json, write_text
from grader.grading.records import how_graded, load
from grader.grading.report import write_report
from grader.lessons import KitError
from grader.tables import Column, format_table


def write_class(out: Path) -> None:
    """The tables of every student in out/students."""
    write_tables([r for p in sorted((out / "students").glob("*.json")) if (r := load(p))], out)


def write_tables(records: list[dict], out: Path) -> None:
    """class.csv and summary.txt from the students' records; the summary is printed too."""
    lessons = sorted({entry["lesson"] for record in records for entry in record.get("lessons", [])})
    points = {r["student"]: {e["lesson"]: e["points"] for e in r.get("lessons", [])} for r in records}
    maximum = {}
    for record in records:
        for entry in record.get("lessons", []):
            maximum[entry["lesson"]] = max(maximum.get(entry["lesson"], 0.0), entry["max_points"])
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    writer.writerow(["student", *lessons, "total", "max_points", "flags"])
    for record in records:
        flags = record.get("flags", []) + ([f"failed to grade: {record['failed']}"] if record.get("failed") else [])
        writer.writerow(
            [
                record["student"],
                *(f"{points[record['student']].get(lesson, 0.0):g}" for lesson in lessons),
                f"{record['points']:g}",
                f"{record['max_points']:g}",
                " | ".join(flags),
            ]
        )
    write_text(out / "class.csv", rows.getvalue())
    summary = summary_table(records, lessons, points, maximum)
    write_text(out / "summary.txt", summary)
    print(summary, end="")
    write_report(records, out)


def summary_table(records: list[dict], lessons: list[str], points: dict, maximum: dict) -> str:
    """Points per student and lesson (a lesson by its number), the maximum and the mean; then
    the flagged lessons and the students who could not be graded, one line each."""
    rows = [
        ["student", *(lesson[:2] for lesson in lessons), "total", ""],
        ["(max)", *(f"{maximum[lesson]:g}" for lesson in lessons), f"{sum(maximum.values()):g}", ""],
    ]
    for record in records:
        mark = " !" if record.get("flags") or record.get("failed") else ""
        rows.append(
            [
                record["student"],
                *(f"{points[record['student']].get(lesson, 0.0):g}" for lesson in lessons),
                f"{record['points']:g}",
                mark,
            ]
        )
    if records:
        means = [sum(points[r["student"]].get(lesson, 0.0) for r in records) / len(records) for lesson in lessons]
        overall = sum(r["points"] for r in records) / len(records)
        rows.append(["mean", *(f"{m:.1f}" for m in means), f"{overall:.1f}", ""])
    columns = [Column("<", fit=True), *(Column(">", 6) for _ in lessons), Column(">", 8), Column("<")]
    problems = [f"  {r['student']}: {flag}" for r in records for flag in r.get("flags", [])]
    failed = [f"  {r['student']}: {r['failed']}" for r in records if r.get("failed")]
    text = "\n".join(format_table(rows, columns)) + "\n"
    text += f"\n{len(records)} students"
    text += f", {len({p.split(':')[0] for p in problems})} flagged (!)" if problems else ""
    text += f", {len(failed)} could not be graded" if failed else ""
    text += "\n"
    text += "".join(f"isolation: {what}\n" for what in sorted({how_graded(r)[0] for r in records}))
    text += "".join(f"checks: {what}\n" for what in sorted({how_graded(r)[1] for r in records}))
    text += "".join(f"{what}\n" for what in sorted({r.get("options", {}).get("memory") for r in records} - {None}))
    inside = [r.get("checked_inside") or {} for r in records]
    if any(i.get("max_points") for i in inside):
        text += (
            f"  of which in the students' processes (tests that cannot run otherwise): "
            f"{sum(i.get('points', 0) for i in inside):g} of {sum(i.get('max_points', 0) for i in inside):g} "
            "points, each student's in students/<name>.json (checked_inside)\n"
        )
    if held := [r for r in records if r.get("held")]:
        text += (
            f"held for a person: {sum(r['held']['points'] for r in held):g} points of {len(held)} student(s), "
            "passed on what their code's process recorded, in a lesson whose source is flagged; "
            "not in the totals (students/<name>.json: held)\n"
        )
    if problems:
        text += "\nflagged (look at these by hand: students/<name>.json, logs/<name>/):\n" + "\n".join(problems) + "\n"
    if failed:
        text += "\ncould not be graded:\n" + "\n".join(failed) + "\n"
    return text


def merge(folders: list[Path], out: Path) -> int:
    """Combine shards: every students/*.json of `folders` into `out`, then the class's tables."""
    chosen: dict[str, tuple[dict, Path]] = {}
    for folder in folders:
        files = sorted((folder / "students").glob("*.json"))
        if not files:
            raise KitError(f"{folder} holds no students/*.json: is it a RESULTS_DIR of kata grade?")
        for path in files:
            record = load(path)
            if record is None:
                print(f"warning: {path} is not readable JSON; left out", file=sys.stderr)
                continue
            previous = chosen.get(record["student"])
            if previous and previous[1] != folder:
                print(
                    f"warning: {record['student']} was graded in both {previous[1]} and {folder}; "
                    "keeping the later one",
                    file=sys.stderr,
                )
                if previous[0].get("graded_at", "") > record.get("graded_at", ""):
                    continue
            chosen[record["student"]] = (record, folder)
    kits = {record.get("kit") for record, _ in chosen.values()}
    if len(kits) > 1:
        print("warning: the shards were graded with different versions of the kit", file=sys.stderr)
    for name, (record, _) in chosen.items():
        write_json(out / "students" / f"{name}.json", record, indent=1)
    write_tables([chosen[name][0] for name in sorted(chosen)], out)
    return 0
