"""First-order optimizers over pytrees, as `jax.example_libraries.optimizers`.

An optimizer is a triple `(init_fun, update_fun, get_params)`:

    opt_init, opt_update, get_params = optimizers.sgd(step_size)
    opt_state = opt_init(params)
    opt_state = opt_update(step, grads, opt_state)
    params = get_params(opt_state)

Each optimizer below is written for one array and lifted to pytrees by `optimizer`; the state
(`OptimizerState`) is a pytree, so it passes through `jit`. Step sizes are numbers or
schedules (functions of the step number). The formulas are JAX's, term for term, so the
numbers agree with JAX's.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias

from lamina_core import numpy as jnp
from lamina_core.tree import tree_util

Array: TypeAlias = Any
Params: TypeAlias = Any
"""Parameters: any pytree of arrays."""
State: TypeAlias = Any
"""One array's optimizer state (a pytree)."""
Updates: TypeAlias = Params
"""Gradients, of the parameters' structure."""
Step: TypeAlias = int
Schedule: TypeAlias = Callable[[Step], Any]
"""A step size as a function of the step number."""

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
"""The state of a lifted optimizer: per parameter leaf, its state's leaves (`packed_state`) and
treedef (`subtree_defs`), with the parameters' treedef (`tree_def`). A pytree whose leaves are
the arrays of `packed_state`."""


def _unflatten_state(defs: tuple[Any, Any], children: Any) -> OptimizerState:
    (packed_state,) = children
    return OptimizerState(packed_state, *defs)


tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    _unflatten_state,
)

InitFn: TypeAlias = Callable[[Params], OptimizerState]
UpdateFn: TypeAlias = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn: TypeAlias = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
    """An optimizer's three functions."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


Triple: TypeAlias = tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]


def _flatten_each(trees: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The leaves and the treedef of each tree, as two tuples."""
    pairs = [tree_util.tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def _unflatten_each(treedefs: Sequence[Any], leaves: Sequence[Any]) -> list[Any]:
    return [tree_util.tree_unflatten(d, x) for d, x in zip(treedefs, leaves, strict=True)]


def optimizer(opt_maker: Callable[..., Triple]) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays to pytrees of parameters.

    `opt_maker(*args)` returns `(init, update, get_params)` for one array: `init(x0)` makes its
    state (a pytree), `update(i, g, state)` the next state, `get_params(state)` the array. The
    lifted triple applies them leaf by leaf; `update` must keep the state's structure.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_leaves, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_leaves])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_leaves, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    "the parameter tree structure with which it was initialized: parameter tree "
                    f"{tree_util.treedef_repr(tree)} and grad tree "
                    f"{tree_util.treedef_repr(grad_def)}."
                )
            states = _unflatten_each(subtrees, states_flat)
            new_states = [update(i, g, s) for g, s in zip(grad_leaves, states, strict=True)]
            new_flat, new_subtrees = _flatten_each(new_states)
            for before, after in zip(subtrees, new_subtrees, strict=True):
                if after != before:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {tree_util.treedef_repr(before)} "
                        f"and output {tree_util.treedef_repr(after)}."
                    )
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            params = [get_params(s) for s in _unflatten_each(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state: tuple[Any, ...]) -> Any:
    """`get_params` of the optimizers whose state starts with the parameters."""
    return state[0]


@optimizer
def sgd(step_size: float | Schedule) -> Triple:
    """Stochastic gradient descent: `x - step_size(i) * g`."""
    schedule = make_schedule(step_size)

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - schedule(i) * g

    return Optimizer(_identity, update, _identity)


def _identity(x: Any) -> Any:
    return x


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> Triple:
    """Gradient descent with momentum `mass`: the velocity is `mass * v + g`."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - schedule(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> Triple:
    """Nesterov's accelerated gradient: steps along `mass * v + g` with the new velocity."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - schedule(i) * (mass * velocity + g), velocity

    return init, update, _first


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> Triple:
    """Adagrad (Duchi et al., 2011), with momentum on the scaled gradient."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, ...]) -> tuple[Array, Array, Array]:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - schedule(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> Triple:
    """RMSProp: steps scaled by a running average (decay `gamma`) of squared gradients."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - schedule(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return init, update, _first


@optimizer
def rmsprop_momentum(
    step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> Triple:
    """RMSProp with momentum on the scaled step."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, ...]) -> tuple[Array, Array, Array]:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + schedule(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return init, update, _first


def _bias_correction(b: float, like: Array, i: Step) -> Array:
    """`1 - b ** (i + 1)`, with `b` in the moment's dtype."""
    return 1 - jnp.asarray(b, like.dtype) ** (i + 1)


@optimizer
def adam(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> Triple:
    """Adam (Kingma and Ba, 2014): bias-corrected first and second moment estimates."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, ...]) -> tuple[Array, Array, Array]:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / _bias_correction(b1, m, i)
        v_hat = v / _bias_correction(b2, m, i)
        return x - schedule(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> Triple:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, ...]) -> tuple[Array, Array, Array]:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (schedule(i) / _bias_correction(b1, m, i)) * m / (u + eps)
        return x, m, u

    return init, update, _first


def _axes_but(ndim: int, axis: int) -> tuple[int, ...]:
    return tuple(a for a in range(ndim) if a != axis)


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> Triple:
    """SM3 (Anil et al., 2019): one accumulator per axis instead of one per element."""
    schedule = make_schedule(step_size)

    def init(x0: Array) -> tuple[Any, ...]:
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i: Step, g: Array, state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, m, accumulators, shape = state
        # Each axis's accumulator, broadcast along the other axes.
        spread = [
            jnp.expand_dims(v, _axes_but(g.ndim, axis)) for axis, v in enumerate(accumulators)
        ]
        accum = functools.reduce(jnp.minimum, spread) + jnp.square(g)
        inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - schedule(i) * m
        accumulators = [accum.max(_axes_but(x.ndim, axis)) for axis in range(x.ndim)]
        return x, m, accumulators, shape

    def get_params(state: tuple[Any, ...]) -> Array:
        return state[0].reshape(state[3])

    return init, update, get_params


# ---- step size schedules --------------------------------------------------------------------


def constant(step_size: Any) -> Schedule:
    """The same step size at every step."""
    return lambda i: step_size


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """`step_size * decay_rate ** (i / decay_steps)`."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(
    step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False
) -> Schedule:
    """`step_size / (1 + decay_rate * i / decay_steps)`, the ratio floored if `staircase`."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(
    step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0
) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps along a power curve."""

    def schedule(step_num: Any) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """`values[k]` for steps past `k` of the `boundaries` (one fewer than the values).

    Raises:
        ValueError: either is not a sequence, or the lengths do not fit.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as is, or a scalar as a `constant` schedule.

    Raises:
        TypeError: anything else (the message is its type, as JAX's).
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities ------------------------------------------------------------------------------


def l2_norm(tree: Any) -> Array:
    """The l2 norm of all the leaves of `tree` together (for weight decay)."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """`grad_tree` scaled down to l2 norm `max_norm` if its norm is larger."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree
    )


# ---- serialization --------------------------------------------------------------------------


class JoinPoint:
    """A leaf of the parameters' tree holding that leaf's optimizer state (`subtree`), so that
    an `OptimizerState` can be written as one nested pytree."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """`opt_state` as the parameters' tree with a `JoinPoint` (the leaf's state) at each leaf,
    for serializing."""
    states_flat, tree_def, subtree_defs = opt_state
    joins = [JoinPoint(s) for s in _unflatten_each(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, joins)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`: a tree with `JoinPoint` leaves as an
    `OptimizerState`."""
    joins, tree_def = tree_util.tree_flatten(marked_pytree)
    assert all(isinstance(j, JoinPoint) for j in joins)
    states_flat, subtree_defs = _flatten_each([j.subtree for j in joins])
    return OptimizerState(states_flat, tree_def, subtree_defs)
