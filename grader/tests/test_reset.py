"""`kata reset`: a learner's files are backed up byte for byte before the stubs come back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import grader.learner.reset
from grader.cli import main
from grader.tests.kits import STUB

EDIT = "def add(a, b):\n    return a + b  # mine\r\n\xe9\n"  # odd bytes too: CRLF, non-ASCII


def kata(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def git_kit(kit, monkeypatch):
    """The demo kit as a git repository with the stubs committed; cwd is its root."""
    git(kit.path, "init", "-q")
    git(kit.path, "add", "-A")
    git(kit.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    monkeypatch.chdir(kit.path)
    return kit


@pytest.fixture
def release_kit(kit, monkeypatch):
    """The demo kit as a student release has it: no git, the stubs in .kata/pristine; cwd is its root."""
    for lesson in ("98_demo", "99_other"):
        folder = grader.learner.reset.pristine_dir(kit.path, lesson)
        folder.mkdir(parents=True)
        for stub in (kit.path / "exercises" / lesson).iterdir():
            (folder / stub.name).write_bytes(stub.read_bytes())
    monkeypatch.chdir(kit.path)
    return kit


def stamps(monkeypatch, *values: str) -> None:
    """Make the next resets see these clock readings, one per reset."""
    it = iter(values)
    monkeypatch.setattr(grader.learner.reset, "_stamp", lambda: next(it))


def demo(kit) -> Path:
    return kit.path / "exercises" / "98_demo" / "demo.py"


def backups(kit) -> list[str]:
    folder = kit.path / ".kata" / "backups"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("source", ["git_kit", "release_kit"])
def test_edits_are_backed_up_byte_for_byte_and_the_stub_restored(source, request, capsys, monkeypatch):
    kit = request.getfixturevalue(source)
    stamps(monkeypatch, "20250101-120000")
    demo(kit).write_bytes(EDIT.encode("utf-8"))
    status, out, _ = kata(capsys, "reset", "98")
    assert status == 0, out
    backup = kit.path / ".kata/backups/20250101-120000/98_demo/demo.py"
    assert backup.read_bytes() == EDIT.encode("utf-8")
    assert demo(kit).read_text(encoding="utf-8") == STUB
    assert "cp .kata/backups/20250101-120000/98_demo/demo.py exercises/98_demo/" in out
    assert "__init__.py" not in out  # unchanged files are neither backed up nor restored
    assert sorted(p.name for p in backup.parent.iterdir()) == ["demo.py"]


def test_a_second_reset_in_the_same_second_keeps_the_first_backup(release_kit, capsys, monkeypatch):
    stamps(monkeypatch, *["20250101-120000"] * 3)
    for n in range(3):
        demo(release_kit).write_text(f"# attempt {n}\n")
        assert kata(capsys, "reset", "98_demo")[0] == 0
    assert backups(release_kit) == ["20250101-120000", "20250101-120000-1", "20250101-120000-2"]
    for n, name in enumerate(backups(release_kit)):
        assert (release_kit.path / ".kata/backups" / name / "98_demo/demo.py").read_text() == f"# attempt {n}\n"


def test_a_pristine_lesson_makes_no_backup(release_kit, capsys):
    status, out, _ = kata(capsys, "reset", "demo")
    assert status == 0
    assert "98_demo is already pristine" in out
    assert backups(release_kit) == []


def test_list_shows_the_backups_newest_first(release_kit, capsys, monkeypatch):
    status, out, _ = kata(capsys, "reset", "--list")
    assert (status, out) == (0, "no backups yet: `kata reset LESSON` makes one each time it replaces your files.\n")
    stamps(monkeypatch, "20250101-120000", "20250101-120000", "20250102-090000")
    for lesson in ("98_demo", "98_demo", "99_other"):
        (release_kit.path / "exercises" / lesson / "demo.py").write_text("# mine\n")
        kata(capsys, "reset", lesson)
    status, out, _ = kata(capsys, "reset", "--list")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "3 backups in .kata/backups, newest first:"
    assert [line.split()[:3] for line in lines[1::2]] == [
        ["20250102-090000", "99_other", "demo.py"],
        ["20250101-120000-1", "98_demo", "demo.py"],
        ["20250101-120000", "98_demo", "demo.py"],
    ]
    assert lines[2].strip() == "cp .kata/backups/20250102-090000/99_other/demo.py exercises/99_other/"
    assert kata(capsys, "reset", "--list", "99")[2] == ""


def test_dry_run_changes_nothing(release_kit, capsys):
    demo(release_kit).write_text("# mine\n")
    (release_kit.path / "exercises/98_demo/__init__.py").unlink()
    status, out, _ = kata(capsys, "reset", "98", "--dry-run")
    assert status == 0
    assert "would back up" in out and "would restore" in out and "(it was missing)" in out
    assert demo(release_kit).read_text() == "# mine\n"
    assert not (release_kit.path / "exercises/98_demo/__init__.py").exists()
    assert not (release_kit.path / ".kata/backups").exists()


def test_an_unknown_lesson_lists_the_valid_ones(release_kit, capsys):
    status, _, err = kata(capsys, "reset", "42_nope")
    assert status == 2
    assert err == "error: no lesson '42_nope'; the lessons are: 98_demo, 99_other\n"


def test_no_pristine_source_is_a_clear_error_and_changes_nothing(kit, capsys, monkeypatch):
    monkeypatch.chdir(kit.path)
    demo(kit).write_text("# mine\n")
    status, _, err = kata(capsys, "reset", "98")
    assert status == 2
    assert err.startswith("error: no pristine copy of lesson 98_demo:")
    assert "nothing was changed" in err and "git checkout HEAD -- exercises/98_demo" in err
    assert demo(kit).read_text() == "# mine\n"
    assert not (kit.path / ".kata").exists()


def test_works_from_inside_the_lesson_folder(git_kit, capsys, monkeypatch):
    folder = git_kit.path / "exercises" / "98_demo"
    monkeypatch.chdir(folder)
    demo(git_kit).write_text("# mine\n")
    status, out, _ = kata(capsys, "reset", "98")
    assert status == 0
    assert demo(git_kit).read_text() == STUB
    [backup] = backups(git_kit)
    # Outside the kit's root, the cp command uses absolute paths, so it works from here.
    saved = git_kit.path.resolve() / ".kata/backups" / backup / "98_demo/demo.py"
    assert f"cp {saved} {folder.resolve()}/" in out


def test_a_file_the_learner_added_survives(git_kit, capsys):
    notes = git_kit.path / "exercises/98_demo/notes.py"
    notes.write_text("# my notes\n")
    demo(git_kit).write_text("# mine\n")
    status, out, _ = kata(capsys, "reset", "98")
    assert status == 0
    assert notes.read_text() == "# my notes\n"
    assert "left alone: notes.py (you added it" in out
    assert "notes.py" not in out.split("left alone")[0]
