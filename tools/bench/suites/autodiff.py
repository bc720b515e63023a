"""Autodiff speed (issue 13): tracing, compiling and running gradients of an MLP, and eager grad.

Asks: `make_jaxpr(grad(mlp))` of a 4-layer MLP at most 0.5x JAX; `jit(grad(mlp))` first call
(trace, lower, compile, run) at most 0.8x; its compiled step 1.0x +- 5%; eager `grad(f)(x)` of
a 10-op function at most 1.0x. First calls run with Lamina's persistent compilation cache off,
as JAX's is by default, so both sides compile.
"""

from __future__ import annotations

import itertools
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

LAYERS, WIDTH, BATCH = 4, 256, 32


def _mlp_problem(side: Side) -> tuple[Any, Any, Any]:
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
    x = rng.standard_normal((BATCH, WIDTH), dtype=np.float32)

    def loss(params: Any, x: Any) -> Any:
        for w, b in params:
            x = jnp.tanh(jnp.dot(x, w) + b)
        return jnp.sum(x * x)

    return loss, params, x


@benchmark("autodiff.make_jaxpr_grad_mlp4")
def make_jaxpr_grad_mlp4(side: Side) -> Timed:
    """make_jaxpr(grad(loss)) of a 4-layer tanh MLP (width 256, batch 32)."""
    api = side.api()
    loss, params, x = _mlp_problem(side)

    def trace() -> Any:
        # A new function object each time, so no trace cache answers.
        return api.make_jaxpr(api.grad(lambda p, x: loss(p, x)))(params, x)

    return trace


def _without_persistent_cache(side: Side) -> Any:
    import contextlib

    if side is Side.LAMINA:
        return side.api().config(jax_enable_compilation_cache=False)
    return contextlib.nullcontext()


@benchmark("autodiff.jit_grad_mlp4_first_call")
def jit_grad_mlp4_first_call(side: Side) -> Timed:
    """jit(grad(loss)) called once on fresh functions: trace, lower, compile and run."""
    api = side.api()
    loss, params, x = _mlp_problem(side)
    params = api.device_put(params)
    x = api.device_put(x)

    calls = itertools.count(1)

    def first_call() -> Any:
        # A scale no earlier call used: a new program for every cache, in memory or on disk.
        scale = 1.0 + next(calls) * 1e-6
        with _without_persistent_cache(side):
            step = api.jit(api.grad(lambda p, x: loss(p, x) * scale))
            return api.block_until_ready(step(params, x))

    return first_call


@benchmark("autodiff.jit_grad_mlp4_step")
def jit_grad_mlp4_step(side: Side) -> Timed:
    """A compiled jit(grad(loss)) step on device arrays."""
    api = side.api()
    loss, params, x = _mlp_problem(side)
    params = api.device_put(params)
    x = api.device_put(x)
    step = api.jit(api.grad(loss))
    api.block_until_ready(step(params, x))
    return lambda: api.block_until_ready(step(params, x))


@benchmark("autodiff.eager_grad_10op")
def eager_grad_10op(side: Side) -> Timed:
    """Eager grad(f)(x) of a 10-op elementwise function on f32[64] (no jit)."""
    import numpy as np

    api = side.api()
    jnp = api.numpy

    def f(x: Any) -> Any:
        y = jnp.sin(x) * x
        y = jnp.exp(y) + 1.0
        y = jnp.tanh(y) * jnp.cos(x)
        y = y * y - x
        return jnp.sum(y)

    g = api.grad(f)
    x = api.device_put(np.linspace(-1.0, 1.0, 64, dtype=np.float32))
    api.block_until_ready(g(x))
    return lambda: api.block_until_ready(g(x))
