"""``kata reset``: being built (issue 6)."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.lessons import KitError


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    pass


def run(args: argparse.Namespace, root: Path) -> int:
    raise KitError(f"`kata {args.command}` is not built yet")
