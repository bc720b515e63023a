"""Vmappable containers: user types `vmap` takes apart and puts back with their own functions.

JAX's protocol (`jax.interpreters.batching.register_vmappable`): a registered type is a leaf
of the argument and result trees of `vmap`, and its `in_axes`/`out_axes` entry is an instance
of its spec type. Going in, `to_elt(cont, get_idx, x, spec)` turns the container into what the
function sees per element, calling `cont(value, axis)` on the arrays inside it (which makes
them batched values); `get_idx()` is the index of the element along the mapped axis (an iota,
made once, on first use). Coming out, `from_elt(cont, axis_size, elt, spec)` builds the batched
container, calling `cont(axis_size, value, axis)` to move each array's mapped axis to `axis`.

The registry is written by users; the batching interpreter (`batching.batch_flat`) and
`vmap` read it. `make_iota` needs lax, which sits above this layer: lax installs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, TypeAlias

ToElt: TypeAlias = Callable[[Callable[[Any, Any], Any], Callable[[], Any], Any, Any], Any]
"""`to_elt(cont, get_idx, x, spec)`: a container as one element sees it."""
FromElt: TypeAlias = Callable[[Callable[[Any, Any, Any], Any], Any, Any, Any], Any]
"""`from_elt(cont, axis_size, elt, spec)`: the batched container of per-element `elt`."""
MakeIota: TypeAlias = Callable[[Any], Any]
"""`make_iota(axis_size)`: the indices `0 .. axis_size - 1`."""

vmappables: Final[dict[type, tuple[type, type]]] = {}
"""Each registered type's spec type and axis-size type."""
spec_types: Final[set[type]] = set()
"""The types `vmap` accepts in `in_axes`/`out_axes` besides int and None."""
to_elt_handlers: Final[dict[type, ToElt]] = {}
from_elt_handlers: Final[dict[type, FromElt]] = {}
make_iota_handlers: Final[dict[type, MakeIota]] = {}


def register_vmappable(
    data_type: type,
    spec_type: type,
    axis_size_type: type,
    to_elt: ToElt,
    from_elt: FromElt,
    make_iota: MakeIota | None,
) -> None:
    """Let `vmap` map over values of `data_type` with `to_elt` and `from_elt`.

    Args:
        data_type: the container type.
        spec_type: the type of its entries in `in_axes` and `out_axes`.
        axis_size_type: the type of the axis sizes `make_iota` takes.
        to_elt: `to_elt(cont, get_idx, x, spec)`, see the module docstring.
        from_elt: `from_elt(cont, axis_size, elt, spec)`, see the module docstring.
        make_iota: the indices of an axis of size `axis_size_type`, or None for `int` sizes.
    """
    vmappables[data_type] = (spec_type, axis_size_type)
    spec_types.add(spec_type)
    to_elt_handlers[data_type] = to_elt
    from_elt_handlers[data_type] = from_elt
    if make_iota is not None:
        make_iota_handlers[axis_size_type] = make_iota


def unregister_vmappable(data_type: type) -> None:
    """Forget `data_type`'s handlers: `vmap` treats its values as it did before."""
    vmappables.pop(data_type, None)
    to_elt_handlers.pop(data_type, None)
    from_elt_handlers.pop(data_type, None)


def is_vmappable(x: Any) -> bool:
    """Whether `x`'s type is registered (a leaf of `vmap`'s trees)."""
    return type(x) in vmappables


_iota: list[MakeIota] = []


def install_make_iota(make: MakeIota) -> None:
    """How to make the indices of an `int` axis (lax's `iota`; lax installs it)."""
    _iota[:] = [make]


def make_iota(axis_size: Any) -> Any:
    handler = make_iota_handlers.get(type(axis_size))
    if handler is not None:
        return handler(axis_size)
    assert _iota, "import lamina_core.lax to install the batching helpers"
    return _iota[0](int(axis_size))


def to_elt(wrap: Callable[[Any, Any], Any], get_idx: Callable[[], Any], x: Any, spec: Any) -> Any:
    """`x` as the batched function sees it: `wrap(x, spec)` for arrays, the registered
    `to_elt` for containers (recursively, through `cont`)."""
    handler = to_elt_handlers.get(type(x))
    if handler is None:
        return wrap(x, spec)
    return handler(functools.partial(to_elt, wrap, get_idx), get_idx, x, spec)


def from_elt(match: Callable[[Any, Any, Any], Any], axis_size: Any, elt: Any, spec: Any) -> Any:
    """The batched value of per-element `elt` with its mapped axis at `spec`: `match(axis_size,
    elt, spec)` for arrays, the registered `from_elt` for containers."""
    handler = from_elt_handlers.get(type(elt))
    if handler is None:
        return match(axis_size, elt, spec)
    return handler(functools.partial(from_elt, match), axis_size, elt, spec)
