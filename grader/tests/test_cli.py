"""The `kata` command line itself: help, hints, and errors that say how to fix them."""

from __future__ import annotations

import re

import pytest

from grader.cli import COMMANDS, main
from grader.lessons import KitError
from grader.tests.kits import ROOT


@pytest.fixture
def in_kit(kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.chdir(kit.path / "exercises" / "98_demo")  # any folder inside the kit will do
    return kit


def test_help_lists_every_command_with_an_example(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        # (its summary beside it, or on the next line where the name is longer than the column: argparse's layout)
        assert re.search(rf"\n    {name}( +|\n +)\S", out), f"`kata --help` does not list {name}"
        assert f"kata {name}" in out.split("examples:")[1], f"`kata --help` has no example of {name}"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_has_help_with_examples(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: kata {command}") and f"examples:\n  kata {command}" in out


def test_no_command_prints_the_help(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_hints_one_level_at_a_time(in_kit, capsys):
    assert main(["hint", "98"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("98_demo, hint 1 of 3\n\nThink.") and "Still stuck? kata hint 98_demo 2" in out
    assert main(["hint", "demo", "3"]) == 0
    out = capsys.readouterr().out
    assert "Return the sum." in out and "Still stuck" not in out


def test_hint_errors_say_what_is_valid(in_kit, capsys):
    assert main(["hint", "98", "9"]) == 0  # past the last level: the last one
    assert capsys.readouterr().out.startswith("98_demo has 3 hint levels; here is the last one.\n98_demo, hint 3 of 3")
    assert main(["hint", "98", "0"]) == 2
    assert "error: lesson 98_demo has hint levels 1 to 3; try `kata hint 98_demo 1`" in capsys.readouterr().err
    assert main(["hint", "nope"]) == 2
    assert "error: no lesson 'nope'; the lessons are: 98_demo, 99_other" in capsys.readouterr().err
    (in_kit.path / "tests/99_other/hints.md").unlink()
    assert main(["hint", "99"]) == 2
    assert "lesson 99_other has no hints yet" in capsys.readouterr().err


def test_outside_a_kit_it_says_where_to_run(tmp_path, monkeypatch, capsys):
    import grader.lessons

    monkeypatch.chdir(tmp_path)
    # As installed from a wheel: no kit around the package either.
    monkeypatch.setattr(grader.lessons, "__file__", str(tmp_path / "site-packages/grader/lessons.py"))
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: no kit found at or above") and "Run the command from inside your copy of the kit" in err
    )


def test_outside_a_kit_an_editable_install_finds_its_own_kit(tmp_path, monkeypatch):
    from grader.lessons import find_root

    monkeypatch.chdir(tmp_path)  # an nbgrader course folder, say
    assert find_root() == ROOT
    with pytest.raises(KitError, match="no kit found"):
        find_root(tmp_path)  # a folder named with --root is the only place looked at
