"""Effective PyTorch Kata: the harness, the grader and the shared test helpers."""

__version__ = "0.1.0"
