"""Grading a class's notebooks: `kata nbgrader autograde` and plain `nbgrader autograde`, each
against `import torch`, side by side.

    python benchmarks/nbgrader_class.py                          20 notebooks of lesson 07, 2 rounds
    python benchmarks/nbgrader_class.py --students 20 --kernel-students 4 --rounds 2

Builds a course of one lesson (`kata nbgrader build`, `nbgrader generate_assignment`) and hands
in N notebooks. Student i is, by i % 4: the kit's answer, the seed's naive softmax over it, the
untouched release, or the answer with a syntax error in its last answer cell; each carries a
comment with its number, so no two are the same. Then, alternately, for each round:

    import torch      a fresh `python -c "import torch"`: the cost a notebook is measured in
    kit               `kata nbgrader autograde COURSE LESSON` on every notebook (its results
                      removed first: each round grades the class from nothing)
    kernel            `nbgrader autograde LESSON --student S --force` for the first K students:
                      each notebook run in a kernel, its grade cells running the tests

Prints the least time of each over the rounds, seconds a notebook, and that in `import torch`s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("answer", "naive", "untouched", "broken")


def build_course(course: Path, lesson: str, students: int) -> None:
    import nbformat

    kata(["nbgrader", "build", str(course), "--lessons", lesson])
    nbgrader(course, "generate_assignment", lesson)
    release = nbformat.read(str(course / "release" / lesson / f"{lesson}.ipynb"), as_version=4)
    source = nbformat.read(str(course / "source" / lesson / f"{lesson}.ipynb"), as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if "nbgrader" in c.metadata}
    seed = (ROOT / "tests" / lesson / "mutants" / "seed_unstable_softmax.py").read_text(encoding="utf-8")
    for i in range(students):
        kind = KINDS[i % len(KINDS)]
        nb = nbformat.from_dict(release)
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        for cell in cells if kind != "untouched" else []:
            text = answers[cell.metadata["nbgrader"]["grade_id"]]
            cell.source = "\n".join(line for line in text.split("\n") if "### " not in line)
        if kind == "naive":
            cells[0].source += "\n\n" + seed
        if kind == "broken":
            cells[-1].source += "\ndef broken(:\n"
        cells[0].source += f"\n# student {i}\n"
        folder = course / "submitted" / f"s{i:03d}_{kind}" / lesson
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{lesson}.ipynb"))


def kata(args: list[str], cwd: Path = ROOT) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader", "--root", str(ROOT), *args], cwd=cwd, capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        sys.exit(f"kata {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def nbgrader(course: Path, *args: str) -> None:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", default="07_stable")
    parser.add_argument("--students", type=int, default=20, help="notebooks the kit grades (default 20)")
    parser.add_argument("--kernel-students", type=int, default=4, help="of them, graded in kernels (default 4)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kata-nbgrader-bench-") as tmp:
        course = Path(tmp) / "course"
        build_course(course, args.lesson, args.students)
        students = sorted(p.name for p in (course / "submitted").iterdir())
        times: dict[str, list[float]] = {"import torch": [], "kit": [], "kernel": []}
        for _ in range(args.rounds):
            times["import torch"].append(
                timed(lambda: subprocess.run([sys.executable, "-c", "import torch"], check=True))
            )

            def kit() -> None:
                shutil.rmtree(course / "kata", ignore_errors=True)
                kata(["nbgrader", "autograde", str(course), args.lesson])

            times["kit"].append(timed(kit))

            def kernel() -> None:
                for student in students[: args.kernel_students]:
                    nbgrader(course, "autograde", args.lesson, f"--student={student}", "--force")

            times["kernel"].append(timed(kernel))
    torch_s = min(times["import torch"])
    print(f"import torch: {torch_s:.2f} s (least of {args.rounds})")
    for name, count in (("kit", args.students), ("kernel", args.kernel_students)):
        least = min(times[name])
        each = least / count
        print(
            f"{name:>7}: {least:6.1f} s for {count} notebooks, {each:5.2f} s a notebook, {each / torch_s:4.2f}x import torch"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
