"""Control-flow speed (issue 15): tracing a long scan body, and a 1,000-step RNN under jit.

Asks: `make_jaxpr` of a scan whose body has 50 operations at most 0.5x JAX; the RNN
`jit(scan)` first call (trace, lower, compile, run) and its compiled step; `jit(grad(loss))`
of the same RNN's compiled step. First calls run with Lamina's persistent compilation cache
off, as JAX's is by default, so both sides compile.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

BODY_OPS = 50
STEPS, HIDDEN, INPUT = 1000, 64, 16


def _without_persistent_cache(side: Side) -> Any:
    if side is Side.LAMINA:
        return side.api().config(jax_enable_compilation_cache=False)
    return contextlib.nullcontext()


@benchmark("control_flow.make_jaxpr_scan_50op")
def make_jaxpr_scan_50op(side: Side) -> Timed:
    """make_jaxpr of a scan over 100 steps whose body is 50 elementwise operations."""
    import numpy as np

    api = side.api()
    jnp = api.numpy
    xs = np.linspace(-1.0, 1.0, 100 * 8, dtype=np.float32).reshape(100, 8)
    init = np.zeros(8, np.float32)

    def body(c: Any, x: Any) -> tuple[Any, Any]:
        # 5 rounds of 10 operations: 50 equations in the body.
        y = x
        for _ in range(BODY_OPS // 10):
            y = jnp.sin(c) * x
            y = jnp.exp(y) + 1.0
            y = jnp.tanh(y) * jnp.cos(x)
            y = y * y - x
            c = jnp.maximum(y, c)
        return c, y

    def trace() -> Any:
        # A new function object each time, so no trace cache answers.
        return api.make_jaxpr(lambda c, xs: api.lax.scan(lambda c, x: body(c, x), c, xs))(init, xs)

    return trace


def _rnn_problem(side: Side) -> tuple[Any, Any, Any, Any]:
    import numpy as np

    api = side.api()
    jnp = api.numpy
    rng = np.random.default_rng(0)
    params = {
        "w_h": rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32) / np.sqrt(HIDDEN),
        "w_x": rng.standard_normal((INPUT, HIDDEN), dtype=np.float32) / np.sqrt(INPUT),
        "b": np.zeros(HIDDEN, np.float32),
    }
    xs = rng.standard_normal((STEPS, INPUT), dtype=np.float32)
    h0 = np.zeros(HIDDEN, np.float32)

    def rnn(params: Any, h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = jnp.tanh(jnp.dot(h, params["w_h"]) + jnp.dot(x, params["w_x"]) + params["b"])
            return h, jnp.sum(h)

        return api.lax.scan(step, h0, xs)

    def loss(params: Any, h0: Any, xs: Any) -> Any:
        h, ys = rnn(params, h0, xs)
        return jnp.sum(h * h) + jnp.mean(ys)

    params, xs, h0 = api.device_put((params, xs, h0))
    return rnn, loss, params, (h0, xs)


@benchmark("control_flow.rnn1000_first_call")
def rnn1000_first_call(side: Side) -> Timed:
    """jit(rnn) (a 1,000-step scan, hidden 64) called once on fresh functions."""
    api = side.api()
    rnn, _, params, (h0, xs) = _rnn_problem(side)
    calls = itertools.count(1)

    def first_call() -> Any:
        # A scale no earlier call used: a new program for every cache, in memory or on disk.
        scale = 1.0 + next(calls) * 1e-6
        with _without_persistent_cache(side):
            run = api.jit(lambda p, h, x: rnn(p, h * scale, x))
            return api.block_until_ready(run(params, h0, xs))

    return first_call


@benchmark("control_flow.rnn1000_step")
def rnn1000_step(side: Side) -> Timed:
    """A compiled jit(rnn) call (a 1,000-step scan, hidden 64) on device arrays."""
    api = side.api()
    rnn, _, params, (h0, xs) = _rnn_problem(side)
    run = api.jit(rnn)
    api.block_until_ready(run(params, h0, xs))
    return lambda: api.block_until_ready(run(params, h0, xs))


@benchmark("control_flow.rnn1000_grad_step")
def rnn1000_grad_step(side: Side) -> Timed:
    """A compiled jit(grad(loss)) call through the 1,000-step RNN on device arrays."""
    api = side.api()
    _, loss, params, (h0, xs) = _rnn_problem(side)
    step = api.jit(api.grad(loss))
    api.block_until_ready(step(params, h0, xs))
    return lambda: api.block_until_ready(step(params, h0, xs))
