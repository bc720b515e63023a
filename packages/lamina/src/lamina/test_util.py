"""`jax.test_util`: derivatives checked against finite differences, as JAX 0.10.2's checks.

`check_jvp` and `check_vjp` compare a function's forward and reverse derivatives with central
differences along one random direction (NumPy's `RandomState(0)`, so a check is repeatable and
the direction is JAX's); `check_grads` does both up to an order, recursively, as JAX's. The
tolerances are JAX's per-dtype gradient tolerances, scaled by the size of what is compared.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias

import ml_dtypes
import numpy as np

from lamina_core import jvp, linearize, vjp
from lamina_core.config import enable_x64
from lamina_core.ir import dtypes
from lamina_core.tree import tree_util

EPS: Final = 1e-4

Tolerance: TypeAlias = "float | dict[Any, float] | None"

_EXACT: Final = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_NARROW: Final = {  # ml_dtypes' narrow floats: compared in float32
    "float4_e2m1fn": (1e0, 1e0),
    "float8_e3m4": (1e-1, 1e-1),
    "float8_e4m3": (1e-1, 1e-1),
    "float8_e8m0fnu": (1e0, 1e0),
    "float8_e4m3b11fnuz": (1e-1, 1e-1),
    "float8_e4m3fn": (1e-1, 1e-1),
    "float8_e4m3fnuz": (1e-1, 1e-1),
    "float8_e5m2": (1e-1, 1e-1),
    "float8_e5m2fnuz": (1e-1, 1e-1),
    "bfloat16": (1e-2, 1e-1),
}
"""Each narrow float's (value tolerance, gradient tolerance)."""

_narrow = {np.dtype(getattr(ml_dtypes, name)): tols for name, tols in _NARROW.items()}
_intn = [np.dtype(getattr(ml_dtypes, n)) for n in ("int2", "int4", "uint2", "uint4")]

_default_tolerance: dict[np.dtype[Any], float] = {
    np.dtype(dtypes.float0): 0,
    **{np.dtype(n): 0 for n in _EXACT},
    **{d: 0 for d in _intn},
    **{d: tols[0] for d, tols in _narrow.items()},
    np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6,
    np.dtype(np.complex128): 1e-15,
}

default_gradient_tolerance: dict[np.dtype[Any], float] = {
    **{d: tols[1] for d, tols in _narrow.items()},
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}
"""JAX's tolerance of a derivative check, by dtype."""


def _dtype(x: Any) -> np.dtype[Any]:
    found: np.dtype[Any]
    if hasattr(x, "dtype"):
        found = np.dtype(x.dtype)
    elif type(x) in (bool, int, float, complex):
        found = dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x))
    else:
        found = np.asarray(x).dtype
    return found


def _is_python_scalar(x: Any) -> bool:
    return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def _tolerance(dtype: np.dtype[Any], tol: Tolerance) -> float:
    if tol is not None and not isinstance(tol, dict):
        return tol
    given = {np.dtype(k): v for k, v in (tol or {}).items()}
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    return given.get(dtype, _default_tolerance[dtype])


def _assert_close(a: Any, b: Any, atol: Tolerance, rtol: Tolerance, err_msg: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    abs_tol = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol)) * a.size
    rel_tol = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol)) * b.size
    if a.dtype == b.dtype == np.dtype(dtypes.float0):
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    a, b = _comparable(a), _comparable(b)
    given = {"atol": abs_tol} if abs_tol else {}
    if rel_tol:
        given["rtol"] = rel_tol
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, err_msg=err_msg, **given)


def _comparable(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    if x.dtype in _narrow:
        return x.astype(np.float32)
    if x.dtype in _intn:
        return x.astype(np.int8 if "u" not in x.dtype.name else np.uint8)
    return x


def _check_close(xs: Any, ys: Any, atol: Tolerance, rtol: Tolerance, err_msg: str) -> None:
    tree_util.tree_map(
        functools.partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys
    )


def _check_dtypes_match(xs: Any, ys: Any) -> None:
    def same(x: Any, y: Any) -> None:
        if enable_x64.value:
            assert _dtype(x) == _dtype(y)
        else:
            assert dtypes.canonicalize_dtype(_dtype(x)) == dtypes.canonicalize_dtype(_dtype(y))

    tree_util.tree_map(same, xs, ys)


def _keeping_type(op: Callable[..., Any]) -> Callable[..., Any]:
    def applied(*args: Any) -> Any:
        result = np.array(op(*args), dtype=_dtype(args[0]))
        return result.item() if all(_is_python_scalar(a) for a in args) else result

    return applied


def _safe_subtract(x: Any, y: Any) -> Any:
    """`x - y` with `inf - inf == 0`."""
    dtype = _dtype(x)
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))


def _scalar_mul(xs: Any, a: float) -> Any:
    def mul(x: Any) -> Any:
        dtype = _dtype(x)
        result = np.multiply(x, np.array(a, dtype=dtype), dtype=dtype)
        return result.item() if _is_python_scalar(x) else result

    return tree_util.tree_map(mul, xs)


def _rand_like(rng: np.random.RandomState, x: Any) -> Any:
    shape, dtype = np.shape(x), _dtype(x)
    result = np.asarray(rng.randn(*shape), dtype=dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        result = result + dtype.type(1.0j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return result.item() if _is_python_scalar(x) else result


def _inner_product(xs: Any, ys: Any) -> Any:
    def contract(x: Any, y: Any) -> Any:
        return np.real(np.dot(np.conj(x).reshape(-1), np.asarray(y).reshape(-1)))

    return tree_util.tree_reduce(np.add, tree_util.tree_map(contract, xs, ys))


def _numerical_jvp(f: Callable[..., Any], primals: Any, tangents: Any, eps: float) -> Any:
    delta = _scalar_mul(tangents, eps)
    f_pos = f(*tree_util.tree_map(_keeping_type(operator.add), primals, delta))
    f_neg = f(*tree_util.tree_map(_keeping_type(operator.sub), primals, delta))
    return _scalar_mul(tree_util.tree_map(_safe_subtract, f_pos, f_neg), 0.5 / eps)


def _with_defaults(tol: Tolerance) -> Tolerance:
    if tol is None:
        return dict(default_gradient_tolerance)
    if not isinstance(tol, dict):
        return tol
    return {**default_gradient_tolerance, **{np.dtype(k): v for k, v in tol.items()}}


def _suffixed(err_msg: str, what: str) -> str:
    return f"{err_msg} {what}" if err_msg else what


def check_jvp(
    f: Callable[..., Any],
    f_jvp: Callable[..., Any],
    args: Sequence[Any],
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float = EPS,
    err_msg: str = "",
) -> None:
    """Check `f_jvp` (`functools.partial(lamina.jvp, f)`) at `args` against central
    differences of `f` along one random direction.

    Raises:
        AssertionError: the primal or tangent output is not within tolerance.
    """
    atol, rtol = _with_defaults(atol), _with_defaults(rtol)
    tangent = tree_util.tree_map(functools.partial(_rand_like, np.random.RandomState(0)), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected)
    t_expected = _numerical_jvp(f, args, tangent, eps)
    _check_close(v_out, v_expected, atol, rtol, _suffixed(err_msg, "primal"))
    _check_close(t_out, t_expected, atol, rtol, _suffixed(err_msg, "tangent"))


def check_vjp(
    f: Callable[..., Any],
    f_vjp: Callable[..., Any],
    args: Sequence[Any],
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float = EPS,
    err_msg: str = "",
) -> None:
    """Check `f_vjp` (`functools.partial(lamina.vjp, f)`) at `args`: the cotangent of a random
    output direction, projected on a random input direction, against central differences.

    Raises:
        AssertionError: the primal output or the projection is not within tolerance.
    """
    atol, rtol = _with_defaults(atol), _with_defaults(rtol)
    rand = functools.partial(_rand_like, np.random.RandomState(0))
    v_out, pullback = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, _suffixed(err_msg, "primal"))
    tangent = tree_util.tree_map(rand, args)
    tangent_out = _numerical_jvp(f, args, tangent, eps)
    cotangent = tree_util.tree_map(rand, v_out)
    conj = functools.partial(tree_util.tree_map, _keeping_type(np.conj))
    cotangent_in = conj(pullback(conj(cotangent)))
    _check_close(
        _inner_product(tangent, cotangent_in),
        _inner_product(tangent_out, cotangent),
        atol,
        rtol,
        _suffixed(err_msg, "cotangent projection"),
    )


def _jvp_from_linearize(f: Callable[..., Any], primals: Any, tangents: Any) -> Any:
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: Tolerance = None,
    rtol: Tolerance = None,
    eps: float | None = None,
) -> None:
    """Check `f`'s derivatives at `args` up to `order` against finite differences: forward
    (`"fwd"`), reverse (`"rev"`) and/or through `linearize` (`"lin"`), each derivative of the
    one below it, as JAX's `check_grads`.

    Raises:
        AssertionError: a derivative is not within tolerance.
    """
    step = eps or EPS
    jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=step)
    vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=step)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int, err_msg: str) -> None:
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            jvp_check(f, functools.partial(jvp, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            vjp_check(f, functools.partial(vjp, f), args, err_msg=msg)
            if order > 1:

                def pulled_back(*xs: Any) -> Any:
                    out, pullback = vjp(f, *xs)
                    return pullback(out)

                check(pulled_back, args, order - 1, msg)
        if "lin" in modes:
            msg = f"LIN of {err_msg}" if err_msg else "LIN"
            jvp_check(f, functools.partial(_jvp_from_linearize, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(_jvp_from_linearize, f), (args, args), order - 1, msg)

    check(f, tuple(args), order, "")


__all__ = ["check_grads", "check_jvp", "check_vjp"]
