"""report.html: built from a real graded class, grouped failures, escaping, shards merged into the
same report, and the page checked in a real browser (Debian's Chromium) where one is installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.grading.report import lesson_views, normalise, render
from grader.tests.kits import SOLUTION
from grader.tests.test_classgrade import LIMITS, grade, make_kit

pytest.importorskip("matplotlib", reason="report.html needs the instructor extra: pip install -e '.[instructor]'")

# The class: (student, their 98_demo file). 99_other is handed in by nobody (the stub: 0 points).
CLASS = {
    "ada": SOLUTION,
    "bob": SOLUTION.replace("return a + b", "return a - b"),
    "cy": SOLUTION.replace("return a + b", "return a - b").replace("return x * k", "return x + k"),
    "<b>dee": SOLUTION.replace("return x * k", "return x + k"),
    "eve": SOLUTION + "\n\ndef broken(:\n",
}


def hand_in(folder: Path) -> Path:
    for name, source in CLASS.items():
        lesson = folder / name / "exercises" / "98_demo"
        lesson.mkdir(parents=True)
        (lesson / "demo.py").write_text(source, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("report")
    kit = make_kit(base / "kit")
    proc = grade(kit, str(hand_in(base / "class")), "--out", str(base / "results"), "--jobs", "2", *LIMITS)
    assert proc.returncode == 0, proc.stderr
    return {"kit": kit, "class": base / "class", "out": base / "results", "base": base}


def test_the_report_shows_each_lessons_scores_hardest_tests_and_grouped_failures(graded: dict) -> None:
    html = (graded["out"] / "report.html").read_text(encoding="utf-8")
    assert "<title>Class report: 5 students</title>" in html
    assert html.count("<svg") == 2  # one plot per lesson
    demo = html[html.index('id="98_demo"') : html.index('id="99_other"')]
    rates = re.findall(r"<tr><td>(test_\w+)</td><td class=\"num[^\"]*\">(\d+)% of (\d+)</td>", demo)
    assert rates == [("test_add", "40", "5"), ("test_add_negative", "40", "5"), ("test_scale", "40", "5")] or [
        int(rate) for _, rate, _ in rates
    ] == sorted(int(rate) for _, rate, _ in rates), rates  # hardest first
    # bob and cy fail test_add the same way, with other numbers: one group of two students.
    assert re.search(r'<td class="num">2</td><td><pre>[^<]*</pre></td><td>bob, cy</td>', demo), demo


def test_the_report_escapes_the_students_text_and_loads_nothing_from_elsewhere(graded: dict) -> None:
    html = (graded["out"] / "report.html").read_text(encoding="utf-8")
    assert "<b>dee" not in html and "&lt;b&gt;dee" in html
    assert "<script" not in html
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)  # no CDN, no font, no link out
    assert "@import" not in html and not re.search(r"url\((?!#)", html)  # (a plot's clip paths are its own)


def test_failures_are_grouped_by_what_the_students_share() -> None:
    assert (
        normalise("expected 5, got 0x7f3a2c at /home/ada/class/ada/demo.py:12")
        == normalise("expected 17, got 0x55aa at /tmp/kata-grade-x1/cy/demo.py:3")
        == "expected N, got 0x… at …/demo.py:N"
    )
    assert (
        normalise("Greatest absolute difference: 1.5e-03 at index (0, 2)")
        == "Greatest absolute difference: N at index (N, N)"
    )
    records = [
        {
            "student": s,
            "points": 0.0,
            "max_points": 2.0,
            "lessons": [{"lesson": "l", "points": 0.0, "max_points": 2.0, "state": "in progress"}],
            "tests": [
                {"name": "l: test_a", "lesson": "l", "status": "fail", "message": f"got {n}"},
                {"name": "l: test_b", "lesson": "l", "status": "pass" if n else "fail", "message": None},
            ],
        }
        for s, n in (("a", 1), ("b", 2), ("c", 0))
    ]
    (view,) = lesson_views(records)
    assert [(t["name"], round(t["rate"], 2)) for t in view["tests"]] == [("test_a", 0.0), ("test_b", 0.67)]
    assert [(f["key"], f["students"]) for f in view["failures"]] == [("got N", ["a", "b", "c"])]
    assert "<svg" in render(records)


@pytest.mark.parametrize(
    "line",
    ["a" * 2**20, "/a" * 2**19, "/kata-grade-" * 87_382, ' "/x' * 2**18, "1." * 2**19],
    ids=["word", "slashes", "copies", "paths", "digits"],
)
def test_a_mebibyte_line_is_read_in_linear_time_and_shown_cut(line: str) -> None:
    """A student's code writes its messages (a 6,000-character source line in a traceback took
    minutes with the patterns before). Each pattern on the whole line, uncut, ends at once where
    a quadratic one would take hours: the suite's per-test limit stops a regression."""
    from grader.grading.report import _ADDRESS, _COPY, _NUMBER, _PATH, SHOWN, readable

    for pattern in (_ADDRESS, _COPY, _NUMBER, _PATH):
        pattern.sub("", line)
    shown = readable(line)
    assert len(shown) < SHOWN + 40 and shown.endswith("more characters)"), shown[-60:]
    normalise(shown)


def test_three_shards_merge_into_the_class_csv_and_report_of_one_run(graded: dict) -> None:
    """Each shard a process of its own, then --merge: the same class.csv as the one run, and the
    same report.html but for how long each run took."""
    base = graded["base"]
    for i in (1, 2, 3):
        proc = grade(
            graded["kit"], str(graded["class"]), "--out", str(base / f"shard{i}"), "--shard", f"{i}/3", *LIMITS
        )
        assert proc.returncode == 0, proc.stderr
    merged = grade(
        graded["kit"], "--merge", *(str(base / f"shard{i}") for i in (1, 2, 3)), "--out", str(base / "merged")
    )
    assert merged.returncode == 0, merged.stderr
    for name in ("class.csv", "report.html"):
        one, three = ((folder / name).read_text(encoding="utf-8") for folder in (graded["out"], base / "merged"))
        assert without_times(three) == without_times(one), name


def without_times(text: str) -> str:
    """A report with its run times left out (a run's time is its own); other files as they are."""
    return re.sub(r'<td class="num time">[^<]*</td>', "", text)


def chromium() -> str | None:
    return next(filter(None, (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome"))), None)


def test_the_report_renders_in_a_real_browser(graded: dict, tmp_path: Path) -> None:
    """Headless Chromium opens report.html from its file: its DOM has the title, a lesson's
    table and a plot, and a screenshot of it is not blank (kept under $KATA_ARTIFACTS)."""
    browser = chromium()
    if browser is None:
        pytest.skip(
            "no Chromium here to open report.html in a real browser: install Debian's (apt-get install chromium)"
        )
    page = (graded["out"] / "report.html").as_uri()
    # Headless as root, with nothing fetched at start (this machine's network is closed).
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run([browser, *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert "<title>Class report: 5 students</title>" in dom.stdout
    assert 'class="tests"' in dom.stdout and "test_scale" in dom.stdout and "<svg" in dom.stdout
    artifacts = Path(os.environ.get("KATA_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "report.png"
    taken = subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=1280,1600", page],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert taken.returncode == 0 and shot.is_file(), taken.stderr
    import cv2

    image = cv2.imread(str(shot), cv2.IMREAD_GRAYSCALE)
    assert image is not None and image.shape[:2] == (1600, 1280)
    assert image.std() > 10 and (image < 128).mean() > 0.01, "the screenshot is blank"  # text and plots drawn
