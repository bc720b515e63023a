"""Every lax primitive over every dtype: Lamina's module text equals JAX's.

A sweep of the elementwise, reduction, scan, sorting, conversion and contraction functions over
ten dtypes. Combinations JAX rejects when tracing are skipped; for the rest, the comparison
shows that the dtype-dependent choices (comparison types, identities, complex special cases,
mixed-dtype dot) are JAX's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle
from lamina_mlir import lower_jaxpr_to_module

pytestmark = pytest.mark.oracle

DTYPES = [
    np.dtype(np.float32),
    np.dtype(np.float16),
    np.dtype(ml_dtypes.bfloat16),
    np.dtype(np.complex64),
    np.dtype(np.int32),
    np.dtype(np.int8),
    np.dtype(np.uint8),
    np.dtype(np.uint32),
    np.dtype(np.bool_),
]

UNARY = [
    "neg",
    "sign",
    "floor",
    "ceil",
    "round",
    "is_finite",
    "abs",
    "bitwise_not",
    "square",
    "real",
    "imag",
    "conj",
    "population_count",
    "clz",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "tanh",
    "logistic",
    "sin",
    "cos",
    "tan",
    "sqrt",
    "rsqrt",
    "cbrt",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "erf_inv",
    "lgamma",
    "digamma",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "pow",
    "max",
    "min",
    "nextafter",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
    "complex",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "atan2",
]
REDUCTIONS = {
    "reduce_sum": (0,),
    "reduce_prod": (1,),
    "reduce_max": (0, 1),
    "reduce_min": (0,),
    "reduce_and": (0,),
    "reduce_or": (1,),
    "reduce_xor": (0,),
}
SCANS = ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")

Make = Callable[[ModuleType], Callable[..., Any]]
Program = tuple[str, Make, tuple[Any, ...]]


def _plain(name: str) -> Make:
    def make(lax: ModuleType) -> Callable[..., Any]:
        return getattr(lax, name)  # type: ignore[no-any-return]

    return make


def _with(name: str, *params: Any, **kwargs: Any) -> Make:
    def make(lax: ModuleType) -> Callable[..., Any]:
        fun = getattr(lax, name)
        return lambda *args: fun(*args, *params, **kwargs)

    return make


def _integer_pows(lax: ModuleType) -> Callable[..., Any]:
    return lambda v: (lax.integer_pow(v, 4), lax.integer_pow(v, 7))


def _select_3(lax: ModuleType) -> Callable[..., Any]:
    return lambda w, v: lax.select_n(w, v, v, v)


def _contract_rows(lax: ModuleType) -> Callable[..., Any]:
    return lambda v, w: lax.dot_general(v, w, (((1,), (1,)), ((), ())))


def _programs(dtype: np.dtype) -> list[Program]:
    a = np.arange(6).reshape(2, 3).astype(dtype)
    which = np.arange(6).reshape(2, 3).astype(np.uint8) % 3
    out: list[Program] = [(name, _plain(name), (a,)) for name in UNARY]
    out += [(name, _plain(name), (a, a)) for name in BINARY]
    out += [(name, _with(name, axes), (a,)) for name, axes in REDUCTIONS.items()]
    out += [(name, _with(name, 1, reverse=True), (a,)) for name in SCANS]
    out += [
        ("argmax", _with("argmax", 1, np.int32), (a,)),
        ("argmin", _with("argmin", 0, np.uint8), (a,)),
        ("sort", _with("sort", dimension=1), (a,)),
        ("top_k", _with("top_k", 2), (a,)),
        ("integer_pow", _integer_pows, (a,)),
        ("select_n", _select_3, (which, a)),
    ]
    for other in DTYPES:
        b = np.arange(6).reshape(2, 3).astype(other)
        out.append((f"convert_to_{other.name}", _with("convert_element_type", other), (a,)))
        out.append((f"dot_with_{other.name}", _contract_rows, (a, b)))
    return out


# A float, a half float, a complex, a signed and an unsigned integer and bool by default.
DEFAULT_DTYPES = {"float32", "bfloat16", "complex64", "int32", "uint8", "bool"}


@pytest.mark.parametrize(
    "dtype",
    [
        pytest.param(d, id=d.name, marks=[] if d.name in DEFAULT_DTYPES else [pytest.mark.slow])
        for d in DTYPES
    ],
)
def test_every_function_lowers_as_jax_for_dtype(dtype: np.dtype, oracle: Oracle) -> None:
    compared, differ = 0, []
    for name, make, args in _programs(dtype):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = oracle.jax.jit(make(oracle.lax)).lower(*args).as_text()
        except Exception:  # JAX rejects this dtype here, each its own way
            continue
        fun = make(lamina_core.lax)
        jaxpr = lamina_core.make_jaxpr(fun)(*args)
        module_name = f"jit({getattr(fun, '__name__', '<lambda>')})"
        got = lower_jaxpr_to_module(jaxpr, module_name=module_name).as_text()
        compared += 1
        if got != want:
            differ.append(f"{name}:\n--- lamina ---\n{got}\n--- jax ---\n{want}")
    assert compared >= 20
    assert not differ, "\n".join(differ)
