"""Batching speed (issue 14): tracing a vmapped MLP, per-example gradients, eager vmap.

Asks: `make_jaxpr(vmap(mlp))` at most 0.5x JAX; per-example gradients `jit(vmap(grad(loss)))`
first call (trace, lower, compile, run) at most 0.8x and its compiled step 1.0x +- 5%; eager
`vmap(f)(xs)` of a 10-op function at most 1.0x. First calls run with Lamina's persistent
compilation cache off, as JAX's is by default, so both sides compile.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

LAYERS, WIDTH, BATCH = 4, 128, 32


def _problem(side: Side) -> tuple[Any, Any, Any, Any]:
    import numpy as np

    jnp = side.api().numpy
    rng = np.random.default_rng(0)
    params = [
        (
            rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / np.sqrt(WIDTH),
            rng.standard_normal(WIDTH, dtype=np.float32) * 0.1,
        )
        for _ in range(LAYERS)
    ]
    xs = rng.standard_normal((BATCH, WIDTH), dtype=np.float32)
    ys = rng.standard_normal((BATCH, WIDTH), dtype=np.float32)

    def mlp(params: Any, x: Any) -> Any:
        for w, b in params:
            x = jnp.tanh(jnp.dot(x, w) + b)
        return x

    def loss(params: Any, x: Any, y: Any) -> Any:
        d = mlp(params, x) - y
        return jnp.sum(d * d)

    return mlp, loss, params, (xs, ys)


@benchmark("vmap.make_jaxpr_vmap_mlp4")
def make_jaxpr_vmap_mlp4(side: Side) -> Timed:
    """make_jaxpr(vmap(mlp)) of a 4-layer tanh MLP over a batch of 32 examples (width 128)."""
    api = side.api()
    mlp, _, params, (xs, _) = _problem(side)

    def trace() -> Any:
        # A new function object each time, so no trace cache answers.
        return api.make_jaxpr(api.vmap(lambda p, x: mlp(p, x), in_axes=(None, 0)))(params, xs)

    return trace


def _without_persistent_cache(side: Side) -> Any:
    if side is Side.LAMINA:
        return side.api().config(jax_enable_compilation_cache=False)
    return contextlib.nullcontext()


@benchmark("vmap.per_example_grads_first_call")
def per_example_grads_first_call(side: Side) -> Timed:
    """jit(vmap(grad(loss), in_axes=(None, 0, 0))) called once on fresh functions."""
    api = side.api()
    _, loss, params, (xs, ys) = _problem(side)
    params, xs, ys = api.device_put((params, xs, ys))
    calls = itertools.count(1)

    def first_call() -> Any:
        # A scale no earlier call used: a new program for every cache, in memory or on disk.
        scale = 1.0 + next(calls) * 1e-6
        with _without_persistent_cache(side):
            g = api.grad(lambda p, x, y: loss(p, x, y) * scale)
            step = api.jit(api.vmap(g, in_axes=(None, 0, 0)))
            return api.block_until_ready(step(params, xs, ys))

    return first_call


@benchmark("vmap.per_example_grads_step")
def per_example_grads_step(side: Side) -> Timed:
    """A compiled per-example-gradients step on device arrays."""
    api = side.api()
    _, loss, params, (xs, ys) = _problem(side)
    params, xs, ys = api.device_put((params, xs, ys))
    step = api.jit(api.vmap(api.grad(loss), in_axes=(None, 0, 0)))
    api.block_until_ready(step(params, xs, ys))
    return lambda: api.block_until_ready(step(params, xs, ys))


@benchmark("vmap.eager_vmap_10op")
def eager_vmap_10op(side: Side) -> Timed:
    """Eager vmap(f)(xs) of a 10-op function over f32[8,64] (no jit)."""
    import numpy as np

    api = side.api()
    jnp = api.numpy

    def f(x: Any) -> Any:
        y = jnp.sin(x) * x
        y = jnp.exp(y) + 1.0
        y = jnp.tanh(y) * jnp.cos(x)
        y = y * y - x
        return jnp.sum(y)

    vf = api.vmap(f)
    xs = api.device_put(np.linspace(-1.0, 1.0, 8 * 64, dtype=np.float32).reshape(8, 64))
    api.block_until_ready(vf(xs))
    return lambda: api.block_until_ready(vf(xs))
