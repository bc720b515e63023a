"""Hi primitives read back from printed jaxprs (`ir.parse`): `call_hi_primitive[_prim=...]`.

A `VJPHiPrimitive` instance prints as its class name and params, `Quantize[{}]`; the text
has neither its Python class nor its types. It reads back as a new instance of the subclass
of that name defined in the process (`hi_primitive_classes`), made as its seed makes one:
`Cls(*operand_types, **params)`. A subclass whose `__init__` takes something else cannot be
read back, and says so. Hi types print by their own `str_short`: their reader is the user's,
registered by name with `register_type_reader` (re-exported here from `lamina_core.ir`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.ir import (
    AbstractValue,
    ValueForm,
    parse_type,
    register_constant_codec,
    register_param_decoder,
)
from lamina_core.trace import is_hi_value, typeof
from lamina_hijax._primitives import VJPHiPrimitive, call_hi_primitive_p, hi_primitive_classes


def rebuild_hi_primitive(form: ValueForm, in_avals: Sequence[AbstractValue]) -> VJPHiPrimitive:
    """The hi primitive printed as `form` (`Quantize[{}]`), for operands of `in_avals`."""
    cls = hi_primitive_classes.get(form.head)
    if cls is None:
        raise ValueError(
            f"unknown hi primitive '{form.head}' (is the module defining it imported?)"
        )
    if form.bracket != "[" or len(form.args) != 1 or form.kwargs or form.pairs:
        raise ValueError(f"expected {form.head}[{{params}}]")
    params = form.args[0] or {}  # `{}` reads as an empty set
    if not isinstance(params, dict):
        raise ValueError(f"expected {form.head}[{{params}}], got {params!r}")
    try:
        prim = cls(*in_avals, **params)
    except Exception as e:  # the subclass's own complaint
        types = ", ".join(a.str_short(True) for a in in_avals)
        raise TypeError(
            f"cannot make {form.head} from its operand types ({types}) and params {params}: "
            f"{e} (a hi primitive reads back as Cls(*operand_types, **params))"
        ) from e
    if prim.params != params:
        raise ValueError(f"{form.head} made from the text has params {prim.params}, not {params}")
    return prim


@register_param_decoder(call_hi_primitive_p.name)
def _decode(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    prim = params.get("_prim")
    if isinstance(prim, ValueForm):
        return {**params, "_prim": rebuild_hi_primitive(prim, ins)}
    return params


def _store_hi_value(value: Any) -> tuple[str, list[Any]] | None:
    if not is_hi_value(value):
        return None
    aval: Any = typeof(value)
    return aval.str_short(True), list(aval.lower_val(value))


def _load_hi_value(meta: str, parts: list[Any]) -> Any:
    aval: Any = parse_type(meta)
    return aval.raise_val(*parts)


# A hi value a program closes over is stored in the JSON form as its type and its lo values,
# and read back through its type's reader (`register_type_reader`) and `raise_val`.
register_constant_codec("hi", _store_hi_value, _load_hi_value)
