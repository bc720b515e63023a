"""Lowering of `fft`: one `stablehlo.fft` with the transform's type and lengths, as JAX emits
it on CPU."""

from __future__ import annotations

from typing import Any

from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.lax import FftType, fft_p
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import out_type, register


@register(fft_p)
def _fft_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> list[IrValue]:
    attributes: dict[str, Any] = {
        "fft_type": hlo.FftTypeAttr.get(FftType(fft_type).name),
        "fft_length": _hlo.dense_i64_array(ctx.caches, fft_lengths),
    }
    return [_hlo.emit1("stablehlo.fft", out_type(ctx), x, attributes=attributes)]
