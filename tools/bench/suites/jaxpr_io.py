"""Jaxprs as text: reading printed jaxprs back (`lamina.jaxpr_io.parse`) and printing them.

Issue 40 asks for parsing at 50,000 equations per second or more on a 10,000-equation jaxpr
(`jaxpr_io.parse_10k`, Lamina only: JAX has no parser). Printing the same program is measured
against JAX's printer (`jaxpr_io.print_10k`: the same equations, though JAX makes the array
constants constvars where Lamina prints them elided, `[...]`).

The program is a stack of small MLP-like blocks, the mix traced programs have: dot_general,
broadcasts, elementwise ops with scalar literals, reductions, comparisons and a `where`,
several-output equations (`top_k`, `split`), an elided array constant per block, a jitted
function called from every block (printed once as a shared `let` jaxpr) and an inline nested
jit every fifth block. Every equation counts, nested ones included (a shared jaxpr once); a
chain of `sin`s at the end pads the count to exactly N. Like a real model's, its blocks repeat
equations of the same params and types, which the parser checks once each (`_jaxpr_seen`).
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark

_SIZES = {"n": (10_000,)}


def count_eqns(jaxpr: Any, seen: set[int] | None = None) -> int:
    """The equations of `jaxpr` and of the jaxprs in its params, each jaxpr counted once."""
    seen = set() if seen is None else seen
    if id(jaxpr) in seen:
        return 0
    seen.add(id(jaxpr))
    total = len(jaxpr.eqns)
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)  # a ClosedJaxpr's jaxpr, or a Jaxpr
                if hasattr(inner, "eqns"):
                    total += count_eqns(inner, seen)
    return total


def program(api: Any, n: int) -> Any:
    """The closed jaxpr (traced with `api`, `lamina` or `jax`) of exactly `n` equations."""
    import numpy as np

    jnp, lax = api.numpy, api.lax

    def layer_norm(h: Any) -> Any:
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(h - mean), axis=-1, keepdims=True)
        return (h - mean) * lax.rsqrt(var + 1e-5)

    norm = api.jit(layer_norm)

    def block(x: Any, w: Any, b: Any, i: int) -> Any:
        scale = np.linspace(0.5, 1.5, 16, dtype=np.float32) + np.float32(i)
        h = jnp.tanh(x @ w + b) * 0.5
        h = jnp.where(h > 0.0, h, 0.01 * h) * scale
        top, idx = lax.top_k(h, 2)
        left, right = jnp.split(h, 2, axis=1)
        h = jnp.concatenate([right, left], axis=1) + top[:, :1] + idx[:, 1:].astype(jnp.float32)
        h = norm(h)
        if i % 5 == 0:
            h = api.jit(lambda a: jnp.exp(-a * a) + 1.0)(h)
        p = jnp.exp(h - jnp.max(h, axis=1, keepdims=True))
        h = p / jnp.sum(p, axis=1, keepdims=True)
        return h.T.reshape(8, 16) if i % 3 == 0 else h

    def trace(blocks: int, pad: int) -> Any:
        def f(x: Any, w: Any, b: Any) -> Any:
            for i in range(blocks):
                x = block(x, w, b, i)
            for _ in range(pad):
                x = lax.sin(x)
            return x, jnp.argmax(x, axis=1)

        x = np.ones((8, 16), np.float32)
        w = np.ones((16, 16), np.float32)
        return api.make_jaxpr(f)(x, w, np.ones(16, np.float32))

    per_block = count_eqns(trace(10, 0).jaxpr) / 10
    blocks = max(0, int((n - per_block) / per_block))
    made = count_eqns(trace(blocks, 0).jaxpr)
    if made > n:
        raise ValueError(f"{blocks} blocks make {made} equations, more than n={n}")
    closed = trace(blocks, n - made)
    count = count_eqns(closed.jaxpr)
    if count != n:
        raise AssertionError(f"the program has {count} equations, not {n}")
    return closed


@benchmark("jaxpr_io.parse_10k", params=_SIZES, unit="eqn", unit_count="n", lamina_only=True)
def parse_10k(side: Side, n: int) -> Timed:
    """parse(text, consts) of a printed N-equation jaxpr of MLP-like blocks."""
    from lamina import jaxpr_io

    closed = program(side.api(), n)
    text, consts = str(closed), jaxpr_io.elided_constants(closed)
    if str(jaxpr_io.parse(text, consts)) != text:
        raise AssertionError("the parsed jaxpr does not print as the text it was read from")
    return lambda: jaxpr_io.parse(text, consts)


@benchmark("jaxpr_io.print_10k", params=_SIZES, unit="eqn", unit_count="n")
def print_10k(side: Side, n: int) -> Timed:
    """str() of the same N-equation jaxpr, Lamina's printer against JAX's."""
    closed = program(side.api(), n)
    return lambda: str(closed)
