"""Column-aligned text tables: rows of cells, each column padded to its width, left or right.

A column's width is at least `width`; with `fit`, it grows to its longest cell, so that every
row lines up; without, a longer cell pushes the rest of its own row along (as str.format
would), which keeps a fixed layout for the usual case.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    align: str = "<"  # "<" left, ">" right
    width: int = 0  # the least width
    fit: bool = False  # widen to the longest cell


def format_table(rows: list[list[str]], columns: list[Column], sep: str = "") -> list[str]:
    """The rows as lines (no newline), cells joined by `sep`; trailing spaces removed."""
    widths = [
        max([column.width, *(len(row[i]) for row in rows)]) if column.fit else column.width
        for i, column in enumerate(columns)
    ]
    return [
        sep.join(f"{cell:{column.align}{width}}" for cell, column, width in zip(row, columns, widths)).rstrip()
        for row in rows
    ]
