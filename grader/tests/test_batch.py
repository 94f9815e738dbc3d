"""docs/batch/: a class graded in shards on the batch systems instructors use. The Slurm script
runs for real against a stand-in `sbatch` that runs each job at once; the GitHub Actions
workflow's kata commands parse as the kata command's own."""

from __future__ import annotations

import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from grader.cli import build_parser
from grader.tests.kits import ROOT, SOLUTION
from grader.tests.test_classgrade import make_kit

BATCH = ROOT / "docs" / "batch"

# sbatch as far as the script uses it: --parsable, --array=1-N (the job runs once per task, with
# SLURM_ARRAY_TASK_ID), --cpus-per-task, --wrap; every job runs at once, in order, in this folder.
SBATCH = r"""#!/usr/bin/env python3
import os, subprocess, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
first, last = (int(n) for n in args.get("array", "0-0").split("-"))
for task in range(first, last + 1):
    env = {**os.environ, "SLURM_CPUS_PER_TASK": args.get("cpus-per-task", "1")}
    if "array" in args:
        env["SLURM_ARRAY_TASK_ID"] = str(task)
    with open(args["output"].replace("%a", str(task)), "w") as out:  # (the job's output is not sbatch's)
        if subprocess.run(["bash", "-c", args["wrap"]], env=env, stdout=out, stderr=out).returncode:
            sys.exit("a job failed")
with open(os.path.join(os.environ["SBATCH_LOG"]), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\n")
print(len(open(os.environ["SBATCH_LOG"]).readlines()))
"""


def test_the_slurm_script_grades_shards_and_merges_them(tmp_path: Path) -> None:
    kit = make_kit(tmp_path / "kit")
    activate = kit / ".venv" / "bin" / "activate"  # the kit's environment: this one
    activate.parent.mkdir(parents=True)
    activate.write_text(f'export PATH="{Path(sys.executable).parent}:$PATH"\n')
    for name, source in {"ada": SOLUTION, "bob": SOLUTION.replace("a + b", "a - b"), "cy": "", "dee": SOLUTION}.items():
        (tmp_path / "class" / name / "exercises" / "98_demo").mkdir(parents=True)
        (tmp_path / "class" / name / "exercises" / "98_demo" / "demo.py").write_text(source or SOLUTION + "\ndef (:\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SBATCH_LOG": str(tmp_path / "sbatch.log")}
    proc = subprocess.run(
        ["bash", str(BATCH / "slurm-grade.sh"), str(tmp_path / "class"), str(tmp_path / "results"), "3"],
        cwd=kit,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "afterok:1" in (tmp_path / "sbatch.log").read_text()  # the merge waits on the array
    rows = {row["student"]: row["total"] for row in csv.DictReader((tmp_path / "results" / "class.csv").open())}
    assert rows == {"ada": "4", "bob": "2", "cy": "0", "dee": "4"}, rows  # (98_demo only: 99_other untouched)
    assert sorted(p.name for p in (tmp_path / "results").glob("shard-*")) == ["shard-1", "shard-2", "shard-3"]
    assert (tmp_path / "results" / "report.html").is_file() and "ada" in (
        tmp_path / "results" / "logs" / "merge.out"
    ).read_text()


def test_the_github_workflow_grades_every_shard_and_merges_them() -> None:
    workflow = yaml.safe_load((BATCH / "github-actions-grade.yml").read_text())
    shards = workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and workflow["env"]["SHARDS"] == len(shards)
    assert workflow["jobs"]["merge"]["needs"] == "grade"
    commands = [
        line
        for job in workflow["jobs"].values()
        for step in job["steps"]
        for line in str(step.get("run", "")).splitlines()
        if line.startswith("kata ")
    ]
    merge = next(c for c in commands if "--merge" in c)
    assert merge.count("shards/results-") == len(shards)  # every shard's results, no more
    parser = build_parser()
    for command in commands:  # each parses as the kata command's own (a matrix value in place)
        words = shlex.split(
            re.sub(r"\$\{\{ *matrix.shard *\}\}", "1", re.sub(r"\$\{\{ *env.SHARDS *\}\}", "4", command))
        )
        parser.parse_args(words[1:])
