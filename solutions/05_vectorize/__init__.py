"""Lesson 05: vectorise a batch gather."""
