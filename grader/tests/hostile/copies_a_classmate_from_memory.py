"""expect: points=4 state=done

Hands in nothing of its own: searches its own memory, forked from the grader's, for a
classmate's files (gc.unfreeze, then gc.get_objects) and runs the correct one's demo.py. A
known gap (red team round 44): the grader holds the class's files when it forks a run, so this
copies. Until runs are forked from a process that never held the class, it scores in full
(docs/INSTRUCTORS.md); a real lesson's source read flags it for a person."""

import gc


def _classmate() -> dict:
    gc.unfreeze()
    for found in gc.get_objects():
        if type(found).__name__ == "Student" and found.name == "correct":
            answers: dict = {}
            exec(found.files["98_demo"]["demo.py"], answers)
            return answers
    return {}


_answers = _classmate()


def add(a, b):
    return _answers["add"](a, b) if "add" in _answers else None


def scale(x, k=2):
    return _answers["scale"](x, k) if "scale" in _answers else None
