"""Testing helpers for `vmap`: a program batched three ways, compared with JAX and with a loop.

`check_vmap(oracle, program, args, in_axes=..., out_axes=...)` checks that
`make_jaxpr(vmap(f))` prints JAX's text, that evaluating it (by the oracle's evaluator: NumPy
reference or XLA) gives JAX's values, that `vmap(jit(f))` gives the same values, and that the
values equal a Python loop over the mapped axis of `f` applied per example, stacked at
`out_axes`. Like `testing`, it never imports JAX: tests pass the reference modules in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

import lamina_core
from lamina_core.testing._core import jitted as jax_jitted
from lamina_core.trace import check_jaxpr, to_numpy
from lamina_core.transforms import flatten_axes
from lamina_core.tree import tree_util

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def _tol(dtype: np.dtype) -> float:
    if dtype.kind in "biu":
        return 0.0
    return 2e-2 if dtype.itemsize <= 2 else 2e-5


def _close(got: Any, want: Any, what: str) -> None:
    g = np.asarray(to_numpy(got))
    w = np.asarray(want)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
    t = _tol(w.dtype)
    if g.dtype == bool or t == 0.0:
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=t, atol=t, err_msg=what)


def _axes_leaves(axes: Any, tree: Any) -> list[Any]:
    return flatten_axes("axes", tree_util.tree_structure(tree), axes)


def _sliced_leaves(
    args: Sequence[Any], in_axes: Any, i: int, asarray: Callable[[Any], Any] = np.asarray
) -> tuple[Any, ...]:
    """`args` with each mapped array leaf replaced by its slice `i` along its `in_axes` axis
    (made an array of a library by `asarray`); unmapped leaves as they are."""
    leaves, tree = tree_util.tree_flatten(tuple(args))
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    dims = _axes_leaves(in_axes, tuple(args))
    sliced = [
        x if d is None else asarray(np.take(np.asarray(x), i, axis=d))
        for x, d in zip(leaves, dims, strict=True)
    ]
    return tuple(tree_util.tree_unflatten(tree, sliced))


def _stack(per_example: Sequence[Any], out_axes: Any) -> list[Any]:
    """The outputs of a loop over examples, each leaf stacked along its `out_axes` axis."""
    out_dims = _axes_leaves(out_axes, per_example[0])
    columns = [tree_util.tree_leaves(o) for o in per_example]
    stacked = []
    for j, d in enumerate(out_dims):
        values = [np.asarray(to_numpy(col[j])) for col in columns]
        stacked.append(values[0] if d is None else np.stack(values, axis=d))
    return stacked


def check_vmap(
    oracle: Any,
    program: Program,
    *args: Any,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    axis_name: Any = None,
    printed: bool = True,
    loop: bool = True,
    jitted: bool = True,
) -> lamina_core.ClosedJaxpr:
    """`vmap(program)` against JAX (text and values) and against a per-example loop."""
    ours_f = program(lamina_core.numpy, lamina_core.lax)
    theirs_f = program(oracle.jnp, oracle.lax)
    kw = {"in_axes": in_axes, "out_axes": out_axes, "axis_size": axis_size}
    if axis_name is not None:
        kw["axis_name"] = axis_name
    ours: lamina_core.ClosedJaxpr = lamina_core.make_jaxpr(lamina_core.vmap(ours_f, **kw))(*args)
    theirs = oracle.jax.make_jaxpr(oracle.jax.vmap(theirs_f, **kw))(*args)
    if printed:
        assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    check_jaxpr(ours)
    got = oracle.evaluate(ours, tree_util.tree_leaves(args))
    batched = oracle.jax.vmap(theirs_f, **kw)
    want = oracle.jax.tree_util.tree_leaves(jax_jitted(oracle.jax, batched, args)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        _close(g, w, "vmap vs jax")
    if jitted:
        ours_j = lamina_core.make_jaxpr(lamina_core.vmap(lamina_core.jit(ours_f), **kw))(*args)
        check_jaxpr(ours_j)
        got_j = oracle.evaluate(ours_j, tree_util.tree_leaves(args))
        for g, w in zip(got_j, want, strict=True):
            _close(g, w, "vmap(jit) vs jax")
    if loop and axis_name is None:
        size = axis_size if axis_size is not None else _size(args, in_axes)
        # The examples: slices along `in_axes` made arrays of JAX, so that operators on them
        # are JAX's where JAX's side runs eagerly. One compilation serves every example (in
        # one program with the vmap, the unrolled loop of a large function compiles longer).
        examples = [_sliced_leaves(args, in_axes, i, oracle.jnp.asarray) for i in range(size)]
        per_example = jax_jitted(oracle.jax, theirs_f, examples[0])
        expected = _stack([per_example(*e) for e in examples], out_axes)
        for g, w in zip(got, expected, strict=True):
            _close(g, w, "vmap vs loop")
    return ours


def _size(args: Sequence[Any], in_axes: Any) -> int:
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    leaves = tree_util.tree_leaves(tuple(args))
    for x, d in zip(leaves, _axes_leaves(in_axes, tuple(args)), strict=True):
        if d is not None:
            return int(np.shape(x)[d])
    raise ValueError("no mapped argument: pass axis_size")


__all__ = ["check_vmap"]
