"""Lowering of `rng_bit_generator` and `rng_uniform` as JAX's: `stablehlo.rng_bit_generator`
on the key read as `u64[2]` (a `u32[4]` key is reshaped and bitcast, there and back), and
`stablehlo.rng` with the UNIFORM distribution."""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.lax import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, out_aval, out_type, register

_ALGORITHM_NAMES = {
    RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
    RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
    RandomAlgorithm.RNG_PHILOX: "PHILOX",
}


@register(rng_bit_generator_p)
def _rng_bit_generator_lowering(
    ctx: LoweringRuleContext,
    key: IrValue,
    *,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    algorithm: RandomAlgorithm,
    **_: Any,
) -> list[IrValue]:
    caches = ctx.caches
    key_aval = array_aval(ctx.avals_in[0])
    as_words = key_aval.dtype == np.dtype(np.uint32)
    if as_words:
        pairs = _hlo.reshape(caches, key, (2, 2), np.dtype(np.uint32))
        key = hlo.bitcast_convert(tensor_type(caches, (2,), np.dtype(np.uint64)), pairs)
    attr = hlo.RngAlgorithmAttr.get(_ALGORITHM_NAMES[RandomAlgorithm(algorithm)])
    op = hlo.RngBitGeneratorOp(key.type, out_type(ctx, 1), attr, key)
    new_key: IrValue = op.results[0]
    bits: IrValue = op.results[1]
    if as_words:
        pairs = hlo.bitcast_convert(tensor_type(caches, (2, 2), np.dtype(np.uint32)), new_key)
        new_key = _hlo.reshape(caches, pairs, (4,), np.dtype(np.uint32))
    return [new_key, bits]


@register(rng_uniform_p)
def _rng_uniform_lowering(
    ctx: LoweringRuleContext, a: IrValue, b: IrValue, *, shape: tuple[int, ...]
) -> list[IrValue]:
    dims = _hlo.constant(ctx.caches, np.array(out_aval(ctx).shape, np.int64))
    distribution = hlo.RngDistributionAttr.get("UNIFORM")
    return [hlo.rng(a, b, dims, distribution)]
