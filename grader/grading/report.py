"""report.html: where a class struggles, made from the students' results files alone.

Like class.csv and summary.txt (grader.grading.classtables), it reads only students/*.json, so
a class graded in shards gets one from `kata grade --merge`. For each lesson: the score
distribution (an SVG plot, inline), each test's pass rate across the class, hardest first, the
most frequent failure messages (numbers, addresses and paths normalised so that one mistake
made by many students is one line, with who made it), and the time a run took. Then the
flagged students and a section per student.

Self-contained: no script, no stylesheet or font from elsewhere; it opens from a file. The
students' names and messages are the students' own text, so the template escapes everything
it is given (jinja2's autoescape); only the plots, which this module draws, go in as markup.
It needs the `instructor` extra (jinja2, matplotlib); without it, grading goes on and says
what to install.
"""

from __future__ import annotations

import io
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from grader.files import write_text
from grader.grading.kitfiles import SCRATCH_PREFIX
from grader.grading.records import how_graded

TEMPLATE = Path(__file__).with_name("report.html.j2")
# How many of a lesson's most frequent failure messages the report lists.
TOP_FAILURES = 8

# The characters of a message the report reads and shows: a student's code writes its messages,
# and may make one a mebibyte long.
SHOWN = 4_000

# What varies between students making the same mistake: addresses, paths, numbers. Each pattern
# starts a match only where a word, a path or a number begins, and tries each start once: the
# time is linear in the message's length, whatever the message.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?<![\w.~/-])(?:[A-Za-z]:)?(?:[\w.~-]*/)+([\w.-]+)")
_COPY = re.compile(rf"(?<![^\s\"'(=:])(?:/[^/\s]+)*?/{re.escape(SCRATCH_PREFIX)}[^/\s]*/[^/\s]+/kit/")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?")


def readable(message: str) -> str:
    """`message` without the grading copy's folder in the paths it names (a run's own, the same
    file for every student): `exercises/98_demo/demo.py`, as the student knows it; past SHOWN
    characters, cut, saying how much was left out."""
    if len(message) > SHOWN:
        message = f"{message[:SHOWN]}… ({len(message) - SHOWN:,} more characters)"
    return _COPY.sub("", message)


def normalise(message: str) -> str:
    """`message` with its addresses, paths (each keeps its file's name) and numbers made alike,
    its space squeezed: the key its failures are grouped by."""
    text = _PATH.sub(lambda m: "…/" + m.group(1), _ADDRESS.sub("\0", message))
    return " ".join(_NUMBER.sub("N", text).replace("\0", "0x…").split())


def lesson_views(records: list[dict]) -> list[dict]:
    """Each lesson's figures across the class (what the template shows), lessons in order."""
    points: dict[str, list[float]] = defaultdict(list)
    maximum: dict[str, float] = defaultdict(float)
    seconds: dict[str, list[float]] = defaultdict(list)
    for record in records:
        for entry in record.get("lessons", []):
            points[entry["lesson"]].append(entry["points"])
            maximum[entry["lesson"]] = max(maximum[entry["lesson"]], entry["max_points"])
            if entry.get("seconds") is not None:
                seconds[entry["lesson"]].append(entry["seconds"])
    tests: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # lesson -> test -> passers
    takers: dict[str, dict[str, int]] = defaultdict(Counter)
    failures: dict[str, dict[str, list]] = defaultdict(dict)  # lesson -> key -> [example, students]
    for record in records:
        for test in record.get("tests", []):
            lesson, name = test.get("lesson") or "", test["name"].partition(": ")[2] or test["name"]
            takers[lesson][name] += 1
            tests[lesson][name]  # (a test nobody passed is listed too)
            if test["status"] == "pass":
                tests[lesson][name].append(record["student"])
            elif test.get("message"):
                message = readable(test["message"])
                example, students = failures[lesson].setdefault(normalise(message), [message, set()])
                students.add(record["student"])
    views = []
    for lesson in sorted(points):
        scores = points[lesson]
        rates = sorted(
            ((len(tests[lesson][name]) / takers[lesson][name], name, takers[lesson][name]) for name in tests[lesson]),
            key=lambda r: (r[0], r[1]),
        )
        common = sorted(failures[lesson].items(), key=lambda item: (-len(item[1][1]), item[0]))[:TOP_FAILURES]
        views.append(
            {
                "name": lesson,
                "max_points": maximum[lesson],
                "students": len(scores),
                "mean": statistics.fmean(scores) if scores else 0.0,
                "median": statistics.median(scores) if scores else 0.0,
                "full": sum(1 for s in scores if s >= maximum[lesson] > 0),
                "scores": scores,
                "tests": [{"name": name, "rate": rate, "takers": n} for rate, name, n in rates],
                "failures": [
                    {"key": key, "example": example, "students": sorted(students)}
                    for key, (example, students) in common
                ],
                "seconds_median": statistics.median(seconds[lesson]) if seconds[lesson] else None,
                "seconds_max": max(seconds[lesson]) if seconds[lesson] else None,
            }
        )
    return views


def score_plot(scores: list[float], maximum: float, title: str) -> str:
    """A histogram of `scores` out of `maximum`, as inline SVG (no fonts or files from elsewhere)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.ticker
    from matplotlib import pyplot as plt

    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "kata", "font.size": 9}):
        figure, axes = plt.subplots(figsize=(4.2, 1.9))
        if 0 < maximum <= 20:  # a bar per whole point
            axes.hist(scores, bins=int(maximum) + 1, range=(-0.5, maximum + 0.5), color="#3b6ea8", edgecolor="white")
            axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        else:
            axes.hist(scores, bins=20, range=(0, maximum or 1), color="#3b6ea8", edgecolor="white")
        axes.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axes.set_xlabel("points")
        axes.set_ylabel("students")
        axes.set_title(title)
        axes.spines[["top", "right"]].set_visible(False)
        figure.tight_layout()
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # the markup alone, without the XML prologue and doctype


def render(records: list[dict]) -> str:
    """report.html's text for these students' records."""
    import jinja2
    from markupsafe import Markup

    lessons = lesson_views(records)
    for view in lessons:
        view["plot"] = Markup(score_plot(view["scores"], view["max_points"], view["name"]))  # drawn here
    environment = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    template = environment.from_string(TEMPLATE.read_text(encoding="utf-8"))
    flagged = [(r["student"], flag) for r in records for flag in r.get("flags", [])]
    failed = [(r["student"], r["failed"]) for r in records if r.get("failed")]
    options = sorted({how_graded(r) for r in records})
    total = sum(view["max_points"] for view in lessons)
    return template.render(
        lessons=lessons,
        records=records,
        flagged=flagged,
        failed=failed,
        options=options,
        total=total,
        mean=statistics.fmean(r["points"] for r in records) if records else 0.0,
    )


def write_report(records: list[dict], out: Path) -> Path | None:
    """out/report.html; None, saying why on stderr, where the instructor extra is missing."""
    try:
        import jinja2  # noqa: F401 (only whether the instructor extra is installed)
        import matplotlib  # noqa: F401 (the same)
    except ImportError as exc:
        print(
            f"report.html not written: it needs {exc.name}, from the kit's instructor extra "
            '(pip install -c constraints.txt -e ".[instructor]")',
            file=sys.stderr,
        )
        return None
    path = out / "report.html"
    write_text(path, render(records))
    print(f"where the class struggles: {path}", file=sys.stderr)
    return path
