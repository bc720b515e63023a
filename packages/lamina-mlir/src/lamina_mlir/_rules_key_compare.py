"""Lowering of `eq` and `ne` on key arrays.

Two key arrays of one dtype compare as JAX's do: their physical data (`key<fry>[s]` is
`tensor<s x 2 x ui32>`) compares elementwise, and the answers reduce over the data's trailing
axes, with `and` for `eq` (every word equal) and `or` for `ne` (some word differs). The rules
wrap the numeric ones, which still lower every other comparison.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import dtypes, lax
from lamina_core.ir import Primitive, ShapedArray, physical_aval
from lamina_mlir import _hlo, _rules_elementwise, _rules_reductions  # noqa: F401  (wrapped/used)
from lamina_mlir._context import LoweringRuleContext, lowering_rules
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, out_aval

_BOOL: Final = np.dtype(bool)


def _compare_keys(prim: Primitive, direction: str, reduce_p: Primitive) -> None:
    """Lower `prim` on key operands as described above, else with its numeric rule."""
    numeric = lowering_rules[prim]

    def rule(ctx: LoweringRuleContext, x: IrValue, y: IrValue) -> Any:
        x_aval, y_aval = (array_aval(a) for a in ctx.avals_in)
        ext = dtypes.extended_dtype_of(x_aval.dtype)
        if ext is None and dtypes.extended_dtype_of(y_aval.dtype) is None:
            return numeric(ctx, x, y)
        if x_aval.dtype != y_aval.dtype:
            got = f"{dtypes.dtype_name(x_aval.dtype)}, {dtypes.dtype_name(y_aval.dtype)}"
            raise TypeError(f"{prim} of key arrays needs one key dtype on both sides, got {got}")
        assert ext is not None
        out = out_aval(ctx)
        shape = (*out.shape, *ext.physical_shape)
        data = []
        for value, aval in ((x, x_aval), (y, y_aval)):
            if aval.shape != out.shape:  # rank 0, or size-1 dims: broadcast over the keys
                dims = range(len(shape) - len(physical_aval(aval).shape), len(shape))
                value = _hlo.broadcast_in_dim(ctx.caches, value, shape, ext.physical_dtype, dims)
            data.append(value)
        kind = _hlo.compare_type(ext.physical_dtype)
        bits = _hlo.compare(ctx.caches, data[0], data[1], direction, kind)
        sub = ctx.replace(avals_in=[ShapedArray(shape, _BOOL)], avals_out=[out])
        axes = tuple(range(out.ndim, len(shape)))
        return lowering_rules[reduce_p](sub, bits, axes=axes)

    # RuleTable has no way to replace a rule: the key case wraps the numeric one in place.
    lowering_rules._rules[prim] = rule


_compare_keys(lax.eq_p, "EQ", lax.reduce_and_p)
_compare_keys(lax.ne_p, "NE", lax.reduce_or_p)
