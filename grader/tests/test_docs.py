"""The docs read in short sentences: each page's prose, outside code blocks and tables, averages
at most MEAN_WORDS words a sentence, and no sentence has more than MOST_WORDS."""

from __future__ import annotations

import re

import pytest

from grader.tests.kits import ROOT

MEAN_WORDS = 30
MOST_WORDS = 60
# The pages rewritten to this measure so far (issue #43); every page of docs/ and the README is the goal.
PAGES = [
    "README.md",
    "docs/ARCHITECTURE.md",
    "docs/AUTHORING.md",
    "docs/INSTRUCTORS.md",
    "docs/MEASUREMENTS.md",
    "docs/MUTATION.md",
    "docs/PERFORMANCE.md",
    "docs/TESTING.md",
]

# A sentence ends at . ! or ? before a space and a capital, a digit, a backtick or a
# parenthesis, or at the end of its paragraph; "e.g." and "i.e." end none.
END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?]\s+(?=[A-Z0-9`(\"*])")


def paragraphs(text: str) -> list[str]:
    """The page's prose: each paragraph or list item as one line, without code blocks, indented
    code, tables, headings and HTML comments."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.MULTILINE | re.DOTALL)
    found, current = [], []
    for line in text.splitlines():
        prose = line.strip() and not line.startswith(("    ", "\t", "|", "#"))
        starts_item = re.match(r"\s*([-*]|\d+\.)\s", line)
        if current and (not prose or starts_item):
            found.append(" ".join(current))
            current = []
        if prose:
            current.append(line.strip())
    if current:
        found.append(" ".join(current))
    return found


def words(sentence: str) -> int:
    """Words of a sentence: a code span or a link counts as one word, whatever it holds."""
    sentence = re.sub(r"`[^`]*`", "CODE", sentence)
    sentence = re.sub(r"\[([^\]]*)\]\([^)]*\)", "LINK", sentence)
    return len(re.findall(r"[\w'-]*\w", sentence))


def sentences(text: str) -> list[str]:
    """The page's sentences; a list item of fewer than five words (a name, a link) is no sentence."""
    found = []
    for paragraph in paragraphs(text):
        paragraph = re.sub(r"^\s*([-*]|\d+\.)\s+", "", paragraph)
        found += [s for s in END.split(paragraph) if words(s) >= 5]
    return found


@pytest.mark.parametrize("page", PAGES)
def test_the_page_reads_in_short_sentences(page):
    lengths = [(words(s), s) for s in sentences((ROOT / page).read_text(encoding="utf-8"))]
    mean = sum(n for n, _ in lengths) / len(lengths)
    longest, sentence = max(lengths)
    assert mean <= MEAN_WORDS, f"{page}: {mean:.1f} words a sentence on average"
    assert longest <= MOST_WORDS, f"{page}: a sentence of {longest} words: {sentence}"
