"""API breadth (issue 17): a small CNN's forward pass under jit, Lamina against JAX.

Asks: the compiled forward pass of a CNN built from `lax.conv_general_dilated`, max pooling
through `lax.reduce_window` and a dense layer runs at 1.0 +- 5% of JAX's time (the same
StableHLO, so the same XLA executable, is what makes that hold).
"""

from __future__ import annotations

import itertools
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

BATCH, SIZE, CHANNELS, CLASSES = 32, 28, (1, 16, 32), 10


def cnn_problem(api: Any) -> tuple[Any, Any, Any]:
    """`(forward, params, images)` of a two-conv CNN written once against `api` (jax or lamina)."""
    import numpy as np

    jnp, lax = api.numpy, api.lax
    rng = np.random.default_rng(0)
    convs = [
        rng.standard_normal((3, 3, c_in, c_out), dtype=np.float32) / np.sqrt(9 * c_in)
        for c_in, c_out in itertools.pairwise(CHANNELS)
    ]
    flat = (SIZE // 4) * (SIZE // 4) * CHANNELS[-1]
    params = {
        "convs": convs,
        "biases": [np.zeros(c, np.float32) for c in CHANNELS[1:]],
        "dense": rng.standard_normal((flat, CLASSES), dtype=np.float32) / np.sqrt(flat),
    }
    images = rng.standard_normal((BATCH, SIZE, SIZE, CHANNELS[0]), dtype=np.float32)

    def forward(params: Any, x: Any) -> Any:
        for w, b in zip(params["convs"], params["biases"], strict=True):
            x = lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
            x = jnp.maximum(x + b, 0.0)
            x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = x.reshape(x.shape[0], -1) @ params["dense"]
        return logits - jnp.max(logits, axis=-1, keepdims=True)

    return forward, params, images


@benchmark("breadth.cnn_forward_step")
def cnn_forward_step(side: Side) -> Timed:
    """A compiled jit(forward) call of the CNN (batch 32, 28x28, 16 and 32 channels)."""
    api = side.api()
    forward, params, images = cnn_problem(api)
    params, images = api.device_put((params, images))
    run = api.jit(forward)
    api.block_until_ready(run(params, images))
    return lambda: api.block_until_ready(run(params, images))
