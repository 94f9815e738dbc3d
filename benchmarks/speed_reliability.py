"""Do the speed tests ever flake? Run each one many times with CPU cores kept busy.

    python benchmarks/speed_reliability.py [LESSON ...] [--runs 20] [--busy 1]

For every lesson with ``@pytest.mark.speed`` tests:

- the reference (solutions/) runs each speed test ``--runs`` times, each in a fresh process as
  a learner's run is: every failure is a false failure (a learner with a right answer would
  have been told it is too slow);
- each mutant is run once to find the slow ones (a speed test measures a ratio and fails on
  it), then each slow mutant runs ``--runs`` more times: every pass is a false pass.

``--busy K`` starts K processes that spin on a core for the whole run (the script stops them
itself): the load the thresholds were chosen under (docs/MEASUREMENTS.md, "The speed
thresholds, and the load they were measured under"). Prints one line
per (lesson, test, implementation) with the passes and the measured ratios (min / median /
max), and exits 1 if anything flaked.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.lessons import KitError, Lesson, chosen_lessons  # noqa: E402 (after the kit's root is on sys.path)


def run_speed_tests(lesson: Lesson, runs: int, *, mutant: Path | None = None) -> dict[str, list[dict]]:
    """{test name: [{outcome, ratio}, ...]} for the lesson's speed tests, each run `runs` times."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH", "")]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    with tempfile.TemporaryDirectory(prefix="kata-speed-") as tmp:
        report = Path(tmp) / "report.json"
        impl = [f"--mutant={mutant}"] if mutant else ["--impl=solutions"]
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                f"tests/{lesson.name}",
                "-m",
                "speed",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "kata_repeat",
                f"--repeat={runs}",
                f"--kata-report={report}",
                *impl,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if not report.is_file():
            raise SystemExit(f"pytest wrote no report for {lesson.name} ({mutant or 'solutions'})")
        tests = json.loads(report.read_text(encoding="utf-8"))["tests"]
    results: dict[str, list[dict]] = {}
    for test in tests:
        name = test["nodeid"].split("::")[-1].split("[run")[0].removesuffix("[")
        ratio = min((m["ratio"] for m in test["speed"]), default=None)
        results.setdefault(name, []).append({"outcome": test["outcome"], "ratio": ratio})
    return results


def line(lesson: str, test: str, impl: str, outcomes: list[dict]) -> str:
    passed = sum(o["outcome"] == "passed" for o in outcomes)
    ratios = sorted(o["ratio"] for o in outcomes if o["ratio"] is not None)
    spread = (
        f"ratio min {ratios[0]:.2f}x / median {statistics.median(ratios):.2f}x / max {ratios[-1]:.2f}x"
        if ratios
        else "no ratio measured"
    )
    return f"{lesson:18} {test:42} {impl:32} passed {passed:2}/{len(outcomes):<2} {spread}"


def cold_runs(lesson: Lesson, runs: int) -> dict[str, list[dict]]:
    """The answers' speed tests `runs` times, each in a fresh process, as a learner runs them: the
    first measurement of a process can fall where later ones in the same process do not."""
    results: dict[str, list[dict]] = {}
    for _ in range(runs):
        for test, outcomes in run_speed_tests(lesson, 1).items():
            results.setdefault(test, []).extend(outcomes)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons by number, topic or folder name (default: every lesson)")
    parser.add_argument("--runs", type=int, default=20, help="runs of each speed test (default 20)")
    parser.add_argument("--busy", type=int, default=1, help="cores to keep busy meanwhile (default 1)")
    args = parser.parse_args(argv)
    try:  # "07", "7", "stable" or "07_stable"; an unknown name is an error, not an empty table
        lessons = chosen_lessons(ROOT, args.lessons)
    except KitError as error:
        parser.error(str(error))
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    start, false_failures, false_passes = time.perf_counter(), 0, 0
    try:
        print(f"{args.runs} runs per speed test, {args.busy} core(s) kept busy, {os.cpu_count()} cores")
        for lesson in lessons:
            reference = cold_runs(lesson, args.runs)
            if not reference:
                continue
            for test, outcomes in reference.items():
                print(line(lesson.name, test, "solutions", outcomes))
                false_failures += sum(o["outcome"] != "passed" for o in outcomes)
            for mutant in lesson.mutants():
                once = run_speed_tests(lesson, 1, mutant=mutant)
                # Slow: the test measured a ratio and failed on it (not a mutant that crashed first).
                slow = [
                    test
                    for test, outcomes in once.items()
                    if outcomes[0]["outcome"] == "failed" and outcomes[0]["ratio"] is not None
                ]
                if not slow:
                    continue
                for test, outcomes in run_speed_tests(lesson, args.runs, mutant=mutant).items():
                    if test in slow:
                        print(line(lesson.name, test, f"mutant {mutant.stem}", outcomes))
                        false_passes += sum(o["outcome"] == "passed" for o in outcomes)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    print(f"false failures: {false_failures}, false passes: {false_passes} ({time.perf_counter() - start:.0f} s)")
    return 1 if false_failures or false_passes else 0


if __name__ == "__main__":
    sys.exit(main())
