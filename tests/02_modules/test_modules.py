"""Lesson 02, modules: checks modules.py against torch's own modules and hand-written references.

`lesson` is the module under test (the learner's, the reference, or a mutant). The tests of
`fit` train torch's built-in layers, so a slip in Linear1D, MLP or Ensemble does not show up
there as well; only the noisy line's example trains the learner's Linear1D.

Contract (each promise of the lesson text, the docstrings and the hints -> its tests):
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

import copy
from collections import OrderedDict

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_close, describe, expect_raises, fail, grad_of, tolerance
from grader.testing.strategies import on_meta, shapes, tensors

def unregistered(model: nn.Module) -> str:
    """The lesson's registration pitfall that `model` shows, named, with its fix; "" if none shows.

    Looks at what the module holds as plain attributes (a tensor that is not an nn.Parameter, a
    Python list, tuple or dict of modules or tensors) and at tensors registered as buffers.
    """
    for name, value in vars(model).items():
        if name.startswith("_") or name == "training":
            continue
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter):
            return (f"This is the plain-tensor pitfall: self.{name} is a tensor (requires_grad={value.requires_grad}), "
                    "not an nn.Parameter, so the module does not register it: parameters(), state_dict(), .to() "
                    "and an optimizer never see it. Wrap it in nn.Parameter.")
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
        if any(isinstance(item, (nn.Module, torch.Tensor)) for item in items):
            kind = type(value).__name__
            modules = any(isinstance(item, nn.Module) for item in items)
            fix = ("nn.ModuleList (nn.ModuleDict for a dict)" if modules
                   else "one nn.Parameter attribute each (or nn.ParameterList)")
            return (f"This is the plain-{kind} pitfall: self.{name} is a Python {kind} of "
                    f"{'modules' if modules else 'tensors'}, which the module cannot see into: parameters(), "
                    f"state_dict(), .to(), .eval() and an optimizer all miss what is in it. Use {fix}.")
    buffers = [name for name, _ in model.named_buffers()]
    if buffers:
        return (f"{', '.join(buffers)} are registered as buffers (register_buffer): saved and moved by .to(), but "
                "not parameters, so no optimizer over parameters() trains them. Make them nn.Parameter.")
    return ""


def with_cause(message: str, cause: str) -> str:
    return f"{message}\n{cause}" if cause else message


def line_data() -> tuple[torch.Tensor, torch.Tensor]:
    """Noisy samples of y = 5x + 3, with x = 0, 0.01, ..., 0.99."""
    x = torch.arange(100, dtype=torch.float32) / 100
    noise = torch.rand(100, generator=torch.Generator().manual_seed(0)) * 0.3
    return x, 5 * x + 3 + noise


def with_params(model: nn.Module, a: float, b: float) -> nn.Module:
    with torch.no_grad():
        model.a.fill_(a)
        model.b.fill_(b)
    return model


def children(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(name, module) of each direct child, a module registered twice included each time."""
    return [(name, m) for name, m in model.named_modules(remove_duplicate=False) if name and "." not in name]


# --- Linear1D ------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_linear1d_registers_a_and_b(lesson):
    model = lesson.Linear1D()
    names = [name for name, _ in model.named_parameters()]
    if names != ["a", "b"]:
        fail(with_cause(f"Linear1D().named_parameters() gives the names {names}; expected ['a', 'b'].",
                        unregistered(model)))
    for name, p in model.named_parameters():
        what = f"Linear1D().{name}"
        if not isinstance(p, nn.Parameter):
            fail(f"{what} is a {type(p).__name__}; expected an nn.Parameter.")
        if p.shape != (1,):
            fail(f"{what} has shape {tuple(p.shape)}; expected (1,), like torch.rand(1).")
        if p.dtype != torch.float32:
            fail(f"{what} has dtype {p.dtype}; expected torch.float32 (the default).")
        if not p.requires_grad:
            fail(f"{what} does not require grad: the optimizer could not train it.")
    params = list(model.parameters())
    if not (len(params) == 2 and params[0] is model.a and params[1] is model.b):
        fail("Linear1D().parameters() must yield the attributes a and b themselves, in that order.")


def test_linear1d_initialisation(lesson):
    draws = []
    for seed in (0, 1, 2, 3):
        torch.manual_seed(seed)
        model = lesson.Linear1D()
        torch.manual_seed(seed)
        again = lesson.Linear1D()
        a, b = model.a.detach(), model.b.detach()
        what = f"Linear1D() after torch.manual_seed({seed})"
        if not bool(((a >= 0) & (a < 1) & (b >= 0) & (b < 1)).all()):
            fail(f"{what} has a = {a.tolist()}, b = {b.tolist()}; expected both drawn uniformly in [0, 1) (torch.rand(1)).")
        same = torch.equal(a, again.a.detach()) and torch.equal(b, again.b.detach())
        if not same:
            fail(f"{what} twice gave different parameters: draw them from torch's global RNG (torch.rand), "
                 "so that torch.manual_seed makes them reproducible.")
        draws.append((a.item(), b.item()))
    if len({v for pair in draws for v in pair}) != 2 * len(draws):
        fail(f"Linear1D() after torch.manual_seed(0), (1), (2), (3) has (a, b) = {draws}; expected fresh random "
             "draws: a and b differ from each other and from one torch.manual_seed to the next.")


def test_linear1d_state_dict(lesson):
    model = with_params(lesson.Linear1D(), 2.0, -1.0)
    state = model.state_dict()
    if list(state) != ["a", "b"]:
        fail(with_cause(f"Linear1D().state_dict() has the keys {list(state)}; expected ['a', 'b'].", unregistered(model)))
    assert_close(state["a"], torch.tensor([2.0]), what="Linear1D().state_dict()['a'] after setting a = 2")
    assert_close(state["b"], torch.tensor([-1.0]), what="Linear1D().state_dict()['b'] after setting b = -1")
    fresh = lesson.Linear1D()
    checkpoint = {"a": torch.tensor([0.5]), "b": torch.tensor([4.0])}
    call = "Linear1D().load_state_dict({'a': tensor([0.5]), 'b': tensor([4.])}) (strict)"
    try:
        fresh.load_state_dict(checkpoint)
    except (RuntimeError, KeyError) as exc:
        fail(with_cause(f"{call} raised {type(exc).__name__}: {exc}.", unregistered(fresh)))
    x = torch.tensor([1.0, -2.0])
    assert_close(fresh(x), torch.tensor([4.5, 3.0]), what=f"the module after {call}, on x = [1., -2.]")


@given(tensors(shape=shapes(max_dims=3), dtypes=(torch.float32, torch.float64, torch.float16, torch.bfloat16),
               extremes=False, scales=(1.0, 30.0)))
@example(torch.arange(100, dtype=torch.float32))
def test_linear1d_computes_a_x_plus_b(lesson, x):
    model = with_params(lesson.Linear1D(), 1.5, -0.25).to(x.dtype)
    out = model(x)
    what = f"Linear1D() with a = 1.5, b = -0.25, called on x of {describe(x)}"
    if not (isinstance(out, torch.Tensor) and out.shape == x.shape):
        fail(f"{what} returned {type(out).__name__} of shape {tuple(getattr(out, 'shape', ()))}; expected x's "
             f"shape {tuple(x.shape)}.")
    assert_close(out, 1.5 * x - 0.25, what=what, **tolerance(x.dtype))


def test_linear1d_to_float64_converts_the_parameters(lesson):
    model = lesson.Linear1D().to(torch.float64)
    for name in ("a", "b"):
        p = getattr(model, name)
        if p.dtype != torch.float64:
            fail(with_cause(f"Linear1D().to(torch.float64).{name} is still {p.dtype}: .to() converts only what the "
                            "module registers.", unregistered(model)))
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    assert_close(model(x), model.a.detach() * x + model.b.detach(), what="Linear1D().to(torch.float64) on float64 x")


@pytest.mark.points(2)
def test_linear1d_gradients_reach_a_b_and_x(lesson):
    model = with_params(lesson.Linear1D(), 2.0, 0.5)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, generator=g, requires_grad=True)
    upstream = torch.randn(3, 4, generator=g)
    what = "the gradient of Linear1D()(x) for x of shape (3, 4)"
    out = model(x.detach())
    if isinstance(out, torch.Tensor) and not out.requires_grad:
        fail("Linear1D()(x) for a plain x of shape (3, 4) returned a tensor that does not require grad, though a "
             "and b do: the output is cut off from the parameters, so nothing can train. .data and .item() leave "
             "autograd: compute with the parameters themselves.")
    assert_close(grad_of(model(x), model.a, f"{what} with respect to a", upstream),
                 (x.detach() * upstream).sum().reshape(1), what=f"{what} with respect to a")
    assert_close(grad_of(model(x), model.b, f"{what} with respect to b", upstream),
                 upstream.sum().reshape(1), what=f"{what} with respect to b")
    assert_close(grad_of(model(x), x, f"{what} with respect to x", upstream), 2.0 * upstream,
                 what=f"{what} with respect to x (a = 2)")


def test_linear1d_gradcheck_float64(lesson):
    model = lesson.Linear1D().double()
    g = torch.Generator().manual_seed(2)
    args = tuple(torch.randn(n, generator=g, dtype=torch.float64, requires_grad=True) for n in (5, 1, 1))

    def call(x, a, b):  # the module with its a and b replaced by the test's tensors
        return torch.func.functional_call(model, {"a": a, "b": b}, (x,))

    if not torch.autograd.gradcheck(call, args):
        fail("Linear1D: analytic and numerical gradients differ")


# --- MLP -----------------------------------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_mlp_layers_their_order_and_names(lesson):
    model = lesson.MLP([4, 8, 8, 2])
    what = "MLP([4, 8, 8, 2])"
    if not isinstance(model, nn.Sequential):
        fail(f"{what} is a {type(model).__name__}; expected an nn.Sequential (subclass it).")
    names = [name for name, _ in children(model)]
    expected = ["linear0", "act0", "linear1", "act1", "linear2"]
    if names != expected:
        fail(with_cause(f"{what} has the layers {names}; expected {expected}.", naming_mistake(model, names)))
    for i, (n_in, n_out) in enumerate([(4, 8), (8, 8), (8, 2)]):
        layer = getattr(model, f"linear{i}")
        if not (isinstance(layer, nn.Linear) and (layer.in_features, layer.out_features) == (n_in, n_out)):
            fail(f"{what}.linear{i} is {layer}; expected Linear(in_features={n_in}, out_features={n_out}).")
    for i in range(2):
        act = getattr(model, f"act{i}")
        if not isinstance(act, nn.ReLU):
            fail(f"{what}.act{i} is {act}; expected ReLU().")


def naming_mistake(model: nn.Module, names: list[str]) -> str:
    """The lesson's pitfall behind an MLP's wrong layer names, when it shows, else ""."""
    if names and all(name.isdigit() for name in names):
        return ("This is the positional-names pitfall: nn.Sequential(*layers) names its children by position, "
                "'0', '1', ...; hand nn.Sequential the names too (an OrderedDict of name -> module).")
    if not names:
        return unregistered(model)
    return ""


@pytest.mark.points(2)
def test_mlp_state_dict_keys(lesson):
    model = lesson.MLP([4, 8, 8, 2])
    keys = list(model.state_dict())
    expected = [f"linear{i}.{kind}" for i in range(3) for kind in ("weight", "bias")]
    if keys != expected:
        fail(with_cause(f"MLP([4, 8, 8, 2]).state_dict() has the keys {keys}; expected {expected}.",
                        naming_mistake(model, [name for name, _ in children(model)])))


@pytest.mark.parametrize("sizes", [[3, 2], [4, 8, 8, 2], [2, 5, 5, 5, 1], [1] * 300], ids=["2", "4", "5", "300"])
def test_mlp_has_no_activation_after_the_last_linear(lesson, sizes):
    model = lesson.MLP(sizes)
    what = f"MLP({sizes})" if len(sizes) < 10 else f"MLP([1] * {len(sizes)})"
    layers = children(model)
    if not (layers and isinstance(layers[-1][1], nn.Linear)):
        fail(with_cause(f"{what} ends with {layers[-1][1] if layers else 'nothing'}; expected a Linear: no activation "
                        "after the output layer (it would clip logits or regression targets).",
                        "" if layers else unregistered(model)))
    n_linear = sum(isinstance(m, nn.Linear) for _, m in layers)
    if (n_linear, len(layers)) != (len(sizes) - 1, 2 * len(sizes) - 3):
        fail(f"{what} has {n_linear} Linear layers among {len(layers)} layers; expected {len(sizes) - 1} Linear "
             f"layers and {len(sizes) - 2} activations between them.")
    last = layers[-1][1]
    with torch.no_grad():  # the output layer now returns -10 whatever comes in
        last.weight.zero_()
        last.bias.fill_(-10.0)
    out = model(torch.randn(3, sizes[0]))
    assert_close(out, torch.full((3, sizes[-1]), -10.0), what=f"{what} whose last Linear returns -10 (the output must not pass through ReLU)")


def test_mlp_activation_is_a_fresh_instance_per_hidden_layer(lesson):
    sizes = [3, 4, 4, 4, 2]
    model = lesson.MLP(sizes, activation=nn.PReLU)
    what = f"MLP({sizes}, activation=nn.PReLU)"
    acts = [m for name, m in children(model) if not isinstance(m, nn.Linear)]
    if not (len(acts) == 3 and all(isinstance(a, nn.PReLU) for a in acts)):
        fail(f"{what} has the activations {acts}; expected 3 PReLU().")
    distinct = len({id(a) for a in acts})
    if distinct != 3:
        fail(f"{what} uses {distinct} PReLU instance(s) for its 3 hidden layers, so they share a learnable slope. "
             "This is the shared-activation pitfall: call activation() once per hidden layer.")
    linear = sum(n_in * n_out + n_out for n_in, n_out in zip(sizes, sizes[1:]))
    count = sum(p.numel() for p in model.parameters())
    if count != linear + 3:
        fail(f"{what} has {count} parameters; expected {linear} in the Linear layers plus 1 per PReLU.")


def test_mlp_calls_activation_once_per_hidden_layer(lesson):
    for sizes in ([3, 2], [3, 4, 2], [3, 4, 4, 4, 2]):
        made = []

        def activation():  # a factory, not a class: counts its calls
            made.append(nn.Tanh())
            return made[-1]

        model = lesson.MLP(sizes, activation=activation)
        what = f"MLP({sizes}, activation=a factory function)"
        if len(made) != len(sizes) - 2:
            fail(f"{what} called activation() {len(made)} times; expected once per hidden layer, {len(sizes) - 2}.")
        acts = [m for _, m in children(model) if not isinstance(m, nn.Linear)]
        if not (len(acts) == len(made) and all(a is b for a, b in zip(acts, made))):
            fail(f"{what}: the activations in the model are not the {len(made)} modules activation() returned, in order.")


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
    model = lesson.MLP(sizes, activation=nn.PReLU)
    what = f"MLP({sizes}, activation=nn.PReLU).load_state_dict(checkpoint of nn.Sequential(OrderedDict(linear0=..., act0=..., ...)))"
    try:
        model.load_state_dict(expected_model.state_dict())  # strict: the same keys, the same shapes
    except RuntimeError as exc:
        fail(with_cause(f"{what} raised: {exc}", naming_mistake(model, [name for name, _ in children(model)])))
    x = torch.randn(6, 3)
    assert_close(model(x), expected_model(x), what=f"the model after {what}, on x of shape (6, 3)")


@given(
    st.lists(st.integers(1, 6), min_size=2, max_size=5),
    shapes(min_dims=0, max_dims=2, max_side=3),
    st.sampled_from([nn.Tanh, nn.ReLU, lambda: nn.LeakyReLU(0.2)]),
)
@example([4, 8, 8, 2], (5,), nn.ReLU)
@pytest.mark.points(2)
def test_mlp_equals_its_layers_applied_by_hand(lesson, sizes, batch, activation):
    torch.manual_seed(len(sizes))
    model = lesson.MLP(sizes, activation=activation)
    x = torch.randn(*batch, sizes[0])
    act = activation()
    expected = x
    for i in range(len(sizes) - 1):
        layer = getattr(model, f"linear{i}", None)
        if not isinstance(layer, nn.Linear):
            fail(f"MLP({sizes}) has no Linear layer named linear{i}.")
        expected = F.linear(expected, layer.weight, layer.bias)
        if i < len(sizes) - 2:
            expected = act(expected)
    assert_close(model(x), expected, what=f"MLP({sizes}, activation={act}) on x of {describe(x)}")


@pytest.mark.parametrize("sizes", [[], [4], ()])
def test_mlp_needs_two_sizes(lesson, sizes):
    expect_raises(lambda: lesson.MLP(sizes), ValueError, what=f"MLP({sizes!r})",
                  why="an MLP needs at least an input and an output size.", mention=("sizes",))


def test_mlp_trains_every_layer(lesson):
    torch.manual_seed(3)
    model = lesson.MLP([3, 6, 2], activation=nn.Tanh)
    model(torch.randn(8, 3)).pow(2).sum().backward()
    for name, p in model.named_parameters():
        if p.grad is None or not bool(p.grad.abs().sum() > 0):
            fail(f"MLP([3, 6, 2]): no gradient reached {name}.")


# --- Ensemble ------------------------------------------------------------------------------


def mean_mistake(out, outputs: list[torch.Tensor]) -> str:
    """The pitfall behind an ensemble output that is not the mean of `outputs`, when it shows, else ""."""
    if not isinstance(out, torch.Tensor):
        return ""
    stacked = torch.stack(outputs)
    if out.shape == stacked.shape[1:] and torch.allclose(out, stacked.sum(dim=0), rtol=1e-5, atol=1e-6):
        return "This is the sum of the members' outputs, not their mean: divide by the number of members."
    if out.dim() == 0 and stacked.dim() > 1:
        return ("One number for the whole batch: a mean over every element. Average over the members only, "
                "one mean per output element.")
    return ""


@pytest.mark.public
@pytest.mark.points(2)
def test_ensemble_returns_the_mean_of_its_members(lesson):
    torch.manual_seed(4)
    members = [nn.Linear(3, 2) for _ in range(3)]
    x = torch.randn(5, 3)
    outputs = [m(x).detach() for m in members]
    expected = (outputs[0] + outputs[1] + outputs[2]) / 3
    out = lesson.Ensemble(members)(x)
    what = "Ensemble of 3 Linear(3, 2) on x of shape (5, 3) (the mean of their outputs)"
    assert_close(out, expected, what=what, explain=lambda: mean_mistake(out, outputs))


@given(st.integers(1, 4), shapes(min_dims=0, max_dims=2, max_side=3))
def test_ensemble_of_linear1d_members(lesson, n, batch):
    members = [with_params(lesson.Linear1D(), float(i + 1), float(-i)) for i in range(n)]
    x = torch.randn(*batch, 2, generator=torch.Generator().manual_seed(n))
    # mean over i of (i + 1) * x - i
    expected = (n + 1) / 2 * x - (n - 1) / 2
    assert_close(lesson.Ensemble(members)(x), expected, what=f"Ensemble of {n} Linear1D on x of {describe(x)}")


@pytest.mark.points(2)
def test_ensemble_registers_its_members(lesson):
    members = [nn.Linear(3, 2), nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))]
    ensemble = lesson.Ensemble(members)
    what = "Ensemble([Linear(3, 2), Sequential(Linear(3, 4), ReLU(), Linear(4, 2))])"
    params = list(ensemble.parameters())
    expected = [p for m in members for p in m.parameters()]
    if not (len(params) == len(expected) and all(p is q for p, q in zip(params, expected))):
        fail(with_cause(f"{what}.parameters() yields {len(params)} tensors; expected the members' {len(expected)}.",
                        unregistered(ensemble)))
    keys = list(ensemble.state_dict())
    want = ["members.0.weight", "members.0.bias", "members.1.0.weight", "members.1.0.bias", "members.1.2.weight", "members.1.2.bias"]
    if keys != want:
        fail(with_cause(f"{what}.state_dict() has the keys {keys}; expected {want} (the members registered in "
                        "self.members, each under its index).", unregistered(ensemble)))
    checkpoint = {key: torch.full_like(value, 0.25) for key, value in ensemble.state_dict().items()}
    other = lesson.Ensemble([nn.Linear(3, 2), nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))])
    try:
        other.load_state_dict(checkpoint)  # strict: exactly these keys
    except RuntimeError as exc:
        fail(f"{what}.load_state_dict(a checkpoint with the keys {want}) raised: {exc}")
    if not all(bool((p == 0.25).all()) for p in other.parameters()):
        fail(f"{what}.load_state_dict(...) did not reach every member.")


def test_ensemble_to_float64_converts_every_member(lesson):
    members = [nn.Linear(3, 2) for _ in range(3)]
    ensemble = lesson.Ensemble(members).to(torch.float64)
    for i, m in enumerate(members):
        if m.weight.dtype != torch.float64:
            fail(with_cause(f"after Ensemble(members).to(torch.float64), member {i}'s weight is {m.weight.dtype}: "
                            ".to() reaches only registered submodules.", unregistered(ensemble)))
    out = ensemble(torch.randn(4, 3, dtype=torch.float64))
    if out.dtype != torch.float64:
        fail(f"Ensemble(...).to(torch.float64) returned {out.dtype} for float64 input.")


def test_ensemble_eval_reaches_every_member(lesson):
    torch.manual_seed(5)
    members = [nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5)) for _ in range(2)]
    ensemble = lesson.Ensemble(members)
    ensemble.eval()
    for i, m in enumerate(members):
        if m.training or m[1].training:
            fail(with_cause(f"after ensemble.eval(), member {i} is still in training mode, so its Dropout keeps "
                            "dropping: .eval() reaches only registered submodules.", unregistered(ensemble)))
    x = torch.randn(6, 4)
    expected = (members[0][0](x) + members[1][0](x)) / 2  # no dropout in eval mode
    assert_close(ensemble(x), expected, what="Ensemble of Linear + Dropout members in eval mode")
    ensemble.train()
    if not all(m[1].training for m in members):
        fail("after ensemble.train(), a member's Dropout is still in eval mode.")


@pytest.mark.points(2)
def test_an_optimizer_over_the_ensemble_trains_every_member(lesson):
    torch.manual_seed(6)
    members = [nn.Linear(3, 1) for _ in range(3)]
    before = [copy.deepcopy(m.state_dict()) for m in members]
    ensemble = lesson.Ensemble(members)
    params = list(ensemble.parameters())
    if not params:
        fail(with_cause("Ensemble(members).parameters() is empty: an optimizer could not train any member.",
                        unregistered(ensemble)))
    optimizer = torch.optim.SGD(params, lr=0.1)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    F.mse_loss(ensemble(x), y).backward()
    optimizer.step()
    for i, (m, old) in enumerate(zip(members, before)):
        for name, value in m.state_dict().items():
            if torch.equal(value, old[name]):
                fail(f"one SGD step over Ensemble(members).parameters() left member {i}'s {name} unchanged.")


def test_ensemble_accepts_a_tuple(lesson):
    torch.manual_seed(11)
    members = (nn.Linear(2, 3), nn.Linear(2, 3))
    ensemble = lesson.Ensemble(members)
    x = torch.randn(4, 2)
    assert_close(ensemble(x), (members[0](x) + members[1](x)) / 2, what="Ensemble((Linear(2, 3), Linear(2, 3))) on x of shape (4, 2)")
    count = len(list(ensemble.parameters()))
    if count != 4:
        fail(with_cause(f"Ensemble(a tuple of 2 Linear) has {count} parameter tensors; expected both members' 4.",
                        unregistered(ensemble)))


FORWARD_SKIPS_HOOKS = ("This is the .forward pitfall: module.forward(x) runs forward alone and skips the module's "
                       "hooks (pruning, profilers, feature extractors live there). Call the module: module(x).")


def test_ensemble_calls_its_members_so_their_hooks_run(lesson):
    torch.manual_seed(12)
    members = [nn.Linear(3, 2) for _ in range(3)]
    x = torch.randn(5, 3)
    plain = [m(x).detach() for m in members]
    calls = [0, 0, 0]
    for i, m in enumerate(members):
        m.register_forward_pre_hook(lambda module, args, i=i: calls.__setitem__(i, calls[i] + 1))
        m.register_forward_hook(lambda module, args, out, i=i: out + 10.0 * (i + 1))  # replaces the output
    out = lesson.Ensemble(members)(x)
    what = "Ensemble of 3 Linear(3, 2) members, member i with a forward hook adding 10 * (i + 1)"
    if calls != [1, 1, 1]:
        fail(with_cause(f"{what}: one call ran the members' forward pre-hooks {calls} times; expected once each.",
                        FORWARD_SKIPS_HOOKS if calls == [0, 0, 0] else ""))
    expected = (plain[0] + plain[1] + plain[2]) / 3 + 20.0
    assert_close(out, expected, what=f"{what} (the mean of member(x), hooks included)")


@pytest.mark.parametrize("order", ["identity first", "identity last"])
def test_ensemble_leaves_x_alone(lesson, order):
    torch.manual_seed(13)
    linear = nn.Linear(3, 3)
    members = [nn.Identity(), linear, nn.Identity()] if order == "identity first" else [linear, nn.Identity()]
    x = torch.randn(4, 3)
    before = x.clone()
    expected = (2 * x + linear(x)) / 3 if order == "identity first" else (linear(x) + x) / 2
    what = f"Ensemble([{', '.join(type(m).__name__ for m in members)}]) on x of shape (4, 3) ({order})"
    out = lesson.Ensemble(members)(x)
    assert_close(x, before, what=(
        f"x after {what}: nn.Identity returns x itself, so adding into a member's output in place (+=, add_, "
        "div_) writes into the caller's x; stack the outputs, or add out of place"
    ))
    assert_close(out, expected.detach(), what=what)


def test_ensemble_accepts_a_generator(lesson):
    ensemble = lesson.Ensemble(nn.Linear(2, 2) for _ in range(3))
    count = len(list(ensemble.parameters()))
    if count != 6:
        members = getattr(ensemble, "members", None)
        read_twice = isinstance(members, nn.Module) and not list(members.children())
        fail(with_cause(f"Ensemble(nn.Linear(2, 2) for _ in range(3)) has {count} parameter tensors; expected 6.",
                        "self.members is empty: the generator was read twice, and a generator can be read only "
                        "once. Build the container of members from it first, then check that container." if read_twice
                        else unregistered(ensemble)))
    out = ensemble(torch.randn(4, 2))
    if out.shape != (4, 2):
        fail(f"Ensemble of 3 Linear(2, 2) returned shape {tuple(out.shape)} for x of shape (4, 2).")


@pytest.mark.parametrize("empty", ["list", "generator"])
def test_ensemble_needs_a_member(lesson, empty):
    members = [] if empty == "list" else (m for m in [])
    expect_raises(lambda: lesson.Ensemble(members), ValueError, what=f"Ensemble(an empty {empty})",
                  why="an ensemble of no models has no output.")


# --- fit -----------------------------------------------------------------------------------


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


FIT_MISTAKES = (
    ({"accumulate": True},
     "This is the accumulating-gradient pitfall: backward() adds into .grad, so with no zero_grad() each step "
     "follows the sum of all the gradients so far. Clear the gradients at the start of every step."),
    ({"loss": "sum"},
     "This is the sum of the squared errors, not their mean (F.mse_loss): the steps grow with the number of "
     "samples."),
    ({"first_only": True},
     "Only the first parameter moved: the optimizer must get all of model.parameters()."),
)


def fit_mistake(model: nn.Module, start: nn.Module, x, y, steps: int, lr: float, dtype: torch.dtype) -> str:
    """The pitfall behind a fit that is not plain gradient descent, when a known wrong fit replays it, else ""."""
    got = [p.detach() for p in model.parameters()]
    if all(torch.equal(p, q.detach()) for p, q in zip(got, start.parameters())):
        if all(p.grad is None or not bool(p.grad.any()) for p in model.parameters()):
            return ("No parameter moved, and the gradients are cleared: step() saw no gradient. This is clearing "
                    "the gradients between backward() and step(): clear them at the start of the step, before "
                    "the loss.")
        return "No parameter moved: is there an optimizer.step() in every step, over model.parameters()?"
    for keywords, mistake in FIT_MISTAKES:
        replay = copy.deepcopy(start)
        gradient_descent(replay, x, y, steps, lr, **keywords)
        if all(torch.allclose(p, q.detach(), **tolerance(dtype)) for p, q in zip(got, replay.parameters())):
            return mistake
    return ""


@pytest.mark.points(2)
@pytest.mark.parametrize(("dtype", "steps"), [(torch.float32, 7), (torch.float64, 7), (torch.float32, 1)])
def test_fit_is_plain_gradient_descent_on_the_mse(lesson, dtype, steps):
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).to(dtype)
    start = copy.deepcopy(model)
    reference = copy.deepcopy(model)
    x, y = torch.randn(20, 3, dtype=dtype), torch.randn(20, 2, dtype=dtype)
    loss = lesson.fit(model, x, y, steps=steps, lr=0.3)
    losses = gradient_descent(reference, x, y, steps=steps, lr=0.3)
    what = (f"after fit(model, x, y, steps={steps}, lr=0.3) with a {dtype} model, against {steps} step(s) of "
            "torch.optim.SGD(model.parameters(), lr=0.3) on the mean squared error")
    for (name, got), want in zip(model.state_dict().items(), reference.state_dict().values()):
        assert_close(got, want, what=f"{name} {what}", **tolerance(dtype),
                                explain=lambda: fit_mistake(model, start, x, y, steps, 0.3, dtype))
    if not isinstance(loss, float):
        fail(f"fit returned a {type(loss).__name__}; expected a Python float (loss.item()).")
    if loss != pytest.approx(losses[-1], rel=1e-5):
        after = F.mse_loss(reference(x), y).item()
        cause = ("This is the loss after the last update. Return the last step's own loss, the one computed "
                 "before its update." if loss == pytest.approx(after, rel=1e-5) else "")
        fail(with_cause(f"fit returned {loss!r} {what}; expected the last step's loss {losses[-1]!r} (computed "
                        "before its update).", cause))


class PartlyTrainable(nn.Module):
    """Two Linear layers, the first one's weight frozen, and a parameter forward never uses."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(2, 3), nn.Linear(3, 1)
        self.first.weight.requires_grad_(False)  # frozen: no gradient
        self.unused = nn.Parameter(torch.ones(2))  # registered, never used: its .grad stays None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.tanh(self.first(x)))


def test_fit_with_unused_and_frozen_parameters(lesson):
    torch.manual_seed(14)
    model = PartlyTrainable()
    reference = copy.deepcopy(model)
    frozen = model.first.weight.detach().clone()
    x, y = torch.randn(12, 2), torch.randn(12, 1)
    what = "fit(model, x, y, steps=4, lr=0.2) for a model with a frozen weight and an unused parameter"
    try:
        loss = lesson.fit(model, x, y, steps=4, lr=0.2)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001
        message = (f"{what} raised {type(exc).__name__}: {exc}. torch.optim.SGD over model.parameters() skips "
                   "parameters whose .grad is None.")
    else:
        message = ""
    if message:
        fail(message)
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
    if not torch.equal(model.first.weight, frozen):
        fail(f"{what} changed the frozen weight (requires_grad=False).")
    if not torch.equal(model.unused.detach(), torch.ones(2)):
        fail(f"{what} changed the unused parameter, which gets no gradient.")
    for (name, got), want in zip(model.named_parameters(), reference.parameters()):
        assert_close(got.detach(), want.detach(), what=f"{name} {what}")
    if loss != pytest.approx(losses[-1], rel=1e-5):
        fail(f"{what} returned {loss!r}; expected {losses[-1]!r}.")


def test_fit_calls_the_module_so_its_hooks_run(lesson):
    torch.manual_seed(8)
    model = nn.Linear(2, 1)
    calls = {"pre": 0, "post": 0}
    model.register_forward_pre_hook(lambda module, args: calls.__setitem__("pre", calls["pre"] + 1))
    model.register_forward_hook(lambda module, args, out: calls.__setitem__("post", calls["post"] + 1))
    lesson.fit(model, torch.randn(10, 2), torch.randn(10, 1), steps=5, lr=0.1)
    if calls != {"pre": 5, "post": 5}:
        fail(with_cause(f"fit(model, x, y, steps=5, lr=0.1) ran the model's forward pre-hooks {calls['pre']} and "
                        f"forward hooks {calls['post']} times; expected 5 each (the module called once per step).",
                        FORWARD_SKIPS_HOOKS if calls == {"pre": 0, "post": 0} else ""))


@pytest.mark.public
def test_fit_returns_a_python_float(lesson):
    torch.manual_seed(9)
    model = nn.Linear(1, 1)
    x = torch.linspace(0, 1, 8).unsqueeze(1)
    loss = lesson.fit(model, x, 2 * x, steps=3, lr=0.1)
    if type(loss) is not float:
        fail(f"fit returned a {type(loss).__name__}; expected a Python float: return loss.item(), not the loss "
             "tensor (which keeps the graph alive and, on a GPU, the device memory).")


@pytest.mark.parametrize("steps", [0, -1])
def test_fit_needs_a_step(lesson, steps):
    model = nn.Linear(1, 1)
    x = torch.zeros(4, 1)
    expect_raises(lambda: lesson.fit(model, x, x, steps=steps, lr=0.1), ValueError, what=f"fit(model, x, y, steps={steps}, lr=0.1)",
                  why="with no step there is no loss to return.", mention=("steps",))


# --- Linear1D fitted to noisy samples of y = 5x + 3 --------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_fit_recovers_a_noisy_line(lesson):
    x, y = line_data()
    torch.manual_seed(0)
    model = lesson.Linear1D()
    loss = lesson.fit(model, x, y, steps=500, lr=0.5)
    # The best line through these samples, by least squares in float64: a ~= 5.02, b ~= 3.14
    # (3 plus the noise's mean, 0.15).
    design = torch.stack([x, torch.ones_like(x)], dim=1).double()  # (100, 2)
    best = torch.linalg.lstsq(design, y.double().unsqueeze(1)).solution.squeeze(1).float()
    what = "after fit(Linear1D(), x, y, steps=500, lr=0.5) on noisy samples of y = 5x + 3"
    fix = f"expected the least-squares line a = {best[0]:.4f}, b = {best[1]:.4f}"
    assert_close(model.a.detach(), best[:1], what=f"a {what} ({fix})", atol=1e-3, rtol=0)
    assert_close(model.b.detach(), best[1:], what=f"b {what} ({fix})", atol=1e-3, rtol=0)
    best_loss = F.mse_loss(design.float() @ best, y).item()
    if loss != pytest.approx(best_loss, abs=1e-5):
        fail(f"fit returned {loss!r} {what}; the best line's loss is {best_loss:.6f}.")


# --- devices -------------------------------------------------------------------------------


def test_modules_on_the_meta_device(lesson):
    x = on_meta(torch.empty(4, 3))
    linear1d = lesson.Linear1D().to("meta")
    try:
        out = linear1d(x)
    except RuntimeError as exc:
        message = with_cause(f"Linear1D().to('meta') on x of shape (4, 3) on the meta device raised: {exc}",
                             unregistered(linear1d))
    else:
        message = ""
        if (out.device.type, out.shape) != ("meta", (4, 3)):
            message = with_cause(f"Linear1D().to('meta') on x of shape (4, 3) on the meta device returned shape "
                                 f"{tuple(out.shape)} on {out.device}; expected (4, 3) on meta: .to() moves only "
                                 "what the module registers.", unregistered(linear1d))
    if message:
        fail(message)
    members = [nn.Linear(3, 2, device="meta"), lesson.MLP([3, 4, 2]).to("meta")]
    out = lesson.Ensemble(members)(x)
    if (out.device.type, out.shape, out.dtype) != ("meta", (4, 2), torch.float32):
        fail(f"Ensemble([Linear(3, 2), MLP([3, 4, 2])]) on the meta device returned shape {tuple(out.shape)}, "
             f"{out.dtype} on {out.device}; expected (4, 2), float32, on meta (x's device): make nothing on the "
             "default device and read no values into Python.")


@pytest.mark.cuda
def test_everything_runs_on_the_inputs_device(lesson):
    x, y = (t.cuda() for t in line_data())
    model = lesson.Linear1D().cuda()
    loss = lesson.fit(model, x, y, steps=500, lr=0.5)
    if not (isinstance(loss, float) and loss < 0.01):
        fail(f"fit(Linear1D on CUDA, ...) returned {loss!r}; expected a float below 0.01.")
    mlp = lesson.MLP([1, 4, 1]).cuda()
    ensemble = lesson.Ensemble([model, mlp])
    out = ensemble(x.unsqueeze(1))
    if out.device != x.device:
        fail(f"Ensemble on CUDA returned a tensor on {out.device}.")
    assert_close(out, (model(x.unsqueeze(1)) + mlp(x.unsqueeze(1))) / 2, what="Ensemble([Linear1D, MLP]) on CUDA")
