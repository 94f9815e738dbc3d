"""Forgets autocast: the model runs in float32, only the loss under autocast (mutant train_step_forward_outside_autocast; the control of forgets_autocast_and_lies).

after: tests/08_amp/mutants/train_step_forward_outside_autocast.py
expect: points=31 held=0
in-process: points=31 held=0
"""
