"""Lowering of `conv_general_dilated` to `stablehlo.convolution`, as JAX lowers it for CPU.

The dimension numbers, window (strides, padding, dilations, no reversal), group counts and
precision config carry over as they are. Complex operands are lowered as JAX lowers them for
CPU: three real convolutions combined Gauss-style (`(a + bi)(c + di)` from `(a + b)c`,
`a(d - c)` and `b(c + d)`), traced as a small Lamina function and lowered in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import lax
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_gather_scatter import _lower_traced
from lamina_mlir._rules_linalg import _precision_config
from lamina_mlir._rules_util import array_aval, out_type, register


def _dimension_numbers(dn: lax.ConvDimensionNumbers) -> ir.Attribute:
    lhs_spec, rhs_spec, out_spec = dn
    return hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0],
        input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]),
    )


def _padding_attr(padding: Any) -> ir.Attribute:
    pairs = np.asarray(padding, np.int64).reshape(-1, 2)
    return ir.DenseIntElementsAttr.get(pairs)  # type: ignore[call-overload,no-any-return]


def _complex_conv(params: dict[str, Any]) -> Any:
    """The complex convolution as three real ones, over Lamina's `lax`."""
    preferred = params["preferred_element_type"]
    if preferred is not None:
        params = {**params, "preferred_element_type": np.finfo(preferred).dtype}

    def conv(x: Any, y: Any) -> Any:
        return lax.conv_general_dilated_p.bind(x, y, **params)

    def fun(x: Any, y: Any) -> Any:
        x_re, x_im = lax.real(x), lax.imag(x)
        y_re, y_im = lax.real(y), lax.imag(y)
        k1 = conv(lax.add(x_re, x_im), y_re)
        k2 = conv(x_re, lax.sub(y_im, y_re))
        k3 = conv(x_im, lax.add(y_re, y_im))
        return lax.complex(lax.sub(k1, k3), lax.add(k1, k2))

    return fun


@register(lax.conv_general_dilated_p)
def _conv_general_dilated_lowering(
    ctx: LoweringRuleContext, lhs: IrValue, rhs: IrValue, **params: Any
) -> list[IrValue]:
    if array_aval(ctx.avals_in[0]).dtype.kind == "c":
        return _lower_traced(ctx, _complex_conv(params), [lhs, rhs])
    caches = ctx.caches
    n_spatial = len(params["dimension_numbers"].rhs_spec) - 2
    attrs = {
        "dimension_numbers": _dimension_numbers(params["dimension_numbers"]),
        "feature_group_count": _hlo.i64_attr(caches, params["feature_group_count"]),
        "batch_group_count": _hlo.i64_attr(caches, params["batch_group_count"]),
        "window_strides": _hlo.dense_i64_array(caches, params["window_strides"]),
        "padding": _padding_attr(params["padding"]),
        "lhs_dilation": _hlo.dense_i64_array(caches, params["lhs_dilation"]),
        "rhs_dilation": _hlo.dense_i64_array(caches, params["rhs_dilation"]),
        "window_reversal": ir.DenseBoolArrayAttr.get([False] * n_spatial),
        "precision_config": _precision_config(ctx, params["precision"]),
    }
    return [_hlo.emit1("stablehlo.convolution", out_type(ctx), lhs, rhs, attributes=attrs)]
