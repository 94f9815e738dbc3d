"""`kata release`: a student bundle with the stubs, the public tests and the tooling, and no answers."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.cli import main
from grader.authoring.public_tests import reduce_tests
from grader.authoring.release import SETUP
from grader.tests.kits import ROOT, SOLUTION, STUB

RICH = '''\
"""Tests."""

import pytest
from pytest import mark


# --- helpers ---


@pytest.fixture
def data():
    return [1, 2]  # a fixture the public tests use


def helper(x):
    return x * 2


# --- public ---


@pytest.mark.public
@pytest.mark.parametrize("n", [1, 2])
def test_public(data, n):
    # a comment inside
    assert helper(n) in (2, 4)


# Attached to the hidden test: goes with it.
@pytest.mark.points(2)
@pytest.mark.parametrize("n", [1, 2])
def test_hidden(n):
    assert n
    # trailing comment of the hidden test


@mark.public
def test_public_via_mark():
    pass


class TestHidden:
    def test_a(self):
        pass


@pytest.mark.public
class TestPublic:
    def test_b(self):
        pass


class TestMixed:
    def test_gone(self):
        pass

    @pytest.mark.public
    def test_kept(self):
        pass


# --- hidden only: the header goes too ---


def test_hidden_too():
    pass
'''

RICH_REDUCED = '''\
"""Tests."""

import pytest
from pytest import mark


# --- helpers ---


@pytest.fixture
def data():
    return [1, 2]  # a fixture the public tests use


def helper(x):
    return x * 2


# --- public ---


@pytest.mark.public
@pytest.mark.parametrize("n", [1, 2])
def test_public(data, n):
    # a comment inside
    assert helper(n) in (2, 4)


@mark.public
def test_public_via_mark():
    pass


@pytest.mark.public
class TestPublic:
    def test_b(self):
        pass


class TestMixed:
    @pytest.mark.public
    def test_kept(self):
        pass
'''


def test_reduce_cuts_hidden_tests_by_lines_and_keeps_everything_else():
    reduced = reduce_tests(RICH)
    assert reduced.text == RICH_REDUCED
    assert reduced.kept == ["test_public", "test_public_via_mark", "TestPublic::test_b", "TestMixed::test_kept"]
    assert reduced.dropped == ["test_hidden", "TestHidden::test_a", "TestMixed::test_gone", "test_hidden_too"]


def test_a_public_pytestmark_keeps_the_whole_module():
    source = 'import pytest\n\npytestmark = [pytest.mark.public, pytest.mark.filterwarnings("ignore")]\n\n\ndef test_a():\n    pass  # kept\n'
    reduced = reduce_tests(source)
    assert (reduced.text, reduced.kept, reduced.dropped) == (source, ["test_a"], [])


# --- the bundle of the demo kit ---------------------------------------------------------------


def release(kit, monkeypatch, capsys, out: Path) -> tuple[int, str, str]:
    monkeypatch.chdir(kit.path)
    status = main(["release", str(out)])
    stdout, stderr = capsys.readouterr()
    return status, stdout, stderr


# `kata ARGS` as in a student's own environment: the kit, installed here in editable mode, is out of
# reach (its import hook would otherwise answer `find_spec("grader.authoring.verify")` from the kit's grader/).
AS_A_STUDENT = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in repr(f)]; "
    "from grader.cli import main; sys.exit(main(sys.argv[1:]))"
)


def in_bundle(bundle: Path, *args: str) -> subprocess.CompletedProcess:
    """`python ARGS` run inside the bundle, so that its own grader package is the one imported."""
    return subprocess.run([sys.executable, *args], cwd=bundle, capture_output=True, text=True, timeout=120)


@pytest.fixture
def bundle(kit, monkeypatch, capsys, tmp_path) -> Path:
    out = tmp_path / "student"
    status, stdout, stderr = release(kit, monkeypatch, capsys, out)
    assert status == 0, stderr
    assert "release: 2 lessons, 4 public tests kept, 4 hidden tests dropped" in stdout
    return out


def test_the_bundle_has_stubs_public_tests_and_tooling_but_no_answers(bundle):
    files = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert not any(f.startswith("solutions/") or "/mutants/" in f for f in files), sorted(files)
    assert {
        "exercises/98_demo/demo.py",
        ".kata/pristine/98_demo/demo.py",
        ".kata/pristine/98_demo/__init__.py",
        "tests/98_demo/hints.md",
        "tests/99_other/test_demo.py",
        "grader/plugin/__init__.py",
        "grader/learner/reset.py",
        "grader/notebooks/grade_cell.py",
        "conftest.py",
        "pyproject.toml",
        "README.md",
    } <= files
    assert not {"grader/authoring/verify.py", "grader/authoring/release.py", "grader/grading/sandbox.py"} & files
    assert not any(f.startswith("grader/tests/") or "__pycache__" in f for f in files)
    assert (bundle / ".kata/pristine/98_demo/demo.py").read_text() == STUB
    tests = (bundle / "tests/98_demo/test_demo.py").read_text()
    assert re.findall(r"def (test\w+)", tests) == ["test_add", "test_add_negative"]
    assert tests.startswith("import pytest\n\n\n@pytest.mark.public\ndef test_add(lesson):")
    readme = (bundle / "README.md").read_text()
    assert SETUP in readme and "- `98_demo`\n- `99_other`" in readme
    for command in ("kata next", "pytest exercises/98_demo", "kata hint", "kata status", "kata watch", "kata reset"):
        assert command in readme


def test_the_bundle_runs_its_public_tests_and_its_cli(bundle):
    result = in_bundle(bundle, "-m", "pytest", "-p", "no:cacheprovider", "exercises/98_demo")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.rstrip().splitlines()[-1].strip("= ").startswith("2 todo"), result.stdout
    (bundle / "exercises/98_demo/demo.py").write_text(SOLUTION)
    result = in_bundle(bundle, "-m", "pytest", "-p", "no:cacheprovider", "exercises/98_demo")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 2 passed" in result.stdout
    result = in_bundle(bundle, "-c", AS_A_STUDENT, "--help")
    assert result.returncode == 0, result.stderr
    assert "kata reset" in result.stdout and "hint" in result.stdout
    assert "verify" not in result.stdout and "release" not in result.stdout
    # More lessons than jobs: kata status would fork them through class grading's runner, which
    # a release leaves out; each lesson runs fresh instead.
    result = in_bundle(bundle, "-c", AS_A_STUDENT, "status", "--no-cache", "-j", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "98_demo" in result.stdout and "99_other" in result.stdout, result.stdout


def test_the_bundles_watcher_warms_up_with_the_bundles_own_modules(bundle):
    # kata watch forks its later runs from a warmed-up process: what that needs must ship.
    warm_up = AS_A_STUDENT.split("from grader.cli")[0] + (
        "import grader; from grader.learner.lesson_runs import Warm; w = Warm.start(); print(w.ready, grader.__file__)"
    )
    result = in_bundle(bundle, "-c", warm_up)
    assert result.returncode == 0, result.stderr
    ready, source = result.stdout.split()
    assert ready == "True" and source.startswith(str(bundle)), result.stdout


def test_outdir_must_be_new_or_empty_and_outside_the_kit(kit, monkeypatch, capsys, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    status, _, err = release(kit, monkeypatch, capsys, tmp_path / "taken")
    assert status == 2 and "taken already exists and is not an empty folder; pick another OUTDIR or delete" in err
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    status, _, err = release(kit, monkeypatch, capsys, kit.path / "student")
    assert status == 2 and "is inside the kit" in err
    assert not (kit.path / "student").exists()
    (tmp_path / "empty").mkdir()
    assert release(kit, monkeypatch, capsys, tmp_path / "empty")[0] == 0


def test_a_stub_without_raise_notimplementederror_is_shipped_with_a_warning(kit, monkeypatch, capsys, tmp_path):
    (kit.path / "exercises/99_other/demo.py").write_text(SOLUTION)
    status, _, err = release(kit, monkeypatch, capsys, tmp_path / "student")
    assert status == 0
    assert "warning: exercises/99_other/demo.py has no `raise NotImplementedError`: is it an answer?" in err
    assert "98_demo/demo.py" not in err


def test_a_test_file_that_does_not_parse_stops_the_release_before_anything_is_written(
    kit, monkeypatch, capsys, tmp_path
):
    (kit.path / "tests/99_other/test_demo.py").write_text("def test_x(:\n    pass\n")
    status, _, err = release(kit, monkeypatch, capsys, tmp_path / "student")
    assert status == 2 and "test_demo.py does not parse (line 1:" in err
    assert not (tmp_path / "student").exists()


# --- the real kit ---------------------------------------------------------------------------


def public_tests_by_text(source: str) -> list[str]:
    """The public tests of a test file found by reading it, not parsing it: a test function whose
    decorators, in the lines right above its `def`, include @pytest.mark.public."""
    return re.findall(r"^@pytest\.mark\.public\n(?:@.*\n|[ )\]].*\n)*def (test\w+)", source, flags=re.MULTILINE)


def collected(folder: Path, *args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {line for line in result.stdout.splitlines() if "::" in line}


def test_a_release_of_the_real_kit_keeps_exactly_the_public_tests(tmp_path, capsys):
    out = tmp_path / "student"
    assert main(["--root", str(ROOT), "release", str(out)]) == 0
    capsys.readouterr()
    assert not any(p.name in ("solutions", "mutants") for p in out.rglob("*"))
    sources = sorted((ROOT / "tests").glob("[0-9][0-9]_*/test_*.py"))
    assert len(sources) >= 10
    for source in sources:
        released = out / source.relative_to(ROOT)
        tree = ast.parse(released.read_text(encoding="utf-8"), filename=str(released))
        names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test")]
        assert names == public_tests_by_text(source.read_text(encoding="utf-8")), released
    assert collected(out, "tests/07_stable") == collected(ROOT, "-m", "public", "tests/07_stable")
    learn = (ROOT / "README.md").read_text(encoding="utf-8").split("<!-- learn-command -->")[1]
    assert SETUP in learn, "the student README's set-up command no longer matches the kit README's"
    ignored = (out / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".kata/cache/" in ignored and ".kata/backups/" in ignored and ".kata/" not in ignored, (
        "a student who commits the bundle must keep .kata/pristine (what `kata reset` restores)"
    )
