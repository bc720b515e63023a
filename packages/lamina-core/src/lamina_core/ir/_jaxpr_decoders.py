"""What printed jaxpr text leaves out of params, and how to read it back, by primitive name.

A primitive's print rule may hide params (a `broadcast_in_dim`'s shape, a `jit`'s default
shardings) or print them in another form (`dot_general`'s dimension numbers as lists); its
entry in `param_decoders` restores them from the params shown and the equation's types.
Param values printed by their repr (enums, dimension-number dataclasses) read back through
`param_types`, other printed forms (`Mesh('x': 2)`, `P('x',)`) through `value_readers`. A
primitive whose sub-jaxprs are typed in a context (a `shard_map` body under its manual mesh)
names it in `jaxpr_scopes`. Layers register all of these beside their primitives; `parse`
reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, TypeAlias

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.ir._avals import AbstractValue, ShapedArray
from lamina_core.ir._explicit_sharding import spec_of
from lamina_core.ir._mesh import NamedSharding
from lamina_core.ir._partition_spec import PartitionSpec
from lamina_core.ir._pretty import hide_params

ParamDecoder: TypeAlias = Callable[
    [dict[str, Any], Sequence[AbstractValue], Sequence[AbstractValue]], dict[str, Any]
]
"""`decoder(params, in_avals, out_avals) -> params`: the params as the primitive binds them,
from those the text shows (hidden ones restored, printed forms turned into their types)."""

param_decoders: dict[str, ParamDecoder] = {}
"""Decoders by primitive name; a primitive without one takes its params as printed."""

open_jaxpr_params: dict[str, frozenset[str]] = {}
"""Params holding an open `Jaxpr`, by primitive name (registered beside the primitives with
`register_open_jaxpr_params`); other jaxpr params are `ClosedJaxpr`s."""


def register_open_jaxpr_params(name: str, keys: Iterable[str]) -> None:
    """Read the params `keys` of the primitive called `name` as open jaxprs (`remat2`'s
    `jaxpr`, a scatter's `update_jaxpr`): their constants are not the caller's to supply."""
    wanted = frozenset(keys)
    if open_jaxpr_params.setdefault(name, wanted) != wanted:
        raise ValueError(f"open jaxpr params of primitive '{name}' are already registered")


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


class ValueForm(NamedTuple):
    """A printed param value of the form `Head(...)` or `Head[...]`, its items read."""

    head: str
    bracket: str
    """`(` or `[`."""
    args: list[Any]
    """The items without a name, in order."""
    kwargs: dict[str, Any]
    """The `name=value` items."""
    pairs: list[tuple[Any, Any]]
    """The `key: value` items (`Mesh('x': 2, 'y': 4)`), in order."""


ValueReader: TypeAlias = Callable[[ValueForm], Any]
"""`reader(form) -> value`: the param value a printed `Head(...)` stands for. It raises
`ValueError` or `TypeError` naming what is wrong; `parse` adds where."""

value_readers: dict[str, ValueReader] = {}
"""Readers of printed param values by their head (`Mesh`, `NamedSharding`, `P`)."""


def register_value_reader(head: str, reader: ValueReader) -> None:
    """Read param values printed as `head(...)` (or `head[...]`) with `reader`."""
    if value_readers.setdefault(head, reader) is not reader:
        raise ValueError(f"a reader of values printed as '{head}(...)' is already registered")


JaxprScope: TypeAlias = Callable[..., AbstractContextManager[Any]]
"""`scope(**params) -> context manager`: what a primitive's sub-jaxprs are read inside."""

jaxpr_scopes: dict[str, tuple[tuple[str, ...], JaxprScope]] = {}
"""By primitive name: the params a scope needs, and the scope."""


def register_jaxpr_scope(name: str, keys: Sequence[str], scope: JaxprScope) -> None:
    """Read the jaxpr params of the primitive called `name` inside `scope(**{k: v for the
    params k of keys})` (read first, wherever they are printed): the context their types were
    made in, as a `shard_map` body's under its manual mesh and named axes."""
    if name in jaxpr_scopes:
        raise ValueError(f"a jaxpr scope for primitive '{name}' is already registered")
    jaxpr_scopes[name] = (tuple(keys), scope)


ResultTypes: TypeAlias = Callable[[Any, Sequence[AbstractValue], dict[str, Any]], Any]
"""`rule(primitive, in_avals, params)`: a primitive's result type(s), as tracing types them."""

result_types: list[ResultTypes] = []
"""The typing `parse` checks an equation's printed result types against: tracing's (which
adds the manual axes values vary over), installed by the layer that owns it; the primitives'
abstract evaluation alone while none is."""


def install_result_types(rule: ResultTypes) -> None:
    """Make `rule` the typing `parse` checks equations with."""
    result_types[:] = [rule]


def type_sharding(out: AbstractValue, ins: Sequence[AbstractValue] = ()) -> NamedSharding | None:
    """The sharding the result type `out` implies over Explicit mesh axes: what a param a
    print rule hides because the binder's type shows it (`dot_general`'s `out_sharding`)
    reads back as. None where no operand nor the result is split over such axes."""
    split = [a for a in (out, *ins) if getattr(a, "spec", None) is not None]
    if not split or not isinstance(out, ShapedArray):
        return None
    mesh = out.mesh or split[0].mesh  # type: ignore[attr-defined]  # split: array types
    return NamedSharding(mesh, PartitionSpec(*spec_of(out)))
