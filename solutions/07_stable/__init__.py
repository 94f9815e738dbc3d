"""Lesson 07: numerical stability."""
