"""The transpose rule of `ragged_all_to_all`, as JAX's: the cotangent of the operand is the
exchange run backwards (each device sends back the rows it received, to where they came
from), and the cotangent of the output buffer is the output's cotangent with the received
rows zeroed (those rows were overwritten).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import Zero, instantiate_zeros, is_undefined, transpose_rules
from lamina_core.lax._batching_common import shape_of
from lamina_core.lax._collectives_layout import all_to_all
from lamina_core.lax._collectives_p2p import ragged_all_to_all_p
from lamina_core.lax._cumulative import cumsum
from lamina_core.lax._selection import select
from lamina_core.lax._shape import expand_dims
from lamina_core.lax._structural import broadcast_in_dim, full, full_like


def _ragged_all_to_all_transpose(
    ct: Any,
    operand: Any,
    output: Any,
    input_offsets: Any,
    send_sizes: Any,
    output_offsets: Any,
    recv_sizes: Any,
    *,
    axis_name: Any,
    axis_index_groups: Any,
) -> Sequence[Any]:
    if type(ct) is Zero:
        operand_ct = Zero(operand.aval) if is_undefined(operand) else None
        output_ct = Zero(output.aval) if is_undefined(output) else None
        return [operand_ct, output_ct, None, None, None, None]
    zero = instantiate_zeros(Zero(operand.aval))
    # Where each device's rows went, as seen from the device that received them.
    sent_to = all_to_all(output_offsets, axis_name, 0, 0, tiled=True)
    taken_from = all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
    operand_ct = ragged_all_to_all_p.bind(
        ct, zero, sent_to, recv_sizes, taken_from, send_sizes,
        axis_name=axis_name, axis_index_groups=axis_index_groups,
    )  # fmt: skip
    # 1 on the received rows, 0 elsewhere: +1 where a block starts, -1 past its end, summed.
    shape = shape_of(ct)
    starts = full((shape[0],), 0, dtype=np.dtype(np.int32)).at[sent_to].set(1)
    received = cumsum(starts.at[sent_to + recv_sizes].add(-1))
    received = expand_dims(received, tuple(range(1, len(shape))))
    received = broadcast_in_dim(received, shape, tuple(range(len(shape))))
    output_ct = select(received, full_like(ct, 0), ct)
    return [operand_ct, output_ct, None, None, None, None]


transpose_rules.set(ragged_all_to_all_p, _ragged_all_to_all_transpose)
