"""Lesson 02: modules."""
