"""The code under test in another process: the tests' checks stay where that code cannot reach them.

In-process, a hostile submission can rebind ``assert_close``, patch the timer, hand back a
Tensor subclass that equals anything, or write into the reporter: it runs beside the checks.
Here the tests run in a trusted process (T) and the module under test lives in a sandboxed one
(S, `server`), which answers calls over a socket (`connection`) made through a stand-in module
(`stand_in`, made by `loading`):

- only plain data crosses (`wire`): tensors and Python scalars and containers, through torch's
  weights-only loading, checked again after it; never a pickle of an object, never a Tensor
  subclass;
- an exception crosses as its built-in type, its message and the learner's frames, so the
  failure reads as it does in-process (file:line, TODO, the learner's line; `errors`);
- gradients cross as a remote autograd.Function: backward asks S for the vector-Jacobian
  product (`autograd`);
- the aten ops a call ran (forbidden built-ins, loops) are recorded in S and handed to the
  recorders of grader.testing.forbid that are open in T (`call_context`);
- speed is T's clock (`code_clock`): each timed call gets inputs of fresh values, and what T
  measures of the round trip, minus what moving those tensors costs T itself, is the call's
  time (`timed`).

The `lesson` fixture is the seam: the same test files run in-process for a learner and
remotely for a class (``--kata-remote``). What cannot cross (a class, an object, a callable
argument) fails the test with `Unremotable`, which says so.
"""

TIMEOUT_MARGIN = 0.5  # seconds the code process's limit on a call leaves before the test's own
