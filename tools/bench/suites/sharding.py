"""Sharded programs on 8 CPU devices (issue 20): data-parallel training steps and dispatch.

Asks: a data-parallel MLP training step under `jit` (parameters replicated, batch split over
'data') runs at 1.0 +- 5% of JAX's time; the same step written with `shard_map` and a `psum` of
the per-device gradients too; a sharded `jit` call of a tiny elementwise function costs at most
1.2x JAX's. The same StableHLO gives the same partitioned executable, so only dispatch differs.

The benchmarks declare `devices=8`: `python -m tools.bench "sharding.*"` sets
`XLA_FLAGS=--xla_force_host_platform_device_count=8` before either side starts the backend.
Every timed call blocks on its result: many multi-device launches with collectives in flight
deadlock XLA:CPU's rendezvous on a 2-core machine (jax.jit too).
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

DEVICES = 8
BATCH, SIZES = 256, (64, 256, 256, 8)
LEARNING_RATE = 1e-2


def _mesh(api: Any) -> tuple[Any, Any, Any]:
    """`(mesh, replicated, batch-split)`: a one-axis 'data' mesh over the first 8 devices."""
    import numpy as np

    sharding = importlib.import_module(f"{api.__name__}.sharding")
    devices = api.devices()
    if len(devices) < DEVICES:
        raise RuntimeError(
            f"{DEVICES} devices needed, {len(devices)} found: run with "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={DEVICES}"
        )
    mesh = sharding.Mesh(np.array(devices[:DEVICES]), ("data",))
    spec = sharding.PartitionSpec
    return mesh, sharding.NamedSharding(mesh, spec()), sharding.NamedSharding(mesh, spec("data"))


def mlp_problem(api: Any) -> tuple[Any, Any, Any, Any]:
    """`(loss, params, inputs, targets)` of a 3-layer MLP regression, written once for both."""
    import numpy as np

    jnp = api.numpy
    rng = np.random.default_rng(0)
    params = [
        (
            rng.standard_normal((m, n), dtype=np.float32) / np.float32(np.sqrt(m)),
            np.zeros(n, np.float32),
        )
        for m, n in itertools.pairwise(SIZES)
    ]
    inputs = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    targets = rng.standard_normal((BATCH, SIZES[-1]), dtype=np.float32)

    def loss(params: Any, x: Any, y: Any) -> Any:
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return jnp.mean((x @ w + b - y) ** 2)

    return loss, params, inputs, targets


def _sgd(api: Any, params: Any, grads: Any) -> Any:
    return api.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def _placed(api: Any) -> tuple[Any, Any, Any, Any, Any]:
    mesh, replicated, split = _mesh(api)
    loss, params, inputs, targets = mlp_problem(api)
    params = api.device_put(params, replicated)
    inputs, targets = api.device_put((inputs, targets), split)
    return mesh, loss, params, inputs, targets


@benchmark("sharding.dp_mlp_step", devices=DEVICES)
def dp_mlp_step(side: Side) -> Timed:
    """A jitted data-parallel SGD step of a 3-layer MLP (batch 256 split over 8 devices)."""
    api = side.api()
    _, loss, params, inputs, targets = _placed(api)

    def train(params: Any, x: Any, y: Any) -> Any:
        return _sgd(api, params, api.grad(loss)(params, x, y))

    step = api.jit(train)
    api.block_until_ready(step(params, inputs, targets))
    return lambda: api.block_until_ready(step(params, inputs, targets))


@benchmark("sharding.shard_map_psum_step", devices=DEVICES)
def shard_map_psum_step(side: Side) -> Timed:
    """The same SGD step in shard_map: per-device gradients, psum'ed over 'data', applied."""
    api = side.api()
    mesh, loss, params, inputs, targets = _placed(api)
    lax, spec = api.lax, importlib.import_module(f"{api.__name__}.sharding").PartitionSpec

    def local_step(params: Any, x: Any, y: Any) -> Any:
        grads = api.grad(loss)(params, x, y)
        grads = api.tree_util.tree_map(lambda g: lax.psum(g, "data") / DEVICES, grads)
        return _sgd(api, params, grads)

    step = api.jit(
        api.shard_map(
            local_step,
            mesh=mesh,
            in_specs=(spec(), spec("data"), spec("data")),
            out_specs=spec(),
            check_vma=False,
        )
    )
    api.block_until_ready(step(params, inputs, targets))
    return lambda: api.block_until_ready(step(params, inputs, targets))


@benchmark("sharding.jit_dispatch", devices=DEVICES)
def jit_dispatch(side: Side) -> Timed:
    """A jitted x * y + 1 on two f32[8,16] split over 8 devices (sharded call overhead)."""
    import numpy as np

    api = side.api()
    _, _, split = _mesh(api)
    x, y = api.device_put((np.ones((8, 16), np.float32), np.ones((8, 16), np.float32)), split)
    f = api.jit(lambda x, y: x * y + 1)
    f(x, y).block_until_ready()
    return lambda: f(x, y).block_until_ready()
