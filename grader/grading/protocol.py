"""The results channel of a sandboxed run: what the child writes, and how the parent reads it.

A forked grading run (grader.grading.sandbox) reports over a pipe the parent owns, never
through a file in the grading copy, where the student's code could rewrite it. Each event is
one JSON line:

    {"collected": {"tests": [TestInfo...], "errors": [CollectError...]}}   once, before any test
    {"test": TestResult}                                                    after each teardown
    {"tamper": ["torch.testing.assert_close was replaced", ...]}
    {"review": ["test_x: the source of stable_softmax names a built-in its test forbids (...) ..."]}
                                                          --remote: for a person to read
    {"code_ended": {"returncode": int, "overran": bool}}
                                  --remote: the code's process ended (was stopped) while its tests ran
    {"overhead": {"one": float, "each": float}}
                                  --remote: the protocol's cost of a timed call, as the tests measured it
    {"finish": {"exitstatus": int}}

(the objects as grader.results writes them with to_json). The child's side is `encode`; the
parent's is `Reader`, which trusts nothing it reads: the student's code runs in the same
process as the writer and may write to the pipe too. So a test counts only when a "test" event
reports it, for a test that "collected" announced, once, before "finish"; its points and
visibility are the collected ones, not what the event claims. Whatever does not fit is
recorded as tampering, and a run that ends early keeps only what it reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from grader.results import CollectError, Outcome, RunResult, TestInfo, TestResult

CHANNEL_LIMIT = 32 << 20  # bytes a run may send on its channel; more is a flood
MAX_PROBLEMS = 20  # distinct tampering problems kept for one run
MAX_PROBLEM = 300  # characters kept of each
MAX_OVERHEAD = 0.1  # seconds: a protocol's cost per timed call beyond this is no measurement


def encode(kind: str, payload) -> bytes:
    """One event as the line the child writes."""
    return (json.dumps({kind: payload}) + "\n").encode("utf-8", "replace")


def collected_event(collected: list[TestInfo], errors: list[CollectError]) -> bytes:
    return encode("collected", {"tests": [t.to_json() for t in collected], "errors": [e.to_json() for e in errors]})


def result_event(result: TestResult) -> bytes:
    return encode("test", result.to_json())


def tamper_event(problems: list[str]) -> bytes:
    return encode("tamper", list(problems))


def review_event(notes: list[str]) -> bytes:
    return encode("review", list(notes))


def code_ended_event(returncode: int, overran: bool = False) -> bytes:
    return encode("code_ended", {"returncode": int(returncode), "overran": bool(overran)})


def overhead_event(one: float, each: float) -> bytes:
    return encode("overhead", {"one": float(one), "each": float(each)})


def finish_event(exitstatus: int) -> bytes:
    return encode("finish", {"exitstatus": int(exitstatus)})


class Reader:
    """The parent's end: feed it the bytes as they come (`take`), then `result()`."""

    def __init__(self) -> None:
        self.run = RunResult()
        self.received = 0  # bytes, floods included
        self._pending = b""
        self._known: dict[str, TestInfo] = {}  # nodeid -> as collected
        self._tests: dict[str, TestResult] = {}  # nodeid -> its accepted result, in the order they came
        self._seen: set[str] = set()  # the tampering problems recorded
        self._reviewed: dict[str, list[str]] = {}  # a note for a person -> the tests that made it

    def take(self, data: bytes) -> None:
        """Bytes read from the pipe, whole lines or not."""
        self.received += len(data)
        if self.received > CHANNEL_LIMIT:
            self._tamper("the results channel was flooded")
            return
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            if line.strip():
                self.feed(line)

    def feed(self, line: bytes) -> None:
        """One line. Anything that does not fit the protocol is tampering."""
        try:
            ((kind, payload),) = json.loads(line).items()
        except (ValueError, AttributeError, TypeError):
            self._tamper("an unreadable line appeared on the results channel", once=False)
            return
        if self.run.exitstatus is not None:
            self._tamper(f"a {kind!r} event came after the run had finished", once=False)
        elif kind == "collected":
            self._collected(payload)
        elif kind == "test":
            self._test(payload)
        elif kind == "tamper":
            for problem in payload if isinstance(payload, list) else [payload]:
                self._tamper(str(problem))
        elif kind == "review":
            for note in payload if isinstance(payload, list) else [payload]:
                self._review(str(note))
        elif kind == "code_ended":
            try:
                self.run.code_returncode = int(payload["returncode"])
                self.run.code_overran = payload.get("overran") is True
            except (KeyError, TypeError, ValueError, AttributeError):
                self._tamper("an unreadable 'code_ended' event appeared on the results channel", once=False)
        elif kind == "overhead":
            try:
                one, each = float(payload["one"]), float(payload["each"])
                if not (0.0 <= one < MAX_OVERHEAD and 0.0 <= each < MAX_OVERHEAD):
                    raise ValueError(one, each)
                self.run.overhead = (one, each)
            except (KeyError, TypeError, ValueError):
                self._tamper("an unreadable 'overhead' event appeared on the results channel", once=False)
        elif kind == "finish":
            try:
                self.run.exitstatus = int(payload["exitstatus"])
            except (KeyError, TypeError, ValueError):
                self._tamper("an unreadable 'finish' event appeared on the results channel", once=False)
        else:
            self._tamper(f"an unknown event {kind!r} appeared on the results channel", once=False)

    def result(self) -> RunResult:
        """What the run reported. A line cut off at the end (the writer was killed mid-write, or
        something else wrote there) is tampering too."""
        if self._pending.strip():
            self._tamper("the results channel ended in the middle of a line", once=False)
            self._pending = b""
        self.run.tests = list(self._tests.values())
        self.run.review = [f"{_counted(tests)}: {what}" if tests[0] else what for what, tests in self._reviewed.items()]
        return self.run

    def _tamper(self, problem: str, *, once: bool = True) -> None:
        """Record a problem: one line of printable text, at most MAX_PROBLEM characters, at most
        MAX_PROBLEMS of them (the run writes some of these words: a flood of them must cost
        the grader nothing, and none may bring a line or a terminal escape of its own into
        the summary)."""
        problem = printable(problem)[:MAX_PROBLEM]
        if (once and problem in self._seen) or len(self.run.tampering) >= MAX_PROBLEMS:
            return
        self._seen.add(problem)
        self.run.tampering.append(problem)

    def _review(self, note: str) -> None:
        """A note for a person to read, "test: what", kept as tampering problems are (`_tamper`):
        what many tests found is one note that counts them."""
        test, said, what = printable(note).partition(": ")
        if not said:  # a note of no test's
            test, what = "", test
        what = what[:MAX_PROBLEM]
        if what in self._reviewed or len(self._reviewed) < MAX_PROBLEMS:
            self._reviewed.setdefault(what, []).append(test[:MAX_PROBLEM])

    def _collected(self, payload) -> None:
        if self.run.collected is not None:
            self._tamper("the run announced its tests twice", once=False)
            return
        try:
            tests = [TestInfo.from_json(t) for t in payload["tests"] if isinstance(t, dict) and "nodeid" in t]
            errors = [CollectError.from_json(e) for e in payload.get("errors", [])]
        except (KeyError, TypeError, ValueError, AttributeError):
            self._tamper("an unreadable 'collected' event appeared on the results channel", once=False)
            return
        self.run.collected, self.run.collect_errors = tests, errors
        self._known = {t.nodeid: t for t in tests}

    def _test(self, entry) -> None:
        nodeid = entry.get("nodeid") if isinstance(entry, dict) else None
        outcome = entry.get("outcome") if isinstance(entry, dict) else None
        if nodeid not in self._known:
            self._tamper(f"a result came for a test that was never collected: {nodeid!r}", once=False)
        elif nodeid in self._tests:
            self._tamper(f"{nodeid} reported a result twice", once=False)
        elif outcome not in {o.value for o in Outcome}:
            self._tamper(f"{nodeid} reported an unknown outcome {outcome!r}", once=False)
        else:
            try:
                result = TestResult.from_json(entry)
            except (KeyError, TypeError, ValueError, AttributeError):
                self._tamper(f"{nodeid} reported an unreadable result", once=False)
                return
            known = self._known[nodeid]  # points and visibility come from collection; holding, from the verdict
            self._tests[nodeid] = replace(result, max_points=known.max_points, public=known.public, held=False)


def _counted(tests: list[str]) -> str:
    """The first test, and how many more made the same note."""
    more = len(dict.fromkeys(tests)) - 1
    return tests[0] + (f" (and {more} more test{'s' if more > 1 else ''})" if more else "")


def printable(text: str) -> str:
    """`text` on one line with no control characters (newlines, escapes), each shown as a space."""
    return _CONTROL.sub(" ", text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
