"""Static checks of the kit's code: nothing needs a Python newer than pyproject.toml declares
(vermin), ruff's checks and its format, as pyproject.toml's [tool.ruff] sets them, pass, and each
`noqa` says why."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from grader.tests.kits import ROOT

CHECKED = ["grader", "tests", "solutions", "exercises", "benchmarks"]


def check(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_no_code_needs_a_newer_python_than_declared():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    [minimum] = re.fullmatch(r">=(\d+\.\d+)", declared).groups()
    # Hostile submissions are data, one of them not even Python.
    done = check(
        "-c",
        "import sys, vermin; sys.exit(vermin.main())",
        "--no-tips",
        "--violations",
        f"--target={minimum}-",
        "--exclude-regex",
        "grader/tests/hostile/",
        *CHECKED,
    )
    assert done.returncode == 0, f"code that needs a Python newer than {minimum}:\n{done.stdout}{done.stderr}"


def test_ruff_finds_nothing():
    done = check("-m", "ruff", "check", "--no-cache", *CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_code_is_as_ruff_formats_it():
    """pyproject.toml's [tool.ruff.format] says which files it leaves as they are, and why."""
    done = check("-m", "ruff", "format", "--check", "--no-cache", *CHECKED)
    assert done.returncode == 0, f"run `ruff format {' '.join(CHECKED)}`:\n{done.stdout}{done.stderr}"


NOQA = re.compile(r"#\s*noqa\b(?::\s*[A-Z]+[0-9]+(?:,\s*[A-Z]+[0-9]+)*)?(.*)$")


def test_each_noqa_says_why():
    """A rule switched off on a line says why, in words after its codes: "# noqa: BLE001 (why)"."""
    bare = []
    for tree in CHECKED:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if "hostile" in path.parts or "mutants" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if (found := NOQA.search(line)) and not re.search(r"\w", found[1]):
                    bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bare, "a noqa without its reason:\n" + "\n".join(bare)
