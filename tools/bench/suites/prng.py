"""Random numbers (issue 16): a big jitted draw, eager key splitting, tracing an init function.

Asks: `jit(lambda k: random.normal(k, (1_000_000,)))` compiled run time 1.0 +- 5% of JAX's;
eager `random.split(key)` at most 1.5x; `make_jaxpr` of an init function that calls 20
samplers at most 0.5x.
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark


@benchmark("random.jit_normal_1m")
def jit_normal_1m(side: Side) -> Timed:
    """A compiled jit(lambda k: random.normal(k, (1_000_000,))) call."""
    api = side.api()
    draw = api.jit(lambda k: api.random.normal(k, (1_000_000,)))
    key = api.random.key(0)
    api.block_until_ready(draw(key))
    return lambda: api.block_until_ready(draw(key))


@benchmark("random.eager_split")
def eager_split(side: Side) -> Timed:
    """random.split(key) outside jit, on a typed key."""
    api = side.api()
    key = api.random.key(0)
    api.block_until_ready(api.random.split(key))
    return lambda: api.block_until_ready(api.random.split(key))


def _init(api: Any) -> Any:
    """An init function drawing 20 parameters from 20 samplers (the common ones first)."""
    r, jnp = api.random, api.numpy

    def init(key: Any) -> list[Any]:
        keys = r.split(key, 20)
        shape = (16, 16)
        return [
            r.normal(keys[0], shape),
            r.uniform(keys[1], shape, minval=-1.0, maxval=1.0),
            r.truncated_normal(keys[2], -2.0, 2.0, shape),
            r.bernoulli(keys[3], 0.3, shape),
            r.randint(keys[4], shape, 0, 10),
            r.permutation(keys[5], 16),
            r.gumbel(keys[6], shape),
            r.laplace(keys[7], shape),
            r.logistic(keys[8], shape),
            r.exponential(keys[9], shape),
            r.cauchy(keys[10], shape),
            r.rademacher(keys[11], shape),
            r.categorical(keys[12], jnp.zeros((16, 4))),
            r.lognormal(keys[13], 0.5, shape),
            r.pareto(keys[14], 3.0, shape),
            r.weibull_min(keys[15], 1.0, 2.0, shape),
            r.triangular(keys[16], 0.0, 0.5, 1.0, shape),
            r.rayleigh(keys[17], 1.0, shape),
            r.wald(keys[18], 1.0, shape),
            r.double_sided_maxwell(keys[19], 0.0, 1.0, shape),
        ]

    return init


@benchmark("random.make_jaxpr_init20")
def make_jaxpr_init20(side: Side) -> Timed:
    """make_jaxpr of an init function calling 20 samplers on split keys."""
    api = side.api()
    init = _init(api)
    key = api.random.key(0)

    def trace() -> Any:
        # A new function object each time, so no trace cache answers.
        return api.make_jaxpr(lambda k: init(k))(key)

    return trace
