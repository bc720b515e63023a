"""Jaxpr text binding several `_` in one jaxpr (a callee's binders named like its caller's
dropped outputs) reads back: outputs by the types the caller gives them, operands by the types
their equations check."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina_core as lc
from lamina_core import numpy as jnp
from lamina_core.ir import ClosedJaxpr, elided_constants, parse
from lamina_core.testing import reference_evaluator, transforms

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4)


def _read_back(closed: ClosedJaxpr, args: list[Any]) -> str:
    text = str(closed)
    parsed = parse(text, elided_constants(closed))
    assert str(parsed) == text
    for got, want in zip(
        reference_evaluator(parsed, args), reference_evaluator(closed, args), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    return text


def test_outputs_printed_underscore_take_the_types_the_caller_gives_them() -> None:
    def f(x: Any) -> Any:
        return jnp.max(x, axis=1), jnp.argmin(x, axis=0), x.mean()

    g, args = transforms(lc, f, (X,), "grad_jit", f)
    closed = lc.make_jaxpr(g)(*args)
    text = _read_back(closed, lc.tree_util.tree_leaves(args))
    # Three `_` binders of three types, returned in an order that is not their binding order.
    assert "in (_, _, _, " in text


def test_operands_printed_underscore_name_the_binder_their_equation_types_with() -> None:
    closed = lc.make_jaxpr(lc.hessian(lambda x: jnp.std(x)))(X[:2, :3])
    text = _read_back(closed, [X[:2, :3]])
    assert "= div 0.5:f32[] _\n" in text and "= neg _\n" in text
