"""What printed jaxpr text leaves out of params, and how to read it back, by primitive name.

A primitive's print rule may hide params (a `broadcast_in_dim`'s shape, a `jit`'s default
shardings) or print them in another form (`dot_general`'s dimension numbers as lists); its
entry in `param_decoders` restores them from the params shown and the equation's types.
Param values printed by their repr (enums, dimension-number dataclasses) read back through
`param_types`. Layers register both beside their primitives; `parse` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._pretty import hide_params

ParamDecoder: TypeAlias = Callable[
    [dict[str, Any], Sequence[AbstractValue], Sequence[AbstractValue]], dict[str, Any]
]
"""`decoder(params, in_avals, out_avals) -> params`: the params as the primitive binds them,
from those the text shows (hidden ones restored, printed forms turned into their types)."""

param_decoders: dict[str, ParamDecoder] = {}
"""Decoders by primitive name; a primitive without one takes its params as printed."""

open_jaxpr_params: dict[str, frozenset[str]] = {
    "remat2": frozenset({"jaxpr"}),
    "checkpoint": frozenset({"jaxpr"}),
    "shard_map": frozenset({"jaxpr"}),
    "reduce_window": frozenset({"jaxpr"}),
    "select_and_scatter": frozenset({"select_jaxpr", "scatter_jaxpr"}),
    **{
        f"scatter{op}": frozenset({"update_jaxpr"})
        for op in ("", "-add", "-sub", "-mul", "-min", "-max")
    },
}
"""Params holding an open `Jaxpr` (by primitive name); other jaxpr params are `ClosedJaxpr`s."""

param_types: dict[str, type] = {}
"""The types of param values printed by their repr, by class name: an enum's member reads
from `Cls.MEMBER`, any other type's value from `Cls(field=value, ...)` (a dataclass's or a
named tuple's repr) by calling the class with those arguments."""


def register_param_type(cls: type) -> None:
    """Let params of type `cls` (an enum, dataclass or named tuple) be read back."""
    known = param_types.setdefault(cls.__name__, cls)
    if known is not cls:
        raise ValueError(f"another param type named '{cls.__name__}' is already registered")


def short_dtype_names() -> dict[str, np.dtype]:
    """Dtypes by the names types print them with (`f32`, `key<fry>`): extended dtypes are
    those registered so far."""
    names: dict[str, np.dtype] = {"float0": dtypes.float0}
    for dt in dtypes.all_dtypes():
        names[dtypes.short_dtype_name(dt)] = dt
    for stand_in, ext in dtypes._EXTENDED.items():
        names[ext.name] = stand_in
    return names


LONG_DTYPES: dict[str, np.dtype] = {dt.name: dt for dt in dtypes.all_dtypes()}
"""Dtypes by the names params print them with (`new_dtype=float32`)."""


def register_param_decoder(name: str) -> Callable[[ParamDecoder], ParamDecoder]:
    """Decorator: the decoder of the primitive called `name`."""

    def deco(decoder: ParamDecoder) -> ParamDecoder:
        if name in param_decoders:
            raise ValueError(f"a param decoder for primitive '{name}' is already registered")
        param_decoders[name] = decoder
        return decoder

    return deco


def defaults_decoder(**defaults: Any) -> ParamDecoder:
    """A decoder restoring hidden params that have fixed defaults."""

    def decode(
        params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
    ) -> dict[str, Any]:
        return {**defaults, **params}

    return decode


def hide_default_params(prim: Any, **defaults: Any) -> None:
    """Print `prim` without the params that hold their default (a singleton such as None),
    and read its text back with them restored: both sides of one decision, in one place."""
    hide_params(prim, lambda k, v: k in defaults and v is defaults[k])
    register_param_decoder(prim.name)(defaults_decoder(**defaults))
