"""Lesson 02: modules. Keep parameters and computation together in an nn.Module.

Why it matters
--------------
A model is more than a function: it owns tensors that training changes (its parameters) and
code that uses them (its forward pass). `torch.nn.Module` is the container that ties the two
together, and every tool in PyTorch expects one: an optimizer takes `model.parameters()`,
a checkpoint is `model.state_dict()`, `model.to(torch.float64)` or `model.to("cuda")` moves
every parameter, and `model.train()` / `model.eval()` switch dropout and batch norm in every
layer. All of these walk the module's *registered* contents, recursively.

What gets registered
--------------------
Assigning to an attribute of a module registers it when the value is

- an `nn.Parameter` (a tensor wrapper with requires_grad=True): it shows up in
  `parameters()`, `named_parameters()` (under the attribute's name) and `state_dict()`;
- another `nn.Module`: a submodule, whose parameters are listed as "name.weight" and so on.

Anything else is a plain Python attribute, invisible to all of the above. That includes a
tensor created with requires_grad=True (it gets gradients, but no optimizer built from
`parameters()` ever updates it), and a Python list or dict of layers:

    >>> class Forgetful(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.layers = [nn.Linear(3, 3), nn.Linear(3, 1)]  # a plain list
    >>> len(list(Forgetful().parameters()))
    0

No error, no warning: the optimizer gets an empty list (or, worse, only the other layers'
parameters, and these layers silently stay at their random start), `.to()` leaves them
behind and `.eval()` never reaches them. A module can see only into what is itself a module,
so a collection of layers has to be one too.

Call the module, not .forward
-----------------------------
`model(x)` runs `nn.Module.__call__`, which runs the forward pre-hooks, then `forward`, then
the forward hooks. Hooks are how PyTorch adds behaviour from outside: pruning
(`torch.nn.utils.prune`) recomputes the masked weight in a pre-hook, and profilers, feature
extractors and debugging tools read activations in hooks. `model.forward(x)` skips all of
them, silently: you write `forward`, you call the module.

Names in nn.Sequential
----------------------
`nn.Sequential(a, b, c)` chains modules and names them by position, "0", "1", "2", so a
checkpoint holds keys like "2.weight": they say nothing about the layer, and they all shift
when you insert one. A name such as "classifier.weight" says what it is and stays put; the
MLP below is checked by its names. Sequential's own `forward` runs the children in the order
they were registered.

Pitfall: one activation module reused in every hidden layer. For nn.ReLU nothing shows; an
activation with parameters (nn.PReLU, a learnable slope) then shares one slope across all
the layers, and the model has fewer parameters than it should.

Training a module
-----------------
The classic first example fits y = 5x + 3 + noise with a module holding two parameters `a`
and `b`. An optimizer keeps references to the parameters it was given, and each `step()`
moves them along whatever their `.grad` holds at that moment. `backward()` does not
overwrite `.grad`, it adds into it, and nothing clears it unless you do. So where the
clearing sits in a step matters, and both wrong places fail silently: the steps follow the
running sum of every gradient so far, or `step()` sees only zeros and nothing trains. You
write that loop in `fit`, for any module.

What the tests expect
---------------------
- `Linear1D`: exactly two parameters, named "a" and "b", each of shape (1,), random in
  [0, 1) (the same after the same torch.manual_seed); y = a * x + b keeps x's shape;
  `.to(torch.float64)` converts them; gradients reach both; `fit` recovers a ~= 5 and b ~= 3
  (plus the noise's mean) from noisy samples of y = 5x + 3.
- `MLP`: the layers, their order and their names (so the `state_dict` keys), no activation
  after the last Linear, a fresh activation per hidden layer, a ValueError for fewer than
  two sizes, and an output equal to applying the layers by hand.
- `Ensemble`: every member registered (parameters, `state_dict`, `.to()`, `.eval()` and an
  optimizer all reach them), the output is the mean of the members' outputs, any iterable of
  members works (a generator too), no members is a ValueError; each member's hooks run once
  per call, and x is left unchanged.
- `fit`: the same parameters and loss as plain SGD on the mean squared error, step for step;
  the module's hooks fire once per step; the result is a Python float.

Check your work with:  pytest exercises/02_modules
"""

from collections.abc import Callable, Iterable, Sequence

import torch
from torch import nn


### BEGIN SOLUTION
from collections import OrderedDict

import torch.nn.functional as F
### END SOLUTION


class Linear1D(nn.Module):
    """The model y = a * x + b, with two learnable scalars.

    Parameters: `a` and `b`, each an nn.Parameter of shape (1,), float32, a random value in
    [0, 1): the same after the same `torch.manual_seed`, different after a different one, and
    a different from b. `named_parameters()` yields exactly ("a", a) and ("b", b), in that
    order.
    """

    def __init__(self) -> None:
        super().__init__()
        # TODO: give the module its two learnable scalars, self.a and self.b (a first), each
        #       of shape (1,), random in [0, 1) and reproducible with torch.manual_seed, so
        #       that named_parameters(), state_dict(), .to() and an optimizer all find them.
        ### BEGIN SOLUTION
        # nn.Parameter, assigned as an attribute: registered under the attribute's name.
        self.a = nn.Parameter(torch.rand(1))  # (1,)
        self.b = nn.Parameter(torch.rand(1))  # (1,)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """a * x + b elementwise, for x of any shape with at least one dim.

        Returns a tensor of x's shape (the (1,)-shaped parameters broadcast against it),
        differentiable with respect to x, a and b.
        """
        # TODO: return a * x + b, of x's shape, differentiable with respect to x, a and b.
        ### BEGIN SOLUTION
        return self.a * x + self.b
        ### END SOLUTION


class MLP(nn.Sequential):
    """A multilayer perceptron: an nn.Sequential of Linear layers with activations between them.

    sizes: the feature counts [in, hidden..., out], any sequence of ints; with fewer than two
    entries, a ValueError whose message contains the word "sizes". sizes=[4, 8, 8, 2] gives
    these children, in this order and under these names:

        linear0 = Linear(4, 8), act0, linear1 = Linear(8, 8), act1, linear2 = Linear(8, 2)

    so `state_dict()` keys are "linear0.weight", "linear0.bias", ..., "linear2.bias" (an
    activation with parameters, like nn.PReLU, adds "act0.weight" and so on). There is no
    activation after the last Linear: the output is unbounded (logits, regression values).
    activation: a class or any callable returning a module, called with no arguments once per
    hidden layer, so each activation is its own instance (with its own parameters, if any).
    Input (..., sizes[0]) -> output (..., sizes[-1]), the children applied in order.
    """

    def __init__(self, sizes: Sequence[int], activation: Callable[[], nn.Module] = nn.ReLU) -> None:
        # TODO: fewer than two sizes: ValueError, its message containing the word "sizes".
        #       Otherwise make this Sequential's children, in order and under exactly these
        #       names: linear0, act0, linear1, act1, ..., no activation after the last Linear,
        #       each activation the module returned by its own call of activation().
        ### BEGIN SOLUTION
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"MLP needs sizes with at least two entries (inputs and outputs), got sizes={sizes}")
        layers = OrderedDict()
        last = len(sizes) - 2  # index of the output layer
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers[f"linear{i}"] = nn.Linear(n_in, n_out)
            if i < last:
                # Called here, once per hidden layer: a shared instance would share parameters.
                layers[f"act{i}"] = activation()
        super().__init__(layers)  # Sequential registers each layer under its name
        ### END SOLUTION


class Ensemble(nn.Module):
    """Averages the outputs of several modules.

    members: any iterable of modules (a list, a tuple, a generator), at least one, else
    ValueError. They are kept, in order, in `self.members`, registered as submodules, so
    parameters(), `state_dict()`, `.to()`, `.train()`/`.eval()` and an optimizer over
    `parameters()` reach every member; the `state_dict()` keys are each member's own keys
    after "members.<its index>.": "members.0.weight", "members.0.bias", "members.1.weight", ...
    """

    def __init__(self, members: Iterable[nn.Module]) -> None:
        super().__init__()
        # TODO: keep the members, in order, in self.members, where parameters(), state_dict()
        #       (keys members.0.weight, ...), .to(), .eval() and an optimizer all reach them.
        #       Any iterable of modules, a generator too; no members at all: ValueError.
        ### BEGIN SOLUTION
        # ModuleList registers each member; it also reads a generator exactly once.
        self.members = nn.ModuleList(members)
        if len(self.members) == 0:
            raise ValueError("Ensemble needs at least one member module, got an empty iterable")
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The elementwise mean of the members' outputs on x (all of one shape and dtype).

        Each member runs once per call, its forward hooks and pre-hooks included. x is left
        unchanged. Returns a tensor of the members' output shape.
        """
        # TODO: return the elementwise mean of the members' outputs on x, each member run
        #       once, its hooks included; x comes back unchanged.
        ### BEGIN SOLUTION
        outputs = torch.stack([member(x) for member in self.members])  # (members, *out)
        return outputs.mean(dim=0)
        ### END SOLUTION


def fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float) -> float:
    """Train `model` in place by full-batch gradient descent on the mean squared error.

    Each of `steps` steps is one step of torch.optim.SGD over all of model.parameters() with
    learning rate `lr` (no momentum, no weight decay), along the gradient of that step's
    loss alone: the mean squared error of the module's output on x against y (the mean over
    all elements; the output has y's shape). steps < 1: a ValueError whose message contains
    the word "steps". SGD, because on one full batch it is plain gradient descent: with x in
    [0, 1) as in the tests' line, lr=0.5 converges quickly and the result does not depend on
    optimizer state. The module runs exactly once per step, its hooks included.

    Returns the last step's loss (computed before that step's update) as a Python float.
    Works on any device: the model, x and y just have to be on the same one.
    """
    # TODO: train the model in place: `steps` steps of plain gradient descent (torch.optim.SGD
    #       at `lr`) over all its parameters on the mean squared error of the module's output
    #       against y, each step along that step's gradient alone, the module run once per step
    #       with its hooks. Return the last step's loss, from before its update, as a Python
    #       float. steps < 1: ValueError, its message containing the word "steps".
    ### BEGIN SOLUTION
    if steps < 1:
        raise ValueError(f"fit needs steps >= 1 (there is no loss to return otherwise), got steps={steps}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()  # gradients accumulate across backward() calls otherwise
        loss = F.mse_loss(model(x), y)  # model(x), not model.forward(x): hooks run
        loss.backward()
        optimizer.step()
    return loss.item()  # a float: no tensor (or graph) kept alive by the caller
    ### END SOLUTION
