"""Batching rule of `fft`: the mapped axis moves to the front, clear of the transformed
innermost axes, and the (staged) `lax.fft` applies to the whole batch, as in JAX."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax import _fft as f
from lamina_core.lax._batching_common import moveaxis


def _fft_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    fft_type: f.FftType,
    fft_lengths: tuple[int, ...],
) -> tuple[Any, int]:
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    return f.fft(moveaxis(x, bdim, 0), fft_type, fft_lengths), 0


batching_rules.set(f.fft_p, _fft_batch)
