"""Foreign function calls: the `ffi_call` primitive and `jax.ffi.ffi_call`, as JAX 0.10.2.

An `ffi_call` equation calls the compiled handler an XLA custom call target names: its params
say which (`target_name`), the result types, the buffers' layouts (minor to major, XLA's
order), which results reuse which operands' buffers, and the handler's attributes as sorted
`(name, value)` pairs, made hashable (NumPy arrays as `HashableArray`, dicts as `FrozenDict`).
A call with `has_side_effect` has `FfiEffect` and always runs. It has no derivative, and
`vmap_method` says how it batches. Only compiled code can run it: the lowering (a
`stablehlo.custom_call`) is lamina-mlir's; core's reference evaluator refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.callbacks._callbacks import VMAP_METHODS
from lamina_core.interpreters import AxisData, batching_rules, jvp_rules, transpose_rules
from lamina_core.ir import (
    AbstractValue,
    Effects,
    KindEffect,
    Layout,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    no_effects,
)
from lamina_core.lax import AbstractToken, HashableArray, abstract_token, broadcast, moveaxis, scan
from lamina_core.trace import shaped_abstractify, typeof

LayoutOption = Sequence[int] | Layout | None
"""A buffer's layout as `ffi_call` takes it: row-major (None), a `Layout`, or the axes major
to minor."""


class FfiEffect(KindEffect):
    """The effect of an `ffi_call` with `has_side_effect=True`."""

    __slots__ = ()

    def __str__(self) -> str:
        return "FFI"


ffi_effect: Final = FfiEffect()

ffi_call_p: Final = Primitive("ffi_call", multiple_results=True)


class FrozenDict(Mapping[str, Any]):
    """A dict attribute value, hashable so that it can be a primitive param (as JAX's)."""

    __slots__ = ("_d",)

    def __init__(self, d: Mapping[str, Any]) -> None:
        self._d = dict(d.items())

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(frozenset(self._d.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrozenDict) and self._d == other._d

    def unfrozen(self) -> dict[str, Any]:
        return dict(self._d)


def hashable_attributes(kwargs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The handler's keyword attributes as an `attributes` param: sorted, hashable."""
    out: list[tuple[str, Any]] = []
    for key, value in sorted(kwargs.items()):
        if isinstance(value, np.ndarray):
            frozen = np.array(value, copy=True)  # the param must not change with the caller's
            frozen.setflags(write=False)
            out.append((key, HashableArray(frozen)))
        elif isinstance(value, dict):
            out.append((key, FrozenDict(value)))
        else:
            try:
                hash(value)
            except TypeError as e:
                raise TypeError(f"Non-hashable keyword argument to ffi_call {key}: {value}") from e
            out.append((key, value))
    return tuple(out)


def attribute_values(attributes: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The `attributes` param back as the keyword values the caller gave."""
    out: dict[str, Any] = {}
    for key, value in attributes:
        if isinstance(value, HashableArray):
            out[key] = value.value
        elif isinstance(value, FrozenDict):
            out[key] = value.unfrozen()
        else:
            out[key] = value
    return out


def _shape(aval: AbstractValue) -> tuple[int, ...]:
    return () if isinstance(aval, AbstractToken) else tuple(getattr(aval, "shape", ()))


def minor_to_major(aval: AbstractValue, layout: LayoutOption = None) -> tuple[int, ...]:
    """`layout` in XLA's order (minor to major): row-major when None; a `Layout` reversed; a
    sequence taken as it is (callers give minor-to-major sequences here)."""
    if layout is None:
        return tuple(reversed(range(len(_shape(aval)))))
    if isinstance(layout, Layout):
        if layout.tiling is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return layout.major_to_minor[::-1]
    return tuple(layout)


def _layouts_of(avals: Sequence[Any], given: Any, counted: str, side: str) -> Any:
    """The call's layouts for values of types `avals`: row-major by default, else `given`,
    one per value (JAX's error naming the `counted` values otherwise)."""
    if given is None:
        return tuple(minor_to_major(a) for a in avals)
    if len(given) != len(avals):
        raise ValueError(
            f"The number of {counted} ({len(avals)}) must equal the "
            f"number of {side} layouts ({len(given)})."
        )
    return _call_layouts(avals, given)


def _call_layouts(
    avals: Sequence[AbstractValue], layouts: Sequence[LayoutOption]
) -> tuple[tuple[int, ...], ...]:
    """`ffi_call`'s layouts (sequences major to minor) in XLA's order."""
    return tuple(
        minor_to_major(
            aval, layout if layout is None or isinstance(layout, Layout) else layout[::-1]
        )
        for aval, layout in zip(avals, layouts, strict=False)
    )


def _result_avals(results: Sequence[Any]) -> tuple[AbstractValue, ...]:
    avals: list[AbstractValue] = []
    for idx, result in enumerate(results):
        if result is abstract_token:
            avals.append(abstract_token)
            continue
        if not hasattr(result, "shape") or not hasattr(result, "dtype"):
            raise ValueError(
                "All elements of result_shape_dtypes must have 'shape' and 'dtype' "
                f"attributes. Got {result} at position {idx}."
            )
        aval = shaped_abstractify(result)
        # As JAX: the dtype asked for, even one `jax_enable_x64` would narrow.
        assert isinstance(aval, ShapedArray)
        avals.append(aval.update(dtype=np.dtype(result.dtype)))
    return tuple(avals)


def _compatible(a: AbstractValue, b: AbstractValue) -> bool:
    if isinstance(a, AbstractToken) and isinstance(b, AbstractToken):
        return True
    return bool(
        getattr(a, "shape", ()) == getattr(b, "shape", ())
        and getattr(a, "dtype", ()) == getattr(b, "dtype", ())
    )


def _aliases(
    input_output_aliases: Mapping[int, int] | None,
    in_avals: Sequence[AbstractValue],
    result_avals: Sequence[AbstractValue],
    in_layouts: Sequence[tuple[int, ...]],
    out_layouts: Sequence[tuple[int, ...]],
) -> tuple[tuple[int, int], ...]:
    """The `input_output_aliases` param, checked as JAX checks it."""
    out: list[tuple[int, int]] = []
    for i, o in sorted((input_output_aliases or {}).items()):
        i, o = int(i), int(o)
        pair = f"input_output_aliases contains the mapping '{i}:{o}'"
        if i >= len(in_avals):
            raise ValueError(f"{pair} with input index {i} outside the range [0, {len(in_avals)}).")
        if o >= len(result_avals):
            raise ValueError(
                f"{pair} with output index {o} outside the range [0, {len(result_avals)})."
            )
        if not _compatible(in_avals[i], result_avals[o]):
            raise ValueError(
                f"{pair} referring to an input with abstract value {in_avals[i]} and an "
                f"output with a different abstract value {result_avals[o]}."
            )
        if in_layouts[i] != out_layouts[o]:
            raise ValueError(
                f"{pair} referring to an input with layout {in_layouts[i]} and an output "
                f"with a different layout {out_layouts[o]}."
            )
        out.append((i, o))
    return tuple(out)


def ffi_call(
    target_name: str,
    result_shape_dtypes: Any,
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_layouts: Sequence[LayoutOption] | None = None,
    output_layouts: LayoutOption | Sequence[LayoutOption] = None,
    input_output_aliases: dict[int, int] | None = None,
    custom_call_api_version: int = 4,
    legacy_backend_config: str | None = None,
) -> Callable[..., Any]:
    """A function calling the FFI target `target_name` on its positional arguments, with its
    keyword arguments as the handler's attributes.

    Args:
        target_name: the target, registered with `register_ffi_target`.
        result_shape_dtypes: one object with `shape` and `dtype` (then the call returns one
            array), or a sequence of them (then a list, or a tuple for a tuple).
        has_side_effect: the call runs even when its results are unused.
        vmap_method: how the call batches: "sequential", "sequential_unrolled",
            "expand_dims", "broadcast_all", "legacy_vectorized" or None (vmap refuses).
        input_layouts: per argument, None (row-major), a `Layout`, or the axes major to minor.
        output_layouts: the same per result (one, for a single result).
        input_output_aliases: input index to the index of the result reusing its buffer.
        custom_call_api_version: 4 (the typed FFI), or an older custom call API.
        legacy_backend_config: the opaque string an API version below 4 takes.

    Raises:
        ValueError: as JAX, for an unknown `vmap_method`, mismatched layouts or aliases, or a
            legacy backend config with the typed FFI.
    """
    allowed = list(VMAP_METHODS)
    if vmap_method not in allowed:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {allowed}, but got: {vmap_method}"
        )
    layouts_out: Sequence[LayoutOption] | None
    if isinstance(result_shape_dtypes, Sequence):
        multiple = True
        result_avals = _result_avals(result_shape_dtypes)
        layouts_out = output_layouts  # type: ignore[assignment]  # a sequence for many results
    else:
        multiple = False
        result_avals = _result_avals([result_shape_dtypes])
        layouts_out = (output_layouts,)  # type: ignore[assignment]  # one layout, one result
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError(
            "The use of the legacy_backend_config parameter requires "
            f"custom_call_api_version < 4; got {custom_call_api_version}."
        )

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        in_avals = [typeof(x) for x in args]
        in_layouts = _layouts_of(in_avals, input_layouts, "input arguments", "input")
        out_layouts = _layouts_of(result_avals, layouts_out, "outputs", "output")
        aliases = _aliases(input_output_aliases, in_avals, result_avals, in_layouts, out_layouts)
        results = ffi_call_p.bind(
            *args,
            result_avals=result_avals,
            vmap_method=vmap_method,
            target_name=target_name,
            has_side_effect=has_side_effect,
            input_layouts=in_layouts,
            output_layouts=out_layouts,
            input_output_aliases=aliases,
            custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=hashable_attributes(kwargs),
        )
        if not multiple:
            return results[0]
        return tuple(results) if isinstance(result_shape_dtypes, tuple) else results

    return wrapped


def _abstract_eval(
    *avals: AbstractValue, result_avals: tuple[AbstractValue, ...], **_: Any
) -> list[AbstractValue]:
    return list(result_avals)


@effects_rules.register(ffi_call_p)
def _effects(*avals: AbstractValue, has_side_effect: bool, **_: Any) -> Effects:
    return frozenset({ffi_effect}) if has_side_effect else no_effects


def _impl(*args: Any, target_name: str, **_: Any) -> Any:
    raise NotImplementedError(
        f"ffi_call: the FFI target `{target_name}` runs only in compiled code; core's NumPy "
        "reference evaluator cannot call it (import lamina_runtime to run it on XLA)"
    )


abstract_eval_rules.set(ffi_call_p, _abstract_eval)
impl_rules.set(ffi_call_p, _impl)


def _not_differentiable(*args: Any, target_name: str, **_: Any) -> Any:
    raise ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. "
        "You can use `jax.custom_jvp` or `jax.custom_jvp` to add support."
    )


jvp_rules.set(ffi_call_p, _not_differentiable)
transpose_rules.set(ffi_call_p, _not_differentiable)


def _batched_layouts(layouts: Sequence[tuple[int, ...]]) -> tuple[tuple[int, ...], ...]:
    """Layouts of the same buffers with a new major batch axis in front."""
    return tuple((*(n + 1 for n in layout), 0) for layout in layouts)


@batching_rules.register(ffi_call_p)
def _batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    vmap_method: str | None,
    result_avals: tuple[AbstractValue, ...],
    **params: Any,
) -> tuple[list[Any], list[Any]]:
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    moved = [a if d is None else moveaxis(a, d, 0) for a, d in zip(args, dims, strict=True)]
    batched_avals = tuple(
        a.update(shape=(size, *a.shape)) if isinstance(a, ShapedArray) else a for a in result_avals
    )
    if vmap_method not in ("sequential", "sequential_unrolled"):
        params["output_layouts"] = _batched_layouts(params["output_layouts"])
    if vmap_method == "legacy_vectorized":
        params["input_layouts"] = tuple(
            layout if d is None else _batched_layouts([layout])[0]
            for layout, d in zip(params["input_layouts"], dims, strict=True)
        )
        outs = ffi_call_p.bind(
            *moved, vmap_method=vmap_method, result_avals=batched_avals, **params
        )
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        ready = [broadcast(a, (n,)) if d is None else a for a, d in zip(moved, dims, strict=True)]
        params["input_layouts"] = _batched_layouts(params["input_layouts"])
        outs = ffi_call_p.bind(
            *ready, vmap_method=vmap_method, result_avals=batched_avals, **params
        )
    elif vmap_method in ("sequential", "sequential_unrolled"):
        mapped = [d is not None for d in dims]
        fixed = [a for a, m in zip(moved, mapped, strict=True) if not m]
        moving = [a for a, m in zip(moved, mapped, strict=True) if m]

        def body(carry: Any, xs: list[Any]) -> tuple[Any, list[Any]]:
            it_fixed, it_xs = iter(fixed), iter(xs)
            merged = [next(it_xs) if m else next(it_fixed) for m in mapped]
            return carry, ffi_call_p.bind(
                *merged, result_avals=result_avals, vmap_method=vmap_method, **params
            )

        _, outs = scan(body, (), moving, unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got {vmap_method=}."
        )
    return list(outs), [0] * len(outs)


__all__ = [
    "FfiEffect",
    "FrozenDict",
    "LayoutOption",
    "attribute_values",
    "ffi_call",
    "ffi_call_p",
    "ffi_effect",
    "hashable_attributes",
    "minor_to_major",
]
