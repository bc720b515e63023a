"""The control-flow functions against JAX: printed jaxprs, the NumPy reference's values, the
type checker, and JAX's errors for bad bodies and arguments.

Each program is written once for both libraries (`program(jnp, lax)`); `Oracle.check` asserts
the printed jaxpr is JAX's byte for byte, that it type-checks, and that it evaluates to JAX's
numbers (with `--lamina-execute=xla-jit` the same programs run on XLA).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle

pytestmark = pytest.mark.oracle

F32 = np.float32


def _x(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


Case = tuple[Callable[[ModuleType, ModuleType], Callable[..., Any]], tuple[Any, ...]]

CASES: dict[str, Case] = {
    # --- cond and switch ---
    "cond_scalar": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda a: a + 1.0, lambda a: a * 2.0, x),
        (F32(1.5),),
    ),
    "cond_false_branch": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x),
        (F32(-0.5),),
    ),
    "cond_python_pred": (
        lambda jnp, lax: lambda x: lax.cond(True, lambda a: a + 1.0, lambda a: a * 2.0, x),
        (F32(1.0),),
    ),
    "cond_numeric_pred": (
        lambda jnp, lax: lambda p, x: lax.cond(p, lambda a: a + 1.0, lambda a: a * 2.0, x),
        (F32(0.0), F32(3.0)),
    ),
    "cond_int_pred": (
        lambda jnp, lax: lambda p, x: lax.cond(p, lambda a: a - 1, lambda a: a + 1, x),
        (np.int32(3), np.int32(7)),
    ),
    "cond_pytree": (
        lambda jnp, lax: (
            lambda x, y: lax.cond(
                x.sum() > 0,
                lambda t: {"a": t[0] * 2.0, "b": t[1]},
                lambda t: {"a": t[0], "b": t[1] - 1.0},
                (x, y),
            )
        ),
        (_x(3), _x(2, 2, seed=1)),
    ),
    "cond_no_operands": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda: jnp.ones(3), lambda: jnp.zeros(3)),
        (F32(1.0),),
    ),
    "cond_closure": (
        lambda jnp, lax: lambda x, y: lax.cond(x > 0, lambda a: a * y, lambda a: a + y, x),
        (F32(2.0), F32(3.0)),
    ),
    "cond_closure_both_forward": (
        lambda jnp, lax: lambda x, y: lax.cond(x > 0, lambda a: (a, y), lambda a: (a, y * 2), x),
        (F32(1.0), F32(2.0)),
    ),
    "cond_const_array": (
        lambda jnp, lax: (
            lambda x: lax.cond(x[0] > 0, lambda: x + np.arange(4, dtype=F32), lambda: x - 1.0)
        ),
        (_x(4),),
    ),
    "cond_nested": (
        lambda jnp, lax: (
            lambda x: lax.cond(
                x > 0,
                lambda a: lax.cond(a > 1, jnp.sin, jnp.cos, a),
                lambda a: -a,
                x,
            )
        ),
        (F32(2.0),),
    ),
    "cond_multiple_operands": (
        lambda jnp, lax: lambda x, y: lax.cond(x > y, lambda a, b: a - b, lambda a, b: b - a, x, y),
        (F32(1.0), F32(4.0)),
    ),
    "cond_operand_keyword": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, jnp.exp, jnp.negative, operand=x),
        (F32(0.3),),
    ),
    "cond_old_form": (
        lambda jnp, lax: lambda x, y: lax.cond(x > 0, x, lambda a: a * 2.0, y, lambda b: b + 1.0),
        (F32(1.0), F32(5.0)),
    ),
    "cond_weak_outputs": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda: 1.0, lambda: 2.0),
        (F32(1.0),),
    ),
    "switch_three": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x),
        (np.int32(1), _x(3)),
    ),
    "switch_clamped_high": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [lambda a: a + 1.0, lambda a: a * 3.0], x),
        (np.int32(7), F32(2.0)),
    ),
    "switch_clamped_low": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [lambda a: a + 1.0, lambda a: a * 3.0], x),
        (np.int32(-4), F32(2.0)),
    ),
    "switch_same_function_twice": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.sin], x),
        (np.int32(2), F32(0.5)),
    ),
    "switch_one_branch": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin], x),
        (np.int32(0), F32(0.5)),
    ),
    "switch_uint8_index": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x),
        (np.uint8(1), F32(0.5)),
    ),
    # --- while_loop and fori_loop ---
    "while_simple": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x),
        (F32(1.0),),
    ),
    "while_pytree": (
        lambda jnp, lax: (
            lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))
        ),
        (_x(3),),
    ),
    "while_closure": (
        lambda jnp, lax: lambda x, k: lax.while_loop(lambda c: c < k, lambda c: c + k / 4, x),
        (F32(0.0), F32(2.0)),
    ),
    "while_forwarded_carry_to_const": (
        lambda jnp, lax: (
            lambda x, y: lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + c[1], c[1]), (x, y))
        ),
        (F32(0.0), F32(1.0)),
    ),
    "while_weak_init": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: c < 4.0, lambda c: c + x, 0.0),
        (F32(1.0),),
    ),
    "fori_static": (
        lambda jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x),
        (F32(1.0),),
    ),
    "fori_static_uses_index": (
        lambda jnp, lax: lambda x: lax.fori_loop(1, 5, lambda i, c: c + i, x),
        (F32(0.5),),
    ),
    "fori_dynamic": (
        lambda jnp, lax: lambda x, n: lax.fori_loop(0, n, lambda i, c: c + 1.0, x),
        (F32(0.0), np.int32(4)),
    ),
    "fori_empty": (
        lambda jnp, lax: lambda x: lax.fori_loop(3, 1, lambda i, c: c + 1.0, x),
        (F32(0.0),),
    ),
    "fori_unroll": (
        lambda jnp, lax: lambda x: lax.fori_loop(0, 4, lambda i, c: c * 1.5, x, unroll=2),
        (F32(1.0),),
    ),
    "fori_pytree": (
        lambda jnp, lax: (
            lambda x: lax.fori_loop(
                0, 3, lambda i, c: {"s": c["s"] + c["v"].sum(), "v": c["v"] * 2}, {"s": 0.0, "v": x}
            )
        ),
        (_x(3),),
    ),
    # --- scan and map ---
    "scan_cumsum": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs),
        (_x(5),),
    ),
    "scan_reverse": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c * x, c), 1.0, xs, reverse=True),
        (_x(4),),
    ),
    "scan_unroll_2": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, x * c), F32(0.0), xs, unroll=2),
        (_x(5),),
    ),
    "scan_unroll_true": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c), F32(0.0), xs, unroll=True),
        (_x(3),),
    ),
    "scan_xs_none": (
        lambda jnp, lax: lambda c0: lax.scan(lambda c, _: (c * 2, c), c0, None, length=4),
        (F32(1.0),),
    ),
    "scan_pytree": (
        lambda jnp, lax: (
            lambda a, b: lax.scan(
                lambda c, x: ((c[0] + x["u"], c[1] * 2), {"o": x["v"] * c[0]}),
                (F32(0.0), np.int32(1)),
                {"u": a, "v": b},
            )
        ),
        (_x(4), _x(4, 2, seed=1)),
    ),
    "scan_consts": (
        lambda jnp, lax: lambda xs, w: lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c), xs[0], xs),
        (_x(4, 3), _x(3, 3, seed=2)),
    ),
    "scan_forwarded_xs": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, x), F32(0.0), xs),
        (_x(4),),
    ),
    "scan_forwarded_carry": (
        lambda jnp, lax: (
            lambda xs, k: lax.scan(lambda c, x: ((c[0] + x * c[1], c[1]), c[0]), (F32(0.0), k), xs)
        ),
        (_x(4), F32(2.0)),
    ),
    "scan_no_ys": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, None), F32(0.0), xs),
        (_x(4),),
    ),
    "scan_nested": (
        lambda jnp, lax: (
            lambda xs: lax.scan(
                lambda c, row: (c + lax.scan(lambda d, y: (d + y, d), 0.0, row)[0], c), 0.0, xs
            )
        ),
        (_x(3, 4),),
    ),
    "scan_cond_inside": (
        lambda jnp, lax: (
            lambda xs: lax.scan(
                lambda c, x: (lax.cond(x > 0, lambda a: a + x, lambda a: a - x, c), c), F32(0.0), xs
            )
        ),
        (_x(5),),
    ),
    "scan_seed_func11": (
        lambda jnp, lax: (
            lambda arr, extra: lax.scan(
                lambda c, ae: (c + ae[0] * ae[1] + extra, c), 0.0, (arr, jnp.ones(arr.shape))
            )
        ),
        (_x(6), F32(5.0)),
    ),
    # --- jnp functions JAX builds on control flow ---
    "jnp_gcd": (
        lambda jnp, lax: jnp.gcd,
        (np.array([12, 18, 24, 0, -9], np.int32), np.array([5, 10, 15, 4, 6], np.int32)),
    ),
    "jnp_lcm_broadcast": (
        lambda jnp, lax: jnp.lcm,
        (np.int32(12), np.array([6, 9, 0], np.int32)),
    ),
    "jnp_polyval": (
        lambda jnp, lax: jnp.polyval,
        (np.array([1.0, -2.0, 3.0], F32), _x(4)),
    ),
    "jnp_polyval_unroll": (
        lambda jnp, lax: lambda c, x: jnp.polyval(c, x, unroll=2),
        (_x(5, 3), _x(3, seed=1)),
    ),
    "map_simple": (lambda jnp, lax: lambda xs: lax.map(jnp.sin, xs), (_x(4, 2),)),
    "map_pytree": (
        lambda jnp, lax: lambda a, b: lax.map(lambda t: t[0] * t[1].sum(), (a, b)),
        (_x(3), _x(3, 2, seed=1)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_program(oracle: Oracle, name: str) -> None:
    program, args = CASES[name]
    oracle.check(program, *args)


def test_jit_of_scan_prints_as_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def f(xs: Any) -> Any:
            return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)

        return lambda xs: oracle_jit(jnp, f)(xs)

    def oracle_jit(jnp: ModuleType, f: Callable[..., Any]) -> Callable[..., Any]:
        jit = lamina_core.jit if jnp is lamina_core.numpy else oracle.jax.jit
        return jit(f)  # type: ignore[no-any-return]

    oracle.check(program, _x(4))


# --- errors ------------------------------------------------------------------------------------


def _normalise(message: str) -> str:
    """Source locations differ between the two libraries' lambdas; compare the rest."""
    message = re.sub(r"<lambda> at \S+:\d+", "<lambda> at FILE", message)
    return message.replace("jax._src.core.ShapedArray", "lamina_core.ir._avals.ShapedArray")


ERROR_CASES: dict[
    str, tuple[Callable[[ModuleType, ModuleType], Callable[..., Any]], tuple[Any, ...]]
] = {
    "cond_dtype_mismatch": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda: 1.0, lambda: 2),
        (F32(1.0),),
    ),
    "cond_shape_mismatch": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda: jnp.ones(2), lambda: jnp.ones(3)),
        (F32(1.0),),
    ),
    "cond_structure_mismatch": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda a: (a, a), lambda a: a, x),
        (F32(1.0),),
    ),
    "cond_nonscalar_pred": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, lambda a: a, lambda a: a, x),
        (_x(3),),
    ),
    "cond_not_callable": (
        lambda jnp, lax: lambda x: lax.cond(x > 0, 1.0, lambda a: a, x),
        (F32(1.0),),
    ),
    "switch_float_index": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x),
        (F32(1.0), F32(0.5)),
    ),
    "switch_nonscalar_index": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x),
        (np.zeros(2, np.int32), F32(0.5)),
    ),
    "switch_empty": (
        lambda jnp, lax: lambda i, x: lax.switch(i, [], x),
        (np.int32(0), F32(0.5)),
    ),
    "while_nonbool_pred": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: c, lambda c: c - 1.0, x),
        (F32(3.0),),
    ),
    "while_pytree_pred": (
        lambda jnp, lax: lambda x: lax.while_loop(lambda c: (c < 1.0, c < 2.0), lambda c: c, x),
        (F32(3.0),),
    ),
    "while_carry_dtype_change": (
        lambda jnp, lax: (
            lambda x: lax.while_loop(lambda c: c < 3, lambda c: c.astype(jnp.float32), x)
        ),
        (np.int32(0),),
    ),
    "scan_carry_shape_change": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (jnp.stack([c, x]), x), F32(0.0), xs),
        (_x(3),),
    ),
    "scan_carry_structure_change": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: ((c, c), x), F32(0.0), xs),
        (_x(3),),
    ),
    "scan_length_disagrees": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c, x), F32(0.0), xs, length=5),
        (_x(3),),
    ),
    "scan_lengths_differ": (
        lambda jnp, lax: lambda a, b: lax.scan(lambda c, x: (c, x), F32(0.0), (a, b)),
        (_x(3), _x(4)),
    ),
    "scan_no_length": (
        lambda jnp, lax: lambda c0: lax.scan(lambda c, x: (c, c), c0, None),
        (F32(0.0),),
    ),
    "scan_body_not_pair": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: c + x, F32(0.0), xs),
        (_x(3),),
    ),
    "scan_negative_unroll": (
        lambda jnp, lax: lambda xs: lax.scan(lambda c, x: (c, x), F32(0.0), xs, unroll=-1),
        (_x(3),),
    ),
    "fori_mismatched_bounds": (
        lambda jnp, lax: lambda n: lax.fori_loop(np.int16(0), n, lambda i, c: c, 1.0),
        (np.int32(3),),
    ),
    "fori_dynamic_unroll": (
        lambda jnp, lax: lambda n: lax.fori_loop(0, n, lambda i, c: c, 1.0, unroll=2),
        (np.int32(3),),
    ),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_as_jax(oracle: Oracle, name: str) -> None:
    program, args = ERROR_CASES[name]
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(Exception) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert _normalise(str(ours.value)) == _normalise(str(theirs.value))


def test_branch_jaxprs_are_shared_when_the_function_repeats() -> None:
    jnp = lamina_core.numpy
    closed = lamina_core.make_jaxpr(
        lambda i, x: lamina_core.lax.switch(i, [jnp.sin, jnp.cos, jnp.sin], x)
    )(np.int32(0), F32(1.0))
    branches = closed.jaxpr.eqns[-1].params["branches"]
    assert branches[0] is branches[2]
    assert branches[0] is not branches[1]


def test_reference_evaluator_runs_a_while_to_completion() -> None:
    closed = lamina_core.make_jaxpr(
        lambda x: lamina_core.lax.while_loop(lambda c: c < 100.0, lambda c: c * 3.0, x)
    )(F32(1.0))
    (out,) = lamina_core.eval_jaxpr(closed.jaxpr, closed.consts, F32(1.0))
    assert float(np.asarray(out)) == 243.0
