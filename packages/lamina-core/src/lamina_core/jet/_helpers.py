"""Families of jet rules in one line each: constant, linear, by first derivative, by
composition.

A rule takes `(primals_in, series_in, **params)`, each series a list of explicit terms (the
unscaled Taylor coefficients), and returns `(primal_out, series_out)`. The helpers register
into `jet_rules`, as `jax.experimental.jet`'s of the same names do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.ir import Primitive
from lamina_core.jet._trace import jet2, jet_rules, zero_series


def zero_prop(
    prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    """The rule of a piecewise-constant primitive: its output has `zero_series`."""
    return prim.bind(*primals_in, **params), zero_series


def defzero(prim: Primitive) -> None:
    """`prim` is piecewise constant (comparisons, rounding, bit operations)."""
    jet_rules[prim] = lambda primals_in, series_in, **params: zero_prop(
        prim, primals_in, series_in, **params
    )


def linear_prop(
    prim: Primitive, primals_in: Sequence[Any], series_in: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    """The rule of a linear primitive: applied to the primals and to each order's terms."""
    primal_out = prim.bind(*primals_in, **params)
    series_out = [prim.bind(*terms, **params) for terms in zip(*series_in, strict=True)]
    if prim.multiple_results:
        series_out = list(zip(*series_out, strict=True))
    return primal_out, series_out


def deflinear(prim: Primitive) -> None:
    """`prim` is linear in all its operands."""
    jet_rules[prim] = lambda primals_in, series_in, **params: linear_prop(
        prim, primals_in, series_in, **params
    )


def deriv_prop(
    prim: Primitive,
    deriv: Callable[[Any], Any],
    primals_in: Sequence[Any],
    series_in: Sequence[Any],
) -> tuple[Any, Any]:
    """The rule of a unary `prim` from its derivative `deriv`: the derivative's own series
    (by `jet`) convolved with the operand's, term by term (v_k = sum_j j c_{k-j} u_j / k)."""
    (x,) = primals_in
    (series,) = series_in
    primal_out = prim.bind(x)
    c0, cs = jet2(deriv, primals_in, series_in)
    c = [c0, *cs]
    u = [x, *series]
    v: list[Any] = [primal_out] + [None] * len(series)
    for k in range(1, len(v)):
        v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
    return v[0], v[1:]


def def_deriv(prim: Primitive, deriv: Callable[[Any], Any]) -> None:
    """`prim`'s rule from its first derivative `deriv` (a function of the operand)."""
    jet_rules[prim] = lambda primals_in, series_in, **_: deriv_prop(
        prim, deriv, primals_in, series_in
    )


def def_comp(prim: Primitive, comp: Callable[..., Any], **kwargs: Any) -> None:
    """`prim`'s rule: the jet of `comp`, an equal composition of primitives that have rules."""
    jet_rules[prim] = lambda primals_in, series_in, **params: jet2(
        comp, primals_in, series_in, **{**kwargs, **params}
    )
