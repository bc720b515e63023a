"""API breadth (issue 17): a small CNN's forward pass under jit, Lamina against JAX.

Asks: the compiled forward pass of a CNN built from `lax.conv_general_dilated`, max pooling
through `lax.reduce_window` and a dense layer runs at 1.0 +- 5% of JAX's time (the same
StableHLO, so the same XLA executable, is what makes that hold).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
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


EAGER_CALLS: dict[str, Callable[[Any, Any], object]] = {
    "sinc": lambda jnp, x: jnp.sinc(x),
    "convolve": lambda jnp, x: jnp.convolve(x, x[:5]),
    "correlate": lambda jnp, x: jnp.correlate(x, x[:5]),
    "pad": lambda jnp, x: jnp.pad(x, (2, 3)),
    "pad_reflect": lambda jnp, x: jnp.pad(x, (2, 3), mode="reflect"),
    "histogram": lambda jnp, x: jnp.histogram(x, bins=10)[0],
    "searchsorted": lambda jnp, x: jnp.searchsorted(x, x[:7]),
    "det": lambda jnp, x: jnp.linalg.det(x[:16].reshape(4, 4)),
    "inv": lambda jnp, x: jnp.linalg.inv(x[:16].reshape(4, 4)),
    "fft": lambda jnp, x: jnp.fft.fft(x),
    "select": lambda jnp, x: jnp.select([x > 0, x < -1], [x, -x], 7.0),
    "interp": lambda jnp, x: jnp.interp(x, x[::2], x[::2] * 2),
    "polyval": lambda jnp, x: jnp.polyval(x[:4], x),
    "tril": lambda jnp, x: jnp.tril(x[:16].reshape(4, 4)),
    "nan_to_num": lambda jnp, x: jnp.nan_to_num(x),
    "isclose": lambda jnp, x: jnp.isclose(x, x),
    "diff": lambda jnp, x: jnp.diff(x),
    "cumsum": lambda jnp, x: jnp.cumsum(x),
    "unique_size": lambda jnp, x: jnp.unique(x, size=8),
    "nansum": lambda jnp, x: jnp.nansum(x),
    "nanmean": lambda jnp, x: jnp.nanmean(x),
    "nanmax": lambda jnp, x: jnp.nanmax(x),
    "nanmin": lambda jnp, x: jnp.nanmin(x),
    "nanstd": lambda jnp, x: jnp.nanstd(x),
    "nanvar": lambda jnp, x: jnp.nanvar(x),
    "nanprod": lambda jnp, x: jnp.nanprod(x),
    "nanargmax": lambda jnp, x: jnp.nanargmax(x),
    "nancumsum": lambda jnp, x: jnp.nancumsum(x),
    "ptp": lambda jnp, x: jnp.ptp(x),
    "median": lambda jnp, x: jnp.median(x),
    "nanmedian": lambda jnp, x: jnp.nanmedian(x),
    "percentile": lambda jnp, x: jnp.percentile(x, 30.0),
    "quantile": lambda jnp, x: jnp.quantile(x, 0.3),
    "nanquantile": lambda jnp, x: jnp.nanquantile(x, 0.3),
    "cross": lambda jnp, x: jnp.cross(x[:99].reshape(33, 3), x[1:].reshape(33, 3)),
    "trace": lambda jnp, x: jnp.trace(x.reshape(10, 10)),
    "fmax": lambda jnp, x: jnp.fmax(x, x[::-1]),
    "fmin": lambda jnp, x: jnp.fmin(x, x[::-1]),
    "cov": lambda jnp, x: jnp.cov(x.reshape(4, 25)),
    "corrcoef": lambda jnp, x: jnp.corrcoef(x.reshape(4, 25)),
    "average": lambda jnp, x: jnp.average(x, weights=x[::-1]),
    "ldexp": lambda jnp, x: jnp.ldexp(x, 3),
    "frexp": lambda jnp, x: jnp.frexp(x)[0],
    "modf": lambda jnp, x: jnp.modf(x)[0],
    "append": lambda jnp, x: jnp.append(x, x),
    "ediff1d": lambda jnp, x: jnp.ediff1d(x),
    "iscomplex": lambda jnp, x: jnp.iscomplex(x),
    "argpartition": lambda jnp, x: jnp.argpartition(x, 10),
    "partition": lambda jnp, x: jnp.partition(x, 10),
    "bitwise_count": lambda jnp, x: jnp.bitwise_count(x.astype("int32")),
    "gradient": lambda jnp, x: jnp.gradient(x),
    "lexsort": lambda jnp, x: jnp.lexsort((x, x[::-1])),
    "matvec": lambda jnp, x: jnp.matvec(x.reshape(10, 10), x[:10]),
    "vecmat": lambda jnp, x: jnp.vecmat(x[:10], x.reshape(10, 10)),
    "packbits": lambda jnp, x: jnp.packbits(x > 0),
    "unpackbits": lambda jnp, x: jnp.unpackbits(x.astype("uint8")),
    "sort_complex": lambda jnp, x: jnp.sort_complex(x),
    "unwrap": lambda jnp, x: jnp.unwrap(x * 4),
    "poly": lambda jnp, x: jnp.poly(x[:8]),
    "polyadd": lambda jnp, x: jnp.polyadd(x, x[:10]),
    "polysub": lambda jnp, x: jnp.polysub(x, x[:10]),
    "polyder": lambda jnp, x: jnp.polyder(x, 2),
    "polyint": lambda jnp, x: jnp.polyint(x, 2),
    "trapezoid": lambda jnp, x: jnp.trapezoid(x),
    "vander": lambda jnp, x: jnp.vander(x[:10]),
    "diag": lambda jnp, x: jnp.diag(x[:10]),
}


@benchmark("breadth.eager_call", params={"function": tuple(EAGER_CALLS)})
def eager_call(side: Side, function: str) -> Timed:
    """One eager (un-jitted) call of a `jnp` function on a device array of 100 float32s:
    JAX jits most of them, so a repeated call is one C++ dispatch of a cached executable."""
    import numpy as np

    api = side.api()
    x = api.numpy.asarray(np.linspace(-3.0, 3.0, 100, dtype=np.float32))
    call, jnp = EAGER_CALLS[function], api.numpy
    api.block_until_ready(call(jnp, x))
    return lambda: api.block_until_ready(call(jnp, x))
