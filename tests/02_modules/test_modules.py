"""Lesson 02, modules: checks modules.py against torch's own modules and hand-written references.

The tests of `fit` train torch's built-in layers, so a slip in Linear1D, MLP or Ensemble does not
show up there as well; only the noisy line's example trains the learner's Linear1D. CONTRACT, at
the end, maps the lesson's promises and pitfalls to the tests.
"""

import copy
import functools
import re
from collections import OrderedDict

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given
from hypothesis import strategies as st
from torch import nn

from grader.testing import (apart, assert_close, attribute, counted, describe, dtype_name, expect_raises, fail, grad_of, numbers,
                            reported, tolerance)
from grader.testing.pitfalls import Pitfall, pitfall_of
from grader.testing.scenario import beside
from grader.testing.strategies import on_meta, shapes, tensors


class Drawn:
    """A drawn x, which hypothesis names by its repr: by its shape and dtype, as the call line
    does (its values are noise that the comparison's worst entry tells better)."""

    def __init__(self, x: torch.Tensor) -> None:
        self.x = x

    def __repr__(self) -> str:
        return f"x of {describe(self.x)}"


@st.composite
def drawn_x(draw) -> Drawn:
    """An x for Linear1D, any shape up to 3 dims, in a float dtype (a Drawn: named by shape and dtype)."""
    return Drawn(draw(tensors(shape=shapes(max_dims=3), dtypes=(torch.float32, torch.float64, torch.float16, torch.bfloat16),
                              extremes=False, scales=(1.0, 30.0))))


# --- Linear1D ------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_linear1d_registers_a_and_b(lesson):
    seen = linear1d_seen(lesson)
    names = [name for name, *_ in seen["named"]]
    if names != ["a", "b"]:
        fail(with_cause(f"Linear1D().named_parameters() gives the names {names}; expected ['a', 'b'].",
                        unregistered(seen["held"])))
    for name, kind, requires_grad, p in seen["named"]:
        what = f"Linear1D().{name}"
        if not is_a(kind, nn.Parameter):
            fail(f"{what} is a {type_name(kind)}; expected an nn.Parameter.")
        if p.shape != (1,):
            fail(f"{what} has shape {tuple(p.shape)}; expected (1,), like torch.rand(1).")
        if p.dtype != torch.float32:
            fail(f"{what} has dtype {dtype_name(p.dtype)}; expected float32 (the default).")
        if not requires_grad:
            fail(f"{what} does not require grad: the optimizer could not train it.")
    if seen["order"] != [0, 1]:
        fail("Linear1D().parameters() must yield the attributes a and b themselves, in that order.")


def test_linear1d_initialisation(lesson):
    draws = []
    for seed in (0, 1, 2, 3):
        what = f"Linear1D() after torch.manual_seed({seed})"
        (a, b), again = with_linear1d(f"{what}, then its .a and .b", linear1d_draws, lesson, seed)
        if not bool(((a >= 0) & (a < 1) & (b >= 0) & (b < 1)).all()):
            fail(f"{what} has a = {numbers(a)}, b = {numbers(b)}; expected both drawn uniformly in [0, 1) (torch.rand(1)).")
        same = torch.equal(a, again[0]) and torch.equal(b, again[1])
        if not same:
            fail(f"{what} twice gave different parameters: draw them from torch's global RNG (torch.rand), "
                 "so that torch.manual_seed makes them reproducible.")
        draws.append((a.item(), b.item()))
    if len({v for pair in draws for v in pair}) != 2 * len(draws):
        fail(f"Linear1D() after torch.manual_seed(0), (1), (2), (3) gives (a, b) = "
             f"{', '.join(numbers(pair) for pair in draws)}; expected fresh random "
             "draws: a and b differ from each other and from one torch.manual_seed to the next.")


def test_linear1d_state_dict(lesson):
    seen = with_linear1d("Linear1D(), then a.fill_(2.0) and b.fill_(-1.0)", linear1d_seen, lesson, params=(2.0, -1.0))
    state = seen["state"]
    if list(state) != ["a", "b"]:
        fail(with_cause(f"Linear1D().state_dict() has the keys {list(state)}; expected ['a', 'b'].", unregistered(seen["held"])))
    assert_close(state["a"], torch.tensor([2.0]), what="Linear1D().state_dict()['a'] after setting a = 2")
    assert_close(state["b"], torch.tensor([-1.0]), what="Linear1D().state_dict()['b'] after setting b = -1")
    checkpoint = {"a": torch.tensor([0.5]), "b": torch.tensor([4.0])}
    call = "Linear1D().load_state_dict({'a': tensor([0.5]), 'b': tensor([4.])}) (strict)"
    fresh = loaded(lesson, "Linear1D()", checkpoint, x=torch.tensor([1.0, -2.0]))
    if fresh["error"]:
        kind, message = fresh["error"]
        fail(with_cause(f"{call} raised {kind}: {message}.", unregistered(fresh["held"])))
    assert_close(fresh["out"], torch.tensor([4.5, 3.0]), what=f"the module after {call}, on x = [1., -2.]")


@given(drawn_x())
@example(Drawn(torch.arange(100, dtype=torch.float32)))
def test_linear1d_computes_a_x_plus_b(lesson, drawn):
    x = drawn.x
    what = f"Linear1D() with a = 1.5, b = -0.25, called on x of {describe(x)}"
    out, _ = with_linear1d(what, linear1d_run, lesson, x, params=(1.5, -0.25), to=x.dtype)
    if not (isinstance(out, torch.Tensor) and out.shape == x.shape):
        fail(f"{what} returned {type(out).__name__} of shape {tuple(getattr(out, 'shape', ()))}; expected x's "
             f"shape {tuple(x.shape)}.")
    assert_close(out, 1.5 * x - 0.25, what=what, **tolerance(x.dtype))


def test_linear1d_to_float64_converts_the_parameters(lesson):
    seen = with_linear1d("Linear1D().to(torch.float64)", linear1d_seen, lesson, to=torch.float64)
    for name, p in zip("ab", seen["ab"]):
        if p is None:
            fail(with_cause(f"Linear1D().{name} is not a tensor; expected an nn.Parameter named {name}.",
                            unregistered(seen["held"])))
        if p.dtype != torch.float64:
            fail(with_cause(f"Linear1D().to(torch.float64).{name} is still {dtype_name(p.dtype)}: .to() converts only what the "
                            "module registers.", unregistered(seen["held"])))
        if p.shape != (1,):  # a * x + b, the expected output, would take its shape: say which is off
            fail(f"Linear1D().{name} has shape {tuple(p.shape)}; expected (1,), one number (torch.rand(1)), so that "
                 "a * x + b has x's shape.")
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    out, (a, b) = with_linear1d("Linear1D().to(torch.float64)(x) for float64 x of shape (5,)", linear1d_run, lesson, x,
                                to=torch.float64)
    assert_close(out, a * x + b, what="Linear1D().to(torch.float64) on float64 x")


@pytest.mark.points(2)
def test_linear1d_gradients_reach_a_b_and_x(lesson):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, generator=g)
    upstream = torch.randn(3, 4, generator=g)
    what = "the gradient of Linear1D()(x) for x of shape (3, 4)"
    if with_linear1d("Linear1D() with a = 2, b = 0.5, called on x of shape (3, 4)", linear1d_tracks, lesson, x) is False:
        fail("Linear1D()(x) for a plain x of shape (3, 4) returned a tensor that does not require grad, though a "
             "and b do: the output is cut off from the parameters, so nothing can train. .data and .item() leave "
             "autograd: compute with the parameters themselves.")
    for wrt, expected, note in (("a", (x * upstream).sum().reshape(1), ""), ("b", upstream.sum().reshape(1), ""),
                                ("x", 2.0 * upstream, " (a = 2)")):
        grad = tracked(with_linear1d(f"{what} with respect to {wrt}", linear1d_gradient, lesson, x, upstream, wrt),
                       f"{what} with respect to {wrt}")
        assert_close(grad, expected, what=f"{what} with respect to {wrt}{note}")


def test_linear1d_gradcheck_float64(lesson):
    g = torch.Generator().manual_seed(2)
    args = tuple(torch.randn(n, generator=g, dtype=torch.float64) for n in (5, 1, 1))
    # torch.autograd.gradcheck's comparison, with its defaults (eps, rtol, atol), of what it
    # would have worked out beside the code: autograd's Jacobian and central differences.
    eps = 1e-6
    what = "torch.autograd.gradcheck of Linear1D().double() at x of shape (5,), with respect to x, a and b"
    analytic, moved = with_linear1d(what, linear1d_jacobians, lesson, args, eps)
    for name, jacobian, outputs in zip(("x", "a", "b"), analytic, moved):
        numerical = ((outputs[:, 0] - outputs[:, 1]) / (2 * eps)).T  # (outputs, elements), as the Jacobian
        jacobian = jacobian.reshape(numerical.shape)
        if not torch.allclose(jacobian, numerical, rtol=1e-3, atol=1e-5):
            blind = (" Autograd sees no dependence on it, though the output moves with it: it is used through "
                     "something autograd does not follow (.data, .detach(), .item()); compute with the parameter "
                     "itself." if name != "x" and not jacobian.any() and numerical.any() else "")
            fail(f"{what}: for {name}, the gradient of the 5 outputs is {numbers(jacobian)} by autograd, "
                 f"{numbers(numerical)} by finite differences.{blind}")


# --- MLP -----------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_mlp_layers_their_order_and_names(lesson):
    seen = mlp_seen(lesson, [4, 8, 8, 2])
    what = "MLP([4, 8, 8, 2])"
    if not is_a(seen["kinds"], nn.Sequential):
        fail(f"{what} is not an nn.Sequential: its class, {type_name(seen['kinds'])}, must subclass nn.Sequential.")
    names = names_of(seen)
    expected = ["linear0", "act0", "linear1", "act1", "linear2"]
    if names != expected:
        fail(with_cause(f"{what} has the layers {names}; expected {expected}.", naming_mistake(seen["held"], names)))
    layers = {layer["name"]: layer for layer in seen["layers"]}
    for i, (n_in, n_out) in enumerate([(4, 8), (8, 8), (8, 2)]):
        layer = layers[f"linear{i}"]
        if not (is_a(layer["kinds"], nn.Linear) and layer["features"] == (n_in, n_out)):
            fail(f"{what}.linear{i} is {layer['repr']}; expected Linear(in_features={n_in}, out_features={n_out}).")
    for i in range(2):
        act = layers[f"act{i}"]
        if not is_a(act["kinds"], nn.ReLU):
            fail(f"{what}.act{i} is {act['repr']}; expected ReLU().")


@pytest.mark.points(2)
def test_mlp_state_dict_keys(lesson):
    seen = mlp_seen(lesson, [4, 8, 8, 2])
    keys = seen["keys"]
    expected = [f"linear{i}.{kind}" for i in range(3) for kind in ("weight", "bias")]
    if keys != expected:
        fail(with_cause(f"MLP([4, 8, 8, 2]).state_dict() has the keys {keys}; expected {expected}.",
                        naming_mistake(seen["held"], names_of(seen))))


@pytest.mark.parametrize("sizes", [[3, 2], [4, 8, 8, 2], [2, 5, 5, 5, 1], [1] * 300], ids=["2", "4", "5", "300"])
def test_mlp_has_no_activation_after_the_last_linear(lesson, sizes):
    x = torch.randn(3, sizes[0])
    seen = mlp_seen(lesson, sizes)
    what = f"MLP({sizes})" if len(sizes) < 10 else f"MLP([1] * {len(sizes)})"
    layers = seen["layers"]
    if not layers:  # nothing to end with: the layers are not registered, no activation is at fault
        fail(with_cause(f"{what} has no registered layers at all; expected its Linear layers as children of "
                        "the module.", unregistered(seen["held"])))
    if not is_a(layers[-1]["kinds"], nn.Linear):
        fail(f"{what} ends with {layers[-1]['repr']}; expected a Linear: no activation after the output layer "
             "(it would clip logits or regression targets).")
    n_linear = sum(is_a(layer["kinds"], nn.Linear) for layer in layers)
    if (n_linear, len(layers)) != (len(sizes) - 1, 2 * len(sizes) - 3):
        fail(f"{what} has {n_linear} Linear layers among {len(layers)} layers; expected {len(sizes) - 1} Linear "
             f"layers and {len(sizes) - 2} activations between them.")
    out = mlp_with_its_output_at(lesson, sizes, -10.0, x)
    assert_close(out, torch.full((3, sizes[-1]), -10.0), what=f"{what} whose last Linear returns -10 (the output must not pass through ReLU)")


def test_mlp_activation_is_a_fresh_instance_per_hidden_layer(lesson):
    sizes = [3, 4, 4, 4, 2]
    seen = mlp_seen(lesson, sizes, "nn.PReLU")
    what = f"MLP({sizes}, activation=nn.PReLU)"
    acts = [layer for layer in seen["layers"] if not is_a(layer["kinds"], nn.Linear)]
    if not (len(acts) == 3 and all(is_a(a["kinds"], nn.PReLU) for a in acts)):
        fail(with_cause(f"{what} has the activations {listed(acts)}; expected 3 PReLU().",
                        "" if seen["layers"] else unregistered(seen["held"])))
    distinct = len({a["first"] for a in acts})
    if distinct != 3:
        fail(f"{what} uses {counted(distinct, 'PReLU instance')} for its 3 hidden layers, so they share a learnable slope. "
             "This is the shared-activation pitfall: call activation() once per hidden layer.")
    linear = sum(n_in * n_out + n_out for n_in, n_out in zip(sizes, sizes[1:]))
    count = seen["size"]
    if count != linear + 3:
        fail(f"{what} has {counted(count, 'parameter')}; expected {linear} in the Linear layers plus 1 per PReLU.")


def test_mlp_calls_activation_once_per_hidden_layer(lesson):
    for sizes in ([3, 2], [3, 4, 2], [3, 4, 4, 4, 2]):
        made, acts = mlp_made_by_a_factory(lesson, sizes)
        what = f"MLP({sizes}, activation=a factory function)"
        hidden = len(sizes) - 2
        if made != hidden:
            called = "never called activation()" if made == 0 else f"called activation() {times(made)}"
            fail(f"{what} {called}; expected " + (f"once per hidden layer: {times(hidden)}." if hidden else
                                                  "no call at all: it has no hidden layer."))
        if acts != list(range(made)):
            fail(with_cause(f"{what}: the activations in the model are not the {counted(made, 'module')} activation() "
                            "returned, in order.", "" if acts else unregistered(mlp_seen(lesson, sizes)["held"])))


def test_mlp_loads_a_checkpoint_of_the_same_layers(lesson):
    torch.manual_seed(10)
    sizes = (3, 5, 4, 2)  # a tuple: any sequence of sizes
    layers = OrderedDict()
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers[f"linear{i}"] = nn.Linear(n_in, n_out)
        if i < len(sizes) - 2:
            layers[f"act{i}"] = nn.PReLU()
    expected_model = nn.Sequential(layers)
    with torch.no_grad():
        expected_model.act0.weight.fill_(0.1)
        expected_model.act1.weight.fill_(-0.3)
    x = torch.randn(6, 3)
    model = f"MLP({sizes}, activation=nn.PReLU)"
    what = f"{model}.load_state_dict(checkpoint of nn.Sequential(OrderedDict(linear0=..., act0=..., ...)))"
    seen = loaded(lesson, model, expected_model.state_dict(), x)  # strict: the same keys, the same shapes
    if seen["error"]:
        kind, error = seen["error"]
        theirs = {key: tuple(value.shape) for key, value in expected_model.state_dict().items()}
        fail(with_cause(f"{what} raised {kind}: {checkpoint_differences(seen['shapes'], theirs) or error}",
                        naming_mistake(seen["held"], seen["names"])))
    held, saved = len(seen["parameters"]), len(list(expected_model.parameters()))
    shared = ("" if held == saved else
              f"The model holds {held} parameter tensors for the checkpoint's {saved}: some of its keys name one "
              "tensor, so act1's slope (-0.3) overwrote act0's (0.1) as it loaded. This is the shared-activation "
              "pitfall: call activation() once per hidden layer.")
    assert_close(seen["out"], expected_model(x), what=f"the model after {what}, on x of shape (6, 3)",
                 explain=lambda: shared)


@given(
    st.lists(st.integers(1, 6), min_size=2, max_size=5),
    shapes(min_dims=0, max_dims=2, max_side=3),
    st.sampled_from(["nn.Tanh", "nn.ReLU", "nn.LeakyReLU(0.2)"]),
)
@example([4, 8, 8, 2], (5,), "nn.ReLU")
@pytest.mark.points(2)
def test_mlp_equals_its_layers_applied_by_hand(lesson, sizes, batch, activation):
    x = torch.randn(*batch, sizes[0], generator=torch.Generator().manual_seed(len(sizes)))
    act = ACTIVATIONS[activation]()
    what = f"MLP({sizes}, activation={FACTORIES[activation]})(x) for x of {describe(x)}"
    linears, _ = mlp_run(lesson, sizes, activation)
    expected = x
    for i, layer in enumerate(linears):
        if layer is None:
            seen = mlp_seen(lesson, sizes, activation)
            fail(with_cause(f"{what}: the model has no Linear layer named linear{i} (model.linear{i}), whose weights "
                            "the tests apply by hand.", naming_mistake(seen["held"], names_of(seen))))
        expected = F.linear(expected, *layer)
        if i < len(sizes) - 2:
            expected = act(expected)
    _, out = mlp_run(lesson, sizes, activation, x)
    assert_close(out, expected, what=what)


@pytest.mark.parametrize("sizes", [[], [4], ()])
def test_mlp_needs_two_sizes(lesson, sizes):
    expect_raises(lambda: Shown(mlp_made(lesson, sizes)), ValueError, what=f"MLP({sizes!r})",
                  why="an MLP needs at least an input and an output size.", mention=("sizes",))


def test_mlp_trains_every_layer(lesson):
    for name, grad in mlp_gradients(lesson, torch.randn(8, 3, generator=torch.Generator().manual_seed(3))):
        if grad is None or not bool(grad.abs().sum() > 0):
            fail(f"MLP([3, 6, 2]): no gradient reached {name}.")


# --- Ensemble ------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_ensemble_returns_the_mean_of_its_members(lesson):
    names = ["Linear(3, 2)"] * 3
    members = here(*names, seed=4)
    x = torch.randn(5, 3)
    outputs = [m(x).detach() for m in members]
    expected = (outputs[0] + outputs[1] + outputs[2]) / 3
    out, _ = ensemble_out(lesson, handed(names, members), x)
    what = "Ensemble([Linear(3, 2), Linear(3, 2), Linear(3, 2)])(x) for x of shape (5, 3), three different Linear(3, 2)"
    assert_close(out, expected, what=what, explain=lambda: mean_mistake(out, outputs))


@given(st.integers(1, 4), shapes(min_dims=0, max_dims=2, max_side=3))
def test_ensemble_of_linear1d_members(lesson, n, batch):
    # member i has a = i + 1, b = -i (0-d weights fill, as with_params does)
    members = [("Linear1D()", {"a": torch.tensor(float(i + 1)), "b": torch.tensor(float(-i))}) for i in range(n)]
    x = torch.randn(*batch, 2, generator=torch.Generator().manual_seed(n))
    # mean over i of (i + 1) * x - i
    expected = (n + 1) / 2 * x - (n - 1) / 2
    what = (f"Ensemble([{', '.join(f'm{i}' for i in range(n))}])(x) for x of {describe(x)}, "
            f"m{'_i' if n > 1 else '0'} = Linear1D() with a = {'i + 1' if n > 1 else '1'}, b = {'-i' if n > 1 else '0'}")
    out, _ = with_linear1d(what, ensemble_out, lesson, members, x)
    assert_close(out, expected, what=what, explain=lambda: mean_mistake(out, [(i + 1) * x - i for i in range(n)]))


@pytest.mark.points(2)
def test_ensemble_registers_its_members(lesson):
    names = ["Linear(3, 2)", "Sequential(Linear(3, 4), ReLU(), Linear(4, 2))"]
    members = here(*names)
    seen = ensemble_registered(lesson, handed(names, members))
    what = "Ensemble([Linear(3, 2), Sequential(Linear(3, 4), ReLU(), Linear(4, 2))])"
    expected = [p for m in members for p in m.parameters()]
    if seen["parameters"] != list(range(len(expected))):  # the members' own parameters, in order
        fail(with_cause(f"{what}.parameters() yields {len(seen['parameters'])} tensors; expected the members' "
                        f"{len(expected)}.", unregistered(seen["held"])))
    keys = seen["keys"]
    want = ["members.0.weight", "members.0.bias", "members.1.0.weight", "members.1.0.bias", "members.1.2.weight", "members.1.2.bias"]
    if keys != want:
        fail(with_cause(f"{what}.state_dict() has the keys {keys}; expected {want} (the members registered in "
                        "self.members, each under its index).", unregistered(seen["held"])))
    checkpoint = {f"members.{i}.{key}": torch.full_like(value, 0.25)
                  for i, m in enumerate(members) for key, value in m.state_dict().items()}
    other = loaded(lesson, what, checkpoint)  # strict: exactly these keys
    if other["error"]:
        fail(f"{what}.load_state_dict(a checkpoint with the keys {want}) raised: {other['error'][1]}")
    if not all(bool((p == 0.25).all()) for p in other["parameters"]):
        fail(f"{what}.load_state_dict(...) did not reach every member.")


def test_ensemble_to_float64_converts_every_member(lesson):
    members = [("Linear(3, 2)", None)] * 3
    x = torch.randn(4, 3, dtype=torch.float64)
    seen = ensemble_converted(lesson, members)
    for i, dtype in enumerate(seen["dtypes"]):
        if dtype != torch.float64:
            fail(with_cause(f"after Ensemble(members).to(torch.float64), member {i}'s weight is {dtype_name(dtype)}: "
                            ".to() reaches only registered submodules.", unregistered(seen["held"])))
    out = ensemble_converted(lesson, members, x)["out"]
    if out.dtype != torch.float64:
        fail(f"Ensemble(members).to(torch.float64)(x) for float64 x of shape (4, 3) returned {dtype_name(out.dtype)}; "
             "expected float64.")


def test_ensemble_eval_reaches_every_member(lesson):
    names = ["Sequential(Linear(4, 3), Dropout(0.5))"] * 2
    members = here(*names, seed=5)
    x = torch.randn(6, 4)
    seen = ensemble_modes(lesson, handed(names, members))
    for i, (member, dropout) in enumerate(seen["eval"]):
        if member or dropout:
            fail(with_cause(f"after ensemble.eval(), member {i} is still in training mode, so its Dropout keeps "
                            "dropping: .eval() reaches only registered submodules.", unregistered(seen["held"])))
    outputs = [member[0](x).detach() for member in members]  # its Linear alone: no dropout in eval mode
    expected = (outputs[0] + outputs[1]) / 2
    seen = ensemble_modes(lesson, handed(names, members), x)
    assert_close(seen["out"], expected, what="Ensemble([Sequential(Linear(4, 3), Dropout(0.5)), Sequential(Linear(4, 3), "
                 "Dropout(0.5))]).eval()(x) for x of shape (6, 4)", explain=lambda: mean_mistake(seen["out"], outputs))
    if not all(seen["train"]):
        fail("after ensemble.train(), a member's Dropout is still in eval mode.")


@pytest.mark.points(2)
def test_an_optimizer_over_the_ensemble_trains_every_member(lesson):
    names = ["Linear(3, 1)"] * 3
    members = handed(names, here(*names, seed=6))
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    seen = ensemble_stepped(lesson, members, x, y)
    if not seen["parameters"]:
        fail(with_cause("Ensemble(members).parameters() is empty: an optimizer could not train any member.",
                        unregistered(seen["held"])))
    for i, ((_, before), after) in enumerate(zip(members, seen["after"])):
        for name, value in after.items():
            if torch.equal(value, before[name]):
                fail(f"one step of torch.optim.SGD(Ensemble(members).parameters(), lr=0.1) on F.mse_loss(ensemble(x), y), "
                     f"for members = three different Linear(3, 1), x of shape (16, 3), y of shape (16, 1), left member "
                     f"{i}'s {name} unchanged: it got no gradient, so member {i}'s output never reached the loss. Call "
                     "every member and average all their outputs.")


def test_ensemble_accepts_a_tuple(lesson):
    names = ["Linear(2, 3)"] * 2
    members = here(*names, seed=11)
    x = torch.randn(4, 2)
    out, _ = ensemble_out(lesson, handed(names, members), x, "tuple")
    outputs = [m(x).detach() for m in members]
    assert_close(out, (outputs[0] + outputs[1]) / 2, what="Ensemble((Linear(2, 3), Linear(2, 3)))(x) for x of shape (4, 2)",
                 explain=lambda: mean_mistake(out, outputs))
    seen = ensemble_registered(lesson, handed(names, members), "tuple")
    count = len(seen["parameters"])
    if count != 4:
        fail(with_cause(f"Ensemble(a tuple of 2 Linear) has {count} parameter tensors; expected both members' 4.",
                        unregistered(seen["held"])))


def test_ensemble_calls_its_members_so_their_hooks_run(lesson):
    names = ["Linear(3, 2)"] * 3
    members = here(*names, seed=12)
    x = torch.randn(5, 3)
    plain = [m(x).detach() for m in members]
    calls, out = ensemble_hooked(lesson, handed(names, members), x)
    what = "Ensemble([Linear(3, 2), Linear(3, 2), Linear(3, 2)])(x) for x of shape (5, 3), member i with a forward hook adding 10 * (i + 1)"
    hooked = [p + 10.0 * (i + 1) for i, p in enumerate(plain)]  # each member(x), its hook included
    if calls != [1, 1, 1]:
        first_alone = calls == [1, 0, 0] and isinstance(out, torch.Tensor) and out.shape == hooked[0].shape \
            and torch.allclose(out, hooked[0])
        fail(with_cause(f"{what}: one call ran the members' forward pre-hooks {calls} times; expected once each.",
                        FORWARD_SKIPS_HOOKS if calls == [0, 0, 0] else FIRST_ALONE if first_alone else ""))
    expected = (plain[0] + plain[1] + plain[2]) / 3 + 20.0
    assert_close(out, expected, what=f"{what} (the mean of member(x), hooks included)",
                 explain=lambda: mean_mistake(out, hooked))


@pytest.mark.parametrize("order", ["identity first", "identity last"])
def test_ensemble_leaves_x_alone(lesson, order):
    names = ["Identity()", "Linear(3, 3)", "Identity()"] if order == "identity first" else ["Linear(3, 3)", "Identity()"]
    members = here(*names, seed=13)
    linear = members[names.index("Linear(3, 3)")]
    x = torch.randn(4, 3)
    before = x.clone()
    expected = (2 * x + linear(x)) / 3 if order == "identity first" else (linear(x) + x) / 2
    what = f"Ensemble([{', '.join(names)}])(x) for x of shape (4, 3)"
    out, x_after = ensemble_out(lesson, handed(names, members), x)
    assert_close(x_after, before, what=(
        f"x after {what}: nn.Identity returns x itself, so adding into a member's output in place (+=, add_, "
        "div_) writes into the caller's x; stack the outputs, or add out of place"
    ))
    assert_close(out, expected.detach(), what=what,
                 explain=lambda: mean_mistake(out, [m(x).detach() for m in members]))


def test_ensemble_accepts_a_generator(lesson):
    members = [("Linear(2, 2)", None)] * 3
    x = torch.randn(4, 2)
    seen = ensemble_registered(lesson, members, "generator")
    count = len(seen["parameters"])
    if count != 6:
        kept, n_children = seen["members"]
        read_twice = is_a(kept, nn.Module) and not n_children
        fail(with_cause(f"Ensemble(nn.Linear(2, 2) for _ in range(3)) has {count} parameter tensors; expected 6.",
                        "self.members is empty: the generator was read twice, and a generator can be read only "
                        "once. Build the container of members from it first, then check that container." if read_twice
                        else unregistered(seen["held"])))
    out, _ = ensemble_out(lesson, members, x, "generator")
    if out.shape != (4, 2):
        fail(with_cause(f"Ensemble(nn.Linear(2, 2) for _ in range(3))(x) for x of shape (4, 2) returned shape "
                        f"{tuple(out.shape)}; expected (4, 2).", ONE_NUMBER if out.dim() == 0 else ""))


@pytest.mark.parametrize("empty", ["list", "generator"])
def test_ensemble_needs_a_member(lesson, empty):
    expect_raises(lambda: Shown(ensemble_made(lesson, empty)), ValueError, what=f"Ensemble(an empty {empty})",
                  why="an ensemble of no models has no output.")


# --- fit -----------------------------------------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("dtype", "steps"), [(torch.float32, 7), (torch.float64, 7), (torch.float32, 1)],
                         ids=["float32, 7 steps", "float64, 7 steps", "float32, 1 step"])
def test_fit_is_plain_gradient_descent_on_the_mse(lesson, dtype, steps):
    name = "Sequential(Linear(3, 5), Tanh(), Linear(5, 2))"
    (start,) = here(name, seed=7)
    start = start.to(dtype)
    reference = copy.deepcopy(start)
    x, y = torch.randn(20, 3, dtype=dtype), torch.randn(20, 2, dtype=dtype)
    seen = fitted(lesson, handed([name], [start])[0], x, y, steps=steps, lr=0.3, dtype=dtype)
    losses = gradient_descent(reference, x, y, steps=steps, lr=0.3)
    call = (f"fit(model, x, y, steps={steps}, lr=0.3) for model = {name} in {dtype_name(dtype)}, x of shape (20, 3) "
            "and y of shape (20, 2)")
    against = f"against {counted(steps, 'step')} of torch.optim.SGD(model.parameters(), lr=0.3) on the mean squared error"
    for (key, got), want in zip(seen["parameters"].items(), reference.state_dict().values()):
        assert_close(got, want, what=f"{attribute(key)} after {call}, {against}", **tolerance(dtype),
                     explain=lambda: fit_mistake(seen, start, reference, x, y, steps, 0.3, dtype))
    loss = seen["loss"]
    if not is_a(loss["kinds"], float):
        fail(f"{call} returned a {type_name(loss['kinds'])}; expected a Python float (loss.item()).")
    if loss["value"] != pytest.approx(losses[-1], rel=1e-5):
        got, want = loss_pair(loss, losses[-1])
        fail(with_cause(f"{call} returned {got}; expected the last step's loss {want} (computed before its update), "
                        f"{against}.", loss_after_update(loss, reference, x, y)))


def test_fit_with_unused_and_frozen_parameters(lesson):
    (model,) = here("PartlyTrainable()", seed=14)
    reference = copy.deepcopy(model)
    frozen = model.first.weight.detach().clone()
    x, y = torch.randn(12, 2), torch.randn(12, 1)
    what = ("fit(model, x, y, steps=4, lr=0.2) for a model with a frozen weight and an unused parameter, x of shape "
            "(12, 2) and y of shape (12, 1)")
    seen = fitted(lesson, handed(["PartlyTrainable()"], [model])[0], x, y, steps=4, lr=0.2, caught=True)
    if seen["error"]:
        kind, message = seen["error"]
        fail(f"{what} raised {kind}: {message}. torch.optim.SGD over model.parameters() skips "
             "parameters whose .grad is None.")
    params = [p for p in reference.parameters() if p.requires_grad]
    losses = []
    for _ in range(4):  # gradient descent by hand on what can learn
        step_loss = ((reference(x) - y) ** 2).mean()
        grads = torch.autograd.grad(step_loss, params, allow_unused=True)
        with torch.no_grad():
            for p, g in zip(params, grads):
                if g is not None:
                    p -= 0.2 * g
        losses.append(step_loss.item())
    trained = seen["parameters"]
    if not torch.equal(trained["first.weight"], frozen):
        fail(f"{what} changed the frozen weight (requires_grad=False).")
    if not torch.equal(trained["unused"], torch.ones(2)):
        fail(f"{what} changed the unused parameter, which gets no gradient.")
    for (name, got), want in zip(trained.items(), reference.parameters()):
        assert_close(got, want.detach(), what=f"{attribute(name)} after {what}")
    loss = seen["loss"]["value"]
    if is_a(seen["loss"]["kinds"], torch.Tensor):
        fail(f"{what} returned a tensor, {seen['loss']['repr']}; expected a Python float, {losses[-1]:.5g}: "
             "return loss.item().")
    if loss != pytest.approx(losses[-1], rel=1e-5):
        got, want = loss_pair(seen["loss"], losses[-1])
        fail(with_cause(f"{what} returned {got}; expected the last step's loss {want} (computed before its update).",
                        loss_after_update(seen["loss"], reference, x, y)))


def test_fit_calls_the_module_so_its_hooks_run(lesson):
    calls = fit_hooked(lesson, torch.randn(10, 2), torch.randn(10, 1), steps=5, lr=0.1)
    if calls != {"pre": 5, "post": 5}:
        once_more = ("That is one forward more than steps: call the module once per step, and return the loss of "
                     "the last step's own forward." if calls == {"pre": 6, "post": 6} else "")
        fail(with_cause(f"fit(model, x, y, steps=5, lr=0.1) for model = nn.Linear(2, 1) with a forward pre-hook and a "
                        f"forward hook, x of shape (10, 2), ran the pre-hook {calls['pre']} and the hook "
                        f"{calls['post']} times; expected 5 each (the module called once per step).",
                        FORWARD_SKIPS_HOOKS if calls == {"pre": 0, "post": 0} else once_more))


@pytest.mark.public
def test_fit_returns_a_python_float(lesson):
    model = handed(["Linear(1, 1)"], here("Linear(1, 1)", seed=9))[0]
    x = torch.linspace(0, 1, 8).unsqueeze(1)
    loss = fitted(lesson, model, x, 2 * x, steps=3, lr=0.1)["loss"]
    if loss["kinds"][0] != "builtins.float":  # type(loss) is float
        fail(f"fit(model, x, 2 * x, steps=3, lr=0.1) for model = Linear(1, 1), x of shape (8, 1) returned a "
             f"{type_name(loss['kinds'])}; expected a Python float: return loss.item(), not the loss tensor (which "
             "keeps the graph alive and, on a GPU, the device memory).")


@pytest.mark.parametrize("steps", [0, -1])
def test_fit_needs_a_step(lesson, steps):
    x = torch.zeros(4, 1)
    expect_raises(lambda: Shown(fitted(lesson, ("Linear(1, 1)", None), x, x, steps=steps, lr=0.1)["loss"]["repr"]),
                  ValueError, what=f"fit(model, x, y, steps={steps}, lr=0.1)",
                  why="with no step there is no loss to return.", mention=("steps",))


# --- Linear1D fitted to noisy samples of y = 5x + 3 --------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_fit_recovers_a_noisy_line(lesson):
    x, y = line_data()
    cause = untrainable(lesson, x, "fit(Linear1D(), x, y, steps=500, lr=0.5) cannot train")
    if cause:
        fail(cause)
    loss, (a, b) = line_fitted(lesson, x, y)
    # The best line through these samples, by least squares in float64: a ~= 5.02, b ~= 3.14
    # (3 plus the noise's mean, 0.15).
    design = torch.stack([x, torch.ones_like(x)], dim=1).double()  # (100, 2)
    best = torch.linalg.lstsq(design, y.double().unsqueeze(1)).solution.squeeze(1).float()
    call = "fit(Linear1D(), x, y, steps=500, lr=0.5) on noisy samples of y = 5x + 3, x of shape (100,)"
    fix = f"expected the least-squares line a = {best[0]:.4f}, b = {best[1]:.4f}"
    assert_close(a, best[:1], what=f"a after {call} ({fix})", atol=1e-3, rtol=0)
    assert_close(b, best[1:], what=f"b after {call} ({fix})", atol=1e-3, rtol=0)
    best_loss = F.mse_loss(design.float() @ best, y).item()
    if not isinstance(loss["value"], float):
        fail(f"{call} returned {loss['repr']}; expected a Python float, the best line's loss {best_loss:.6f} "
             "(loss.item()).")
    if loss["value"] != pytest.approx(best_loss, abs=1e-5):
        fail(f"{call} returned {loss['value']:.6f}; expected the best line's loss, {best_loss:.6f}.")


# --- devices -------------------------------------------------------------------------------


def test_modules_on_the_meta_device(lesson):
    x = on_meta(torch.empty(4, 3))
    seen = with_linear1d("Linear1D().to('meta')", linear1d_on_meta, lesson, x)
    if seen["error"]:
        kind, error = seen["error"]  # a RuntimeError (linear1d_on_meta)
        message = with_cause(f"Linear1D().to('meta')(x) for x of shape (4, 3) on the meta device raised {kind}({error!r}).",
                             unregistered(seen["held"]) or linear1d_mistake(lesson, RuntimeError(error)))
    else:
        message = ""
        out = seen["out"]
        if (out.device.type, out.shape) != ("meta", (4, 3)):
            message = with_cause(f"Linear1D().to('meta')(x) for x of shape (4, 3) on the meta device returned shape "
                                 f"{tuple(out.shape)} on {out.device}; expected (4, 3) on meta: .to() moves only "
                                 "what the module registers.", unregistered(seen["held"]))
    if message:
        fail(message)
    call = "Ensemble([nn.Linear(3, 2, device='meta'), MLP([3, 4, 2]).to('meta')])(x) for x of shape (4, 3) on the meta device"
    with reported(call, advice=lambda exc: unregistered(mlp_seen(lesson, [3, 4, 2])["held"])):
        out = ensemble_on_meta(lesson, x)
    if (out.device.type, out.shape, out.dtype) != ("meta", (4, 2), torch.float32):
        fail(with_cause(f"{call} returned shape {tuple(out.shape)}, {dtype_name(out.dtype)} on {out.device}; expected "
                        "(4, 2), float32, on meta (x's device): make nothing on the default device and read no values "
                        "into Python.", ONE_NUMBER if out.dim() == 0 else ""))


@pytest.mark.cuda
def test_everything_runs_on_the_inputs_device(lesson):
    x, y = line_data()
    loss, (a, b) = line_fitted(lesson, x, y, "cuda")
    if not (is_a(loss["kinds"], float) and loss["value"] < 0.01):
        fail(f"fit(Linear1D on CUDA, ...) returned {loss['repr']}; expected a float below 0.01.")
    # The ensemble of that trained Linear1D (made again with its a and b) and a fresh MLP.
    seen = linear1d_and_mlp_on(lesson, "cuda", (a.item(), b.item()), x.unsqueeze(1))
    if seen["device"] != seen["x"]:
        fail(f"Ensemble on CUDA returned a tensor on {seen['device']}.")
    member, mlp = seen["members"]
    assert_close(seen["out"], (member + mlp) / 2, what="Ensemble([Linear1D, MLP]) on CUDA")


# === what the tests use ===========================================================================
#
# `lesson` is the module under test (the learner's, the reference, or a mutant).


# The learner's modules live beside their code, which under `kata grade` is another process
# than these checks (grader.remote). So each test splits in two: scenarios (@beside,
# grader.testing.scenario) make and drive the learner's objects there and return what they
# saw as plain data, and the test checks that here against what it works out with its own
# torch. The helpers just below are the observing half, run beside the code; each has a
# reading half here (`held` -> `unregistered`, `kinds` -> `is_a`).


# --- what a scenario observes ---------------------------------------------------------------


def kinds(value) -> list[str]:
    """The qualified names of `value`'s type and of its bases, its own first: what isinstance
    tests, as data (read with `is_a`)."""
    return [f"{t.__module__}.{t.__qualname__}" for t in type(value).__mro__]


def is_a(kind: list[str], cls: type) -> bool:
    """isinstance(value, cls), for the value `kind` (`kinds`) reports."""
    return f"{cls.__module__}.{cls.__qualname__}" in kind


def type_name(kind: list[str]) -> str:
    """type(value).__name__, for the value `kind` (`kinds`) reports."""
    return kind[0].rsplit(".", 1)[-1]


def which(items, pool) -> list[int | None]:
    """For each of `items`, the index in `pool` of the very object it is, or None: what `is`
    tells, as data."""
    return [next((i for i, candidate in enumerate(pool) if candidate is item), None) for item in items]


def held(model: nn.Module) -> dict:
    """What `model` holds where the registration pitfalls show, as data (named by
    `unregistered`): each public attribute that is a plain tensor, (name, "tensor", its
    requires_grad), or a Python list, tuple or dict of modules or tensors, (name, its type's
    name, whether modules are in it); and the names of its buffers."""
    attributes = []
    for name, value in vars(model).items():
        if name.startswith("_") or name == "training":
            continue
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter):
            attributes.append((name, "tensor", value.requires_grad))
            continue
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
        if any(isinstance(item, (nn.Module, torch.Tensor)) for item in items):
            attributes.append((name, type(value).__name__, any(isinstance(item, nn.Module) for item in items)))
    return {"attributes": attributes, "buffers": [name for name, _ in model.named_buffers()]}


def children(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(name, module) of each direct child, a module registered twice included each time."""
    return [(name, m) for name, m in model.named_modules(remove_duplicate=False) if name and "." not in name]


def layers_of(model: nn.Module) -> list[dict]:
    """Each direct child of `model` (`children`) as data: its name, its type (`kinds`), its
    repr, its (in_features, out_features) where it is an nn.Linear, and the index of the first
    child that is the very same module ("first")."""
    found = children(model)
    modules = [m for _, m in found]
    return [{"name": name, "kinds": kinds(m), "repr": repr(m), "first": first,
             "features": (m.in_features, m.out_features) if isinstance(m, nn.Linear) else None}
            for (name, m), first in zip(found, which(modules, modules))]


def ab(model: nn.Module) -> list[torch.Tensor | None]:
    """Linear1D's attributes a and b, detached; None for one that is not a tensor."""
    return [t.detach() if isinstance(t := getattr(model, name, None), torch.Tensor) else None for name in ("a", "b")]


def returned(value) -> dict:
    """What a call returned, as data: its type (`kinds`), its repr, and the value itself where it
    is a Python number (what the tests compare as one; a tensor would lose its grad_fn on the way)."""
    return {"kinds": kinds(value), "repr": repr(value), "value": value if isinstance(value, (int, float)) else None}


def attempt(call, errors: tuple[type[BaseException], ...], but: tuple[type[BaseException], ...] = ()):
    """(call(), None), or (None, (type name, message)) where it raised one of `errors` (other
    than one of `but`): a learner's error that the test turns into a failure of its own."""
    try:
        return call(), None
    except but:
        raise
    except errors as exc:
        return None, (type(exc).__name__, str(exc))


# --- the modules a scenario makes -----------------------------------------------------------


# torch's modules that tests hand the learner's code, by how the failure messages write them;
# the tests make their own copies from the same table, to work out what to expect.
MODULES = {
    **{f"Linear({n_in}, {n_out})": functools.partial(nn.Linear, n_in, n_out)
       for n_in, n_out in ((1, 1), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (3, 3))},
    "Identity()": nn.Identity,
    "Sequential(Linear(3, 4), ReLU(), Linear(4, 2))": lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)),
    "Sequential(Linear(4, 3), Dropout(0.5))": lambda: nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5)),
    "Sequential(Linear(3, 5), Tanh(), Linear(5, 2))": lambda: nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)),
    "PartlyTrainable()": lambda: PartlyTrainable(),  # (defined with the tests of fit)
}


# The learner's modules that tests make by name.
LEARNERS = {
    "Linear1D()": lambda lesson: lesson.Linear1D(),
    "MLP((3, 5, 4, 2), activation=nn.PReLU)": lambda lesson: lesson.MLP((3, 5, 4, 2), activation=nn.PReLU),
    "Ensemble([Linear(3, 2), Sequential(Linear(3, 4), ReLU(), Linear(4, 2))])": lambda lesson: lesson.Ensemble(
        [MODULES["Linear(3, 2)"](), MODULES["Sequential(Linear(3, 4), ReLU(), Linear(4, 2))"]()]),
}


ACTIVATIONS = {"nn.ReLU": nn.ReLU, "nn.Tanh": nn.Tanh, "nn.PReLU": nn.PReLU, "nn.LeakyReLU(0.2)": lambda: nn.LeakyReLU(0.2)}
# each as the activation= argument a learner would write: a class, or a function that makes the module
FACTORIES = {name: f"lambda: {name}" if name.endswith(")") else name for name in ACTIVATIONS}


def made(lesson, name: str, weights: dict | None = None, dtype: torch.dtype | None = None) -> nn.Module:
    """The module `name` stands for (LEARNERS, MODULES), converted to `dtype`, then its tensors
    set to `weights` (a path such as "0.weight" -> its values; a 0-d tensor fills, as
    with_params does)."""
    module = LEARNERS[name](lesson) if name in LEARNERS else MODULES[name]()
    if dtype is not None:
        module = module.to(dtype)
    with torch.no_grad():
        for path, value in (weights or {}).items():
            functools.reduce(getattr, path.split("."), module).copy_(value)
    return module


def here(*names: str, seed: int | None = None) -> list[nn.Module]:
    """torch's modules `names` (MODULES), made in the tests' process after torch.manual_seed(seed)."""
    if seed is not None:
        torch.manual_seed(seed)
    return [MODULES[name]() for name in names]


def handed(names, modules) -> list[tuple[str, dict]]:
    """Modules as a scenario takes them: (name, weights) each, made again beside the code with these weights."""
    return [(name, dict(module.state_dict())) for name, module in zip(names, modules)]


def with_params(model: nn.Module, a: float, b: float) -> nn.Module:
    with torch.no_grad():
        model.a.fill_(a)
        model.b.fill_(b)
    return model


def line_data() -> tuple[torch.Tensor, torch.Tensor]:
    """Noisy samples of y = 5x + 3, with x = 0, 0.01, ..., 0.99."""
    x = torch.arange(100, dtype=torch.float32) / 100
    noise = torch.rand(100, generator=torch.Generator().manual_seed(0)) * 0.3
    return x, 5 * x + 3 + noise


# --- reading what a scenario observed -------------------------------------------------------


def unregistered(seen: dict) -> str:
    """The lesson's registration pitfall that a module shows (`held`'s report of it), named,
    with its fix; "" if none shows."""
    if seen["attributes"]:
        name, kind, flag = seen["attributes"][0]  # the first attribute that shows one
        if kind == "tensor":
            return (f"This is the plain-tensor pitfall: self.{name} is a tensor (requires_grad={flag}), "
                    "not an nn.Parameter, so the module does not register it: parameters(), state_dict(), .to() "
                    "and an optimizer never see it. Wrap it in nn.Parameter.")
        fix = "nn.ModuleList (nn.ModuleDict for a dict)" if flag else "one nn.Parameter attribute each (or nn.ParameterList)"
        return (f"This is the plain-{kind} pitfall: self.{name} is a Python {kind} of "
                f"{'modules' if flag else 'tensors'}, which the module cannot see into: parameters(), "
                f"state_dict(), .to(), .eval() and an optimizer all miss what is in it. Use {fix}.")
    if seen["buffers"]:
        return (f"{', '.join(seen['buffers'])} are registered as buffers (register_buffer): saved and moved by .to(), but "
                "not parameters, so no optimizer over parameters() trains them. Make them nn.Parameter.")
    return ""


def with_cause(message: str, cause: str) -> str:
    return f"{message}\n{cause}" if cause else message


class Shown(str):
    """A value of the code's as a scenario reported it, its repr, shown as the value itself would be."""

    def __repr__(self) -> str:
        return str(self)


def listed(layers: list[dict]) -> str:
    """Layers (`layers_of`) written as a list of the modules would be."""
    return f"[{', '.join(layer['repr'] for layer in layers)}]"


def tracked(grad: torch.Tensor | None, what: str) -> torch.Tensor:
    """A gradient a scenario reported; None, where the output tracked no gradient, fails the
    test as grad_of does."""
    __tracebackhide__ = True
    if grad is None:
        grad_of(torch.zeros(()), torch.zeros(()), what)  # an output that tracks nothing: grad_of's own failure
    return grad


# --- Linear1D ------------------------------------------------------------------------------


def linear1d(lesson, params=None, to=None) -> nn.Module:
    """Linear1D(), its a and b set to `params` (with_params), then .to(to)."""
    model = lesson.Linear1D()
    if params is not None:
        model = with_params(model, *params)
    return model if to is None else model.to(to)


@beside
def linear1d_seen(lesson, params=None, to=None):
    """linear1d(params, to) as data: its named parameters (name, kinds, requires_grad, value),
    which of its attributes a and b parameters() yields (`which`), those attributes (`ab`), its
    state_dict, what it holds (`held`)."""
    model = linear1d(lesson, params, to)
    attributes = [getattr(model, name, None) for name in ("a", "b")]
    return {"named": [(name, kinds(p), p.requires_grad, p.detach()) for name, p in model.named_parameters()],
            "order": which(list(model.parameters()), attributes), "ab": ab(model),
            "state": dict(model.state_dict()), "held": held(model)}


@beside
def linear1d_run(lesson, x, params=None, to=None):
    """linear1d(params, to) called on x: its output, and its a and b (`ab`)."""
    model = linear1d(lesson, params, to)
    return model(x), ab(model)


@beside
def linear1d_layers(lesson):
    """The children of Linear1D() (`layers_of`)."""
    return layers_of(lesson.Linear1D())


def linear1d_mistake(lesson, exc: BaseException) -> str:
    """What Linear1D's mistake behind `exc` is, when the error and the module show it, else ""."""
    if isinstance(exc, AttributeError) and "'Linear1D' object has no attribute" in str(exc) and exc.name in ("a", "b"):
        return ("The lesson asks for two parameters named a and b (self.a = nn.Parameter(torch.rand(1))), which "
                "the tests read as Linear1D().a and Linear1D().b.")
    if isinstance(exc, AttributeError) and re.match(r"property '[ab]' of 'Linear1D' object has no setter", str(exc)):
        return ("a and b are properties here; the lesson asks for them to be the parameters themselves "
                "(self.a = nn.Parameter(...)), which torch.func.functional_call, as gradcheck is run here, "
                "replaces by name.")
    if (isinstance(exc, RuntimeError) and re.search("mat1 and mat2 shapes cannot be multiplied|must have same reduction dim", str(exc))
            and any(is_a(layer["kinds"], nn.Linear) for layer in linear1d_layers(lesson))):
        return ("Linear1D holds an nn.Linear, which works on the last dim only and needs it of size in_features: "
                "x of any other shape fails. The lesson asks for a * x + b with parameters a and b of shape (1,), "
                "which broadcast over x of any shape.")
    return ""


def with_linear1d(what: str, scenario, lesson, *args, **kwargs):
    """scenario(lesson, *args, **kwargs); an error in it fails the test naming the call (`what`,
    grader.testing.reported), with Linear1D's mistake behind it where it shows (linear1d_mistake)."""
    __tracebackhide__ = True
    with reported(what, advice=lambda exc: linear1d_mistake(lesson, exc)
                  if isinstance(exc, (AttributeError, RuntimeError)) else ""):
        return scenario(lesson, *args, **kwargs)


@beside
def linear1d_draws(lesson, seed):
    """a and b of Linear1D() made after torch.manual_seed(seed), twice."""
    draws = []
    for _ in range(2):
        torch.manual_seed(seed)
        model = lesson.Linear1D()
        draws.append((model.a.detach(), model.b.detach()))
    return draws


@beside
def loaded(lesson, model, checkpoint, x=None):
    """The learner's module `model` (LEARNERS) loading `checkpoint` (strict): the error it
    raised (`attempt`), what it holds and its children's names (the pitfall behind that), its
    parameters, and, loaded, its output on x."""
    module = made(lesson, model)
    _, error = attempt(lambda: module.load_state_dict(checkpoint), (RuntimeError, KeyError))
    return {"error": error, "held": held(module), "names": [name for name, _ in children(module)],
            "shapes": {key: tuple(value.shape) for key, value in module.state_dict().items()},
            "parameters": [p.detach() for p in module.parameters()],
            "out": module(x) if x is not None and error is None else None}


@beside
def linear1d_tracks(lesson, x):
    """Whether Linear1D(), a = 2, b = 0.5, called on x returns a tensor that requires grad (None: no tensor)."""
    out = linear1d(lesson, (2.0, 0.5))(x)
    return out.requires_grad if isinstance(out, torch.Tensor) else None


@beside
def linear1d_gradient(lesson, x, upstream, wrt):
    """The gradient of sum(Linear1D()(x) * upstream), a = 2, b = 0.5, with respect to `wrt`
    ("a", "b", or "x", which then requires grad), as grad_of works it out; None where the
    output tracks no gradient."""
    model = linear1d(lesson, (2.0, 0.5))
    x = x.detach().requires_grad_()
    out = model(x)
    if not getattr(out, "requires_grad", False):
        return None
    (grad,) = torch.autograd.grad((out * upstream).sum(), x if wrt == "x" else getattr(model, wrt))
    return grad


@beside
def linear1d_jacobians(lesson, inputs, eps):
    """What torch.autograd.gradcheck compares, for Linear1D().double() with its a and b replaced
    by the test's (torch.func.functional_call), a function of (x, a, b) = inputs: its Jacobian
    by autograd with respect to each input, and, for each input, its outputs with each element
    of it moved by +eps and by -eps, one at a time, as a tensor (elements, 2, outputs)."""
    model = lesson.Linear1D().double()

    def call(x, a, b):  # the module with its a and b replaced by the test's tensors
        return torch.func.functional_call(model, {"a": a, "b": b}, (x,))

    def moved(i, k, step):  # the output with element k of input i moved by step
        args = [t.detach().clone() for t in inputs]
        args[i].view(-1)[k] += step
        return call(*args).detach().reshape(-1)

    analytic = torch.autograd.functional.jacobian(call, tuple(inputs))
    return analytic, [torch.stack([torch.stack([moved(i, k, eps), moved(i, k, -eps)]) for k in range(t.numel())])
                      for i, t in enumerate(inputs)]


# --- MLP -----------------------------------------------------------------------------------


def mlp(lesson, sizes, activation: str | None = None) -> nn.Module:
    """MLP(sizes), with activation=ACTIVATIONS[activation] where one is named (else its default)."""
    return lesson.MLP(sizes) if activation is None else lesson.MLP(sizes, activation=ACTIVATIONS[activation])


@beside
def mlp_seen(lesson, sizes, activation=None):
    """MLP(sizes[, activation]) as data: its type (`kinds`), its children (`layers_of`), its
    state_dict keys, how many numbers its parameters hold, and what it holds (`held`)."""
    model = mlp(lesson, sizes, activation)
    return {"kinds": kinds(model), "layers": layers_of(model), "keys": list(model.state_dict()),
            "size": sum(p.numel() for p in model.parameters()), "held": held(model)}


def names_of(seen: dict) -> list[str]:
    return [layer["name"] for layer in seen["layers"]]


def naming_mistake(seen: dict, names: list[str]) -> str:
    """The lesson's pitfall behind an MLP's wrong layer names, when it shows, else "" (`seen`: what it holds, `held`)."""
    if names and all(name.isdigit() for name in names):
        return ("This is the positional-names pitfall: nn.Sequential(*layers) names its children by position, "
                "'0', '1', ...; hand nn.Sequential the names too (an OrderedDict of name -> module).")
    if not names:
        return unregistered(seen)
    return ""


@beside
def mlp_with_its_output_at(lesson, sizes, value, x):
    """MLP(sizes), its last child (an nn.Linear) made to return `value` whatever comes in: its output on x."""
    model = lesson.MLP(sizes)
    last = children(model)[-1][1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.fill_(value)
    return model(x)


@beside
def mlp_made_by_a_factory(lesson, sizes):
    """MLP(sizes, activation=a factory function of nn.Tanh() modules): how many times it called
    the factory, and which of the factory's modules (`which`) each of its children that is no
    nn.Linear is."""
    made = []

    def activation():  # a factory, not a class: counts its calls
        made.append(nn.Tanh())
        return made[-1]

    model = lesson.MLP(sizes, activation=activation)
    return len(made), which([m for _, m in children(model) if not isinstance(m, nn.Linear)], made)


def times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def checkpoint_differences(yours: dict, theirs: dict) -> str:
    """How a model's state_dict (`yours`: key -> shape) differs from a checkpoint's (`theirs`), told by layer;
    "" where it does not."""
    def layers(keys) -> str:
        names = list(dict.fromkeys(key.rsplit(".", 1)[0] for key in keys))
        return ", ".join(names) if names else "none (an empty state_dict)"
    if list(yours) != list(theirs):
        return f"the checkpoint's layers are {layers(theirs)}; your MLP's are {layers(yours)}."
    key = next((key for key in theirs if yours[key] != theirs[key]), None)
    if key is None:  # the keys and shapes agree: torch's words are all there is
        return ""
    return f"the keys agree, but {key} has shape {yours[key]} in your MLP and {theirs[key]} in the checkpoint."


@beside
def mlp_run(lesson, sizes, activation, x=None):
    """MLP(sizes, activation=ACTIVATIONS[activation]) made after torch.manual_seed(len(sizes)):
    (weight, bias) of each of its attributes linear0, linear1, ... (None for one that is no
    nn.Linear); and its output on x."""
    torch.manual_seed(len(sizes))
    model = mlp(lesson, sizes, activation)
    layers = [getattr(model, f"linear{i}", None) for i in range(len(sizes) - 1)]
    return ([(layer.weight.detach(), None if layer.bias is None else layer.bias.detach()) if isinstance(layer, nn.Linear)
             else None for layer in layers],
            None if x is None else model(x))


@beside
def mlp_made(lesson, sizes):
    """repr(MLP(sizes)): what it made, where it should have refused."""
    return repr(lesson.MLP(sizes))


@beside
def mlp_gradients(lesson, x):
    """MLP([3, 6, 2], activation=nn.Tanh), made after torch.manual_seed(3), the sum of the squares
    of its output on x backpropagated: (name, .grad) of each of its parameters."""
    torch.manual_seed(3)
    model = lesson.MLP([3, 6, 2], activation=nn.Tanh)
    model(x).pow(2).sum().backward()
    return [(name, p.grad) for name, p in model.named_parameters()]


# --- Ensemble ------------------------------------------------------------------------------


def contained(modules: list[nn.Module], container: str):
    """`modules` as the iterable a test hands Ensemble: a "list", a "tuple" or a "generator"."""
    return {"list": list, "tuple": tuple, "generator": lambda ms: (m for m in ms)}[container](modules)


def ensemble(lesson, members, container: str = "list") -> tuple[nn.Module, list[nn.Module]]:
    """Ensemble of the modules `members` stands for ((name, weights) each: `made`), handed over
    as a `container`; and those modules."""
    modules = [made(lesson, name, weights) for name, weights in members]
    return lesson.Ensemble(contained(modules, container)), modules


@beside
def ensemble_out(lesson, members, x, container="list"):
    """Ensemble(members) called on x: its output, and x after the call."""
    model, _ = ensemble(lesson, members, container)
    return model(x), x


@beside
def ensemble_registered(lesson, members, container="list"):
    """What Ensemble(members) registers: which of its members' parameters each of its
    parameters() is (`which`), its state_dict keys, what it holds (`held`), and its attribute
    members: its type (`kinds`) and, a module, how many children it has."""
    model, modules = ensemble(lesson, members, container)
    kept = getattr(model, "members", None)
    return {"parameters": which(list(model.parameters()), [p for m in modules for p in m.parameters()]),
            "keys": list(model.state_dict()), "held": held(model),
            "members": (kinds(kept), len(list(kept.children())) if isinstance(kept, nn.Module) else None)}


ONE_NUMBER = ("One number for the whole batch: a mean over every element. Average over the members only, "
              "one mean per output element.")
FIRST_ALONE = "This is member 0's output alone: call every member and average all their outputs."


# What an ensemble that falls into each pitfall returns, from its members' outputs stacked.
ENSEMBLE_PITFALLS = [
    Pitfall(lambda stacked: stacked.sum(dim=0), "This is the sum of the members' outputs, not their mean: divide by the "
            "number of members."),
    Pitfall(lambda stacked: stacked[0], FIRST_ALONE),
]


def mean_mistake(out, outputs: list[torch.Tensor]) -> str:
    """The pitfall behind an ensemble output that is not the mean of `outputs`, when it shows, else ""."""
    if not isinstance(out, torch.Tensor):
        return ""
    stacked = torch.stack(outputs)
    told = pitfall_of(out, stacked.mean(dim=0), ENSEMBLE_PITFALLS, stacked, match=close_as_float32)
    if told:
        return told
    if out.dim() == 0 and stacked.dim() > 1:
        return ONE_NUMBER
    return ""


def close_as_float32(got: torch.Tensor, wrong: torch.Tensor) -> bool:
    """Whether two tensors of one shape hold the same values up to float32's rounding (torch.allclose)."""
    return got.shape == wrong.shape and torch.allclose(got, wrong, rtol=1e-5, atol=1e-6)


@beside
def ensemble_converted(lesson, members, x=None):
    """Ensemble(members).to(torch.float64): its members' weights' dtypes and what it holds
    (`held`); and its output on x."""
    model, modules = ensemble(lesson, members)
    model = model.to(torch.float64)
    return {"dtypes": [m.weight.dtype for m in modules], "held": held(model), "out": None if x is None else model(x)}


@beside
def ensemble_modes(lesson, members, x=None):
    """Ensemble(members), members Sequential(Linear, Dropout), after .eval(): each member's and its
    Dropout's training flags, and what it holds (`held`); with x, then its output on x and,
    after .train(), its members' Dropouts' flags."""
    model, modules = ensemble(lesson, members)
    model.eval()
    seen = {"eval": [(m.training, m[1].training) for m in modules], "held": held(model)}
    if x is not None:
        seen["out"] = model(x)
        model.train()
        seen["train"] = [m[1].training for m in modules]
    return seen


@beside
def ensemble_stepped(lesson, members, x, y):
    """One step of torch.optim.SGD(Ensemble(members).parameters(), lr=0.1) on the mean squared
    error of its output on x against y: how many parameters it has, what it holds (`held`), and
    each member's state_dict after the step (none taken with no parameters: SGD refuses none)."""
    model, modules = ensemble(lesson, members)
    params = list(model.parameters())
    if params:
        optimizer = torch.optim.SGD(params, lr=0.1)
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    return {"parameters": len(params), "held": held(model), "after": [dict(m.state_dict()) for m in modules]}


FORWARD_SKIPS_HOOKS = ("This is the .forward pitfall: module.forward(x) runs forward alone and skips the module's "
                       "hooks (pruning, profilers, feature extractors live there). Call the module: module(x).")


@beside
def ensemble_hooked(lesson, members, x):
    """Ensemble(members) called on x, member i with a forward pre-hook that counts its runs and a
    forward hook that adds 10 * (i + 1) to its output: the counts, and the output."""
    model, modules = ensemble(lesson, members)
    calls = [0] * len(modules)
    for i, m in enumerate(modules):
        m.register_forward_pre_hook(lambda module, args, i=i: calls.__setitem__(i, calls[i] + 1))
        m.register_forward_hook(lambda module, args, out, i=i: out + 10.0 * (i + 1))  # replaces the output
    out = model(x)
    return calls, out


@beside
def ensemble_made(lesson, container):
    """repr(Ensemble(an empty `container`)) on one line: what it made, where it should have refused."""
    return re.sub(r"\s*\n\s*", "", repr(lesson.Ensemble(contained([], container))))


# --- fit -----------------------------------------------------------------------------------


@beside
def fitted(lesson, model, x, y, steps, lr, dtype=None, caught=False):
    """fit(the module `model` stands for ((name, weights): `made`, in `dtype`), x, y, steps, lr):
    what it returned (`returned`), then the module's parameters by name and their .grad.
    caught: an error fit raised (but NotImplementedError) is reported (`attempt`), not raised."""
    module = made(lesson, *model, dtype=dtype)
    loss, error = attempt(lambda: lesson.fit(module, x, y, steps=steps, lr=lr),
                          (Exception,) if caught else (), but=(NotImplementedError,))
    return {"loss": returned(loss), "error": error,
            "parameters": {name: p.detach() for name, p in module.named_parameters()},
            "grads": [p.grad for p in module.parameters()]}


def gradient_descent(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float, *,
                     accumulate: bool = False, loss: str = "mean", first_only: bool = False) -> list[float]:
    """Independent reference for fit: gradient descent by hand, returning each step's loss.

    The keywords make the known wrong fits, to recognise them: gradients that add up from step
    to step (no zero_grad), the sum of the squared errors, and only the first parameter trained.
    """
    params = list(model.parameters())[:1] if first_only else list(model.parameters())
    losses, total = [], None
    for _ in range(steps):
        squared = (model(x) - y) ** 2
        step_loss = squared.sum() if loss == "sum" else squared.mean()
        grads = torch.autograd.grad(step_loss, params)
        total = grads if total is None or not accumulate else [t + g for t, g in zip(total, grads)]
        with torch.no_grad():
            for p, g in zip(params, total):
                p -= lr * g
        losses.append(step_loss.item())
    return losses


def wrong_fit(**keywords):
    """A known wrong fit, as a Pitfall's `gives`: the parameters gradient_descent(**keywords) leaves,
    from a copy of the model `start`, on the test's inputs (start, x, y, steps, lr)."""
    def gives(start: nn.Module, x, y, steps: int, lr: float) -> list[torch.Tensor]:
        replay = copy.deepcopy(start)
        gradient_descent(replay, x, y, steps, lr, **keywords)
        return list(replay.parameters())
    return gives


FIT_PITFALLS = [
    Pitfall(wrong_fit(accumulate=True),
            "This is the accumulating-gradient pitfall: backward() adds into .grad, so with no zero_grad() each step "
            "follows the sum of all the gradients so far. Clear the gradients at the start of every step."),
    Pitfall(wrong_fit(loss="sum"),
            "This is the sum of the squared errors, not their mean (F.mse_loss): the steps grow with the number of "
            "samples."),
    Pitfall(wrong_fit(first_only=True),
            "Only the first parameter moved: the optimizer must get all of model.parameters()."),
]


def fit_mistake(seen: dict, start: nn.Module, reference: nn.Module, x, y, steps: int, lr: float, dtype: torch.dtype) -> str:
    """The pitfall behind a fit that is not plain gradient descent (`reference`, trained from `start`),
    when a known wrong fit replays it, else "" (`seen`: what `fitted` reported of the model fit
    trained, from `start`)."""
    got = list(seen["parameters"].values())
    if all(torch.equal(p, q.detach()) for p, q in zip(got, start.parameters())):
        if all(grad is None or not bool(grad.any()) for grad in seen["grads"]):
            return ("No parameter moved, and the gradients are cleared: step() saw no gradient. This is clearing "
                    "the gradients between backward() and step(): clear them at the start of the step, before "
                    "the loss.")
        return "No parameter moved: is there an optimizer.step() in every step, over model.parameters()?"
    return pitfall_of(got, list(reference.parameters()), FIT_PITFALLS, start, x, y, steps, lr,
                      match=lambda got, wrong: all(torch.allclose(p, q.detach(), **tolerance(dtype))
                                                   for p, q in zip(got, wrong))) or ""


def loss_pair(loss: dict, expected: float) -> tuple[str, str]:
    """A loss fit returned (`returned`) and the one expected, with the digits that tell them apart."""
    if isinstance(loss["value"], float):
        return apart(loss["value"], expected)
    return loss["repr"], f"{expected:.5g}"


def loss_after_update(loss: dict, trained: nn.Module, x, y) -> str:
    """The pitfall behind a loss (`returned`) that is the trained model's, after the last update, else ""."""
    after = F.mse_loss(trained(x), y).item()
    return (LOSS_AFTER_UPDATE if isinstance(loss["value"], float) and loss["value"] == pytest.approx(after, rel=1e-5)
            else "")


LOSS_AFTER_UPDATE = ("This is the loss after the last update. Return the last step's own loss, the one computed "
                     "before its update.")


class PartlyTrainable(nn.Module):
    """Two Linear layers, the first one's weight frozen, and a parameter forward never uses."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(2, 3), nn.Linear(3, 1)
        self.first.weight.requires_grad_(False)  # frozen: no gradient
        self.unused = nn.Parameter(torch.ones(2))  # registered, never used: its .grad stays None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.tanh(self.first(x)))


@beside
def fit_hooked(lesson, x, y, steps, lr):
    """fit(nn.Linear(2, 1), x, y, steps, lr), the module with a forward pre-hook and a forward
    hook that count their runs: the counts."""
    torch.manual_seed(8)
    model = nn.Linear(2, 1)
    calls = {"pre": 0, "post": 0}
    model.register_forward_pre_hook(lambda module, args: calls.__setitem__("pre", calls["pre"] + 1))
    model.register_forward_hook(lambda module, args, out: calls.__setitem__("post", calls["post"] + 1))
    lesson.fit(model, x, y, steps=steps, lr=lr)
    return calls


# --- Linear1D fitted to noisy samples of y = 5x + 3 --------------------------------------------


@beside
def line_fitted(lesson, x, y, device=None):
    """fit(Linear1D() made after torch.manual_seed(0), on `device`, x, y, steps=500, lr=0.5), x and y
    moved there: what it returned (`returned`), and its a and b (`ab`)."""
    torch.manual_seed(0)
    model = lesson.Linear1D()
    if device is not None:
        model, x, y = model.to(device), x.to(device), y.to(device)
    loss = lesson.fit(model, x, y, steps=500, lr=0.5)
    return returned(loss), ab(model)


@beside
def linear1d_trainable(lesson, x):
    """Linear1D()'s parameter names (`names`), and whether its output on x requires grad (`grad`;
    None where the call raised or did not return a tensor)."""
    model = lesson.Linear1D()
    out, _ = attempt(lambda: model(x), (Exception,))
    return {"names": [name for name, _ in model.named_parameters()],
            "grad": out.requires_grad if isinstance(out, torch.Tensor) else None}


def untrainable(lesson, x, what: str) -> str:
    """Why fit cannot train Linear1D at all, when Linear1D is the cause, else "": a fit that
    raises inside the learner's (right) fit points at the wrong function."""
    seen = linear1d_trainable(lesson, x)
    if not seen["names"]:
        return (f"{what}: Linear1D().parameters() is empty, so fit has nothing to train (an optimizer raises "
                "'optimizer got an empty parameter list'). Fix Linear1D first: a and b must be nn.Parameter "
                "attributes (see test_linear1d_registers_a_and_b).")
    if seen["grad"] is False:
        return (f"{what}: Linear1D()(x) does not require grad, so the loss is cut off from a and b and "
                "loss.backward() in fit has no graph to follow. Fix Linear1D first: use a and b themselves in "
                "forward, not .data or .detach().")
    return ""


# --- devices -------------------------------------------------------------------------------


@beside
def linear1d_on_meta(lesson, x):
    """Linear1D().to("meta") called on x: its output, or the RuntimeError it raised (`attempt`);
    and what it holds (`held`)."""
    model = lesson.Linear1D().to("meta")
    out, error = attempt(lambda: model(x), (RuntimeError,))
    return {"out": out, "error": error, "held": held(model)}


@beside
def ensemble_on_meta(lesson, x):
    """Ensemble([nn.Linear(3, 2) on the meta device, MLP([3, 4, 2]).to("meta")]) called on x: its output."""
    members = [nn.Linear(3, 2, device="meta"), lesson.MLP([3, 4, 2]).to("meta")]
    return lesson.Ensemble(members)(x)


@beside
def linear1d_and_mlp_on(lesson, device, ab, x):
    """Ensemble([Linear1D() with a and b = `ab`, MLP([1, 4, 1])]) on `device`, called on x moved
    there: its output, its output's device and x's, and each member's own output on x."""
    model = linear1d(lesson, ab, device)
    mlp = lesson.MLP([1, 4, 1]).to(device)
    x = x.to(device)
    out = lesson.Ensemble([model, mlp])(x)
    return {"out": out, "device": out.device, "x": x.device, "members": [model(x), mlp(x)]}


CONTRACT = """Contract (each promise of the lesson text, the docstrings and the hints -> its tests):
Linear1D
- exactly two nn.Parameters "a", "b", in that order, shape (1,), float32 -> test_linear1d_registers_a_and_b
- "a random value in [0, 1)", the same after the same torch.manual_seed, a different from b and from one seed
  to the next -> test_linear1d_initialisation
- state_dict keys "a", "b"; a checkpoint with them loads strictly -> test_linear1d_state_dict
- y = a * x + b, x's shape, any float dtype after .to(dtype) -> test_linear1d_computes_a_x_plus_b
- ".to(torch.float64) converts them" -> test_linear1d_to_float64_converts_the_parameters
- "differentiable with respect to x, a and b" -> test_linear1d_gradients_reach_a_b_and_x, test_linear1d_gradcheck_float64
- any device (registered parameters move with .to) -> test_modules_on_the_meta_device, test_everything_runs_on_the_inputs_device
- fit recovers a ~= 5, b ~= 3 + noise mean -> test_fit_recovers_a_noisy_line
MLP
- an nn.Sequential; layers linear0, act0, ..., in order, Linear sizes -> test_mlp_layers_their_order_and_names
- state_dict keys; a Sequential(OrderedDict) checkpoint loads strictly and computes the same
  -> test_mlp_state_dict_keys, test_mlp_loads_a_checkpoint_of_the_same_layers
- no activation after the last Linear (any depth) -> test_mlp_has_no_activation_after_the_last_linear
- activation called once per hidden layer, a fresh instance each -> test_mlp_activation_is_a_fresh_instance_per_hidden_layer,
  test_mlp_calls_activation_once_per_hidden_layer
- fewer than two sizes: ValueError whose message contains "sizes" -> test_mlp_needs_two_sizes
- output = layers applied by hand, (..., in) -> (..., out), sizes any sequence -> test_mlp_equals_its_layers_applied_by_hand
- gradients reach every layer -> test_mlp_trains_every_layer
Ensemble
- members in order in self.members, registered as submodules: parameters, state_dict keys "members.0.weight", ...,
  strict load
  -> test_ensemble_registers_its_members
- .to(), .eval()/.train(), an optimizer reach every member -> test_ensemble_to_float64_converts_every_member,
  test_ensemble_eval_reaches_every_member, test_an_optimizer_over_the_ensemble_trains_every_member
- the elementwise mean of the members' outputs -> test_ensemble_returns_the_mean_of_its_members, test_ensemble_of_linear1d_members
- any iterable (list, tuple, generator) -> test_ensemble_accepts_a_generator, test_ensemble_accepts_a_tuple
- no members: ValueError -> test_ensemble_needs_a_member
- each member run once per call, its hooks included -> test_ensemble_calls_its_members_so_their_hooks_run
- x left unchanged (a member that returns x itself included) -> test_ensemble_leaves_x_alone
- any device -> test_modules_on_the_meta_device, test_everything_runs_on_the_inputs_device
fit
- SGD(model.parameters(), lr) on the mean squared error, step for step (1 step too), no momentum
  or weight decay, clearing gradients -> test_fit_is_plain_gradient_descent_on_the_mse
- "over all of model.parameters()" (unused and frozen ones left alone) -> test_fit_with_unused_and_frozen_parameters
- the module run once per step, its hooks included -> test_fit_calls_the_module_so_its_hooks_run
- last step's loss before its update, a Python float -> test_fit_is_plain_gradient_descent_on_the_mse,
  test_fit_returns_a_python_float
- steps < 1: ValueError whose message contains "steps" -> test_fit_needs_a_step
- any device -> test_everything_runs_on_the_inputs_device
the pitfalls the lesson names, each recognised by its signature and named in the failure
- a plain tensor with requires_grad=True, a Python list (or dict) of layers or parameters, buffers:
  not registered -> test_linear1d_registers_a_and_b, test_linear1d_state_dict, test_linear1d_to_float64_converts_the_parameters,
  test_modules_on_the_meta_device, test_mlp_state_dict_keys, test_ensemble_registers_its_members,
  test_ensemble_to_float64_converts_every_member, test_ensemble_eval_reaches_every_member,
  test_an_optimizer_over_the_ensemble_trains_every_member, test_ensemble_accepts_a_tuple
- "model.forward(x) skips all of them [the hooks], silently" -> test_ensemble_calls_its_members_so_their_hooks_run,
  test_fit_calls_the_module_so_its_hooks_run
- nn.Sequential(a, b, c) "names them by position" -> test_mlp_layers_their_order_and_names, test_mlp_state_dict_keys,
  test_mlp_loads_a_checkpoint_of_the_same_layers
- "one activation module reused in every hidden layer" (PReLU shares its slope) -> test_mlp_activation_is_a_fresh_instance_per_hidden_layer
- a generator read twice (hint) -> test_ensemble_accepts_a_generator
- the sum instead of "the elementwise mean" -> test_ensemble_returns_the_mean_of_its_members
- adding in place into a member's output: nn.Identity returns x itself (hint) -> test_ensemble_leaves_x_alone
- .data / .item() leave autograd (hint) -> test_linear1d_gradients_reach_a_b_and_x
- gradients not cleared ("the running sum of every gradient so far"), cleared where "step() sees only zeros",
  the loss after the update -> test_fit_is_plain_gradient_descent_on_the_mse
"""
