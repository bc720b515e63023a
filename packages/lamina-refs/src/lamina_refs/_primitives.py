"""The Ref primitives, as JAX prints them: `new_ref`, `freeze`, `get`, `swap`, `addupdate`.

Each registers its abstract evaluation, effects and printing into core's tables; their
functional meaning (`get_value`, `swap_value`, `addupdate_value`) is what the discharge pass
binds and what `lamina_refs._ref` applies to the value an eager `Ref` holds. The user functions
(`new_ref`, `freeze`, `ref_get`, `ref_set`, `ref_swap`, `ref_addupdate`) are JAX's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core.interpreters import dce_rules, partial_eval_kept_effects
from lamina_core.ir import (
    AbstractValue,
    Atom,
    DropVar,
    Effects,
    JaxprEqn,
    Literal,
    PpContext,
    PpSettings,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    effects_rules,
    literal_text,
    pp,
    pp_eqn_rules,
    pp_vars,
    sharding_rules,
)
from lamina_core.ir.dtypes import issubdtype
from lamina_core.numpy import at, getitem
from lamina_core.trace import aval_method, typeof
from lamina_refs._indexing import (
    BitcastTransform,
    NDIndexer,
    ReshapeTransform,
    Slice,
    Transform,
    Transforms,
    bitcast_shape,
    make_indexer,
    transformed_aval,
)
from lamina_refs._types import ACCUM, INTERNAL, READ, WRITE, AbstractRef, ref_aval
from lamina_refs._views import TransformedRef

new_ref_p: Final = Primitive("new_ref")
freeze_p: Final = Primitive("freeze")
get_p: Final = Primitive("get")
swap_p: Final = Primitive("swap")
addupdate_p: Final = Primitive("addupdate", multiple_results=True)
empty_ref_p: Final = Primitive("empty_ref")
free_ref_p: Final = Primitive("free_ref", multiple_results=True)

REF_PRIMITIVES: Final = frozenset(
    {new_ref_p, freeze_p, get_p, swap_p, addupdate_p, empty_ref_p, free_ref_p}
)


def _ref_type(aval: AbstractValue, what: str) -> AbstractRef:
    if not isinstance(aval, AbstractRef):
        raise ValueError(f"`{what}` must be called on `Ref` types: {aval}.")
    return aval


# --- abstract evaluation and effects ---------------------------------------------------------


@abstract_eval_rules.register(new_ref_p)
def _new_ref_abstract_eval(x: AbstractValue, *, kind: str | None, memory_space: Any) -> AbstractRef:
    return ref_aval(x, kind)


@abstract_eval_rules.register(empty_ref_p)
def _empty_ref_abstract_eval(*, ty: AbstractValue, memory_space: Any) -> AbstractRef:
    return AbstractRef(ref_aval(ty).inner_aval, memory_space)


@abstract_eval_rules.register(free_ref_p)
def _free_ref_abstract_eval(ref: AbstractValue) -> list[AbstractValue]:
    _ref_type(ref, "free_ref")
    return []


@abstract_eval_rules.register(freeze_p)
def _freeze_abstract_eval(ref: AbstractValue) -> AbstractValue:
    return _ref_type(ref, "freeze").inner_aval


@abstract_eval_rules.register(get_p)
def _get_abstract_eval(ref: AbstractValue, *idx: AbstractValue, tree: Transforms) -> AbstractValue:
    return transformed_aval(tree, _ref_type(ref, "get").inner_aval)


def _check_value(
    what: str, ref: AbstractRef, val: AbstractValue, tree: Transforms
) -> AbstractValue:
    expected = transformed_aval(tree, ref.inner_aval)
    if isinstance(expected, ShapedArray):
        if not isinstance(val, ShapedArray):
            raise ValueError(f"`{what}` of a value of type {val.str_short(True)} into {ref}")
        if expected.shape != val.shape:
            raise ValueError(
                f"Invalid shape for `{what}`. Ref shape: {ref.shape}. Expected shape: "
                f"{expected.shape}. Value shape: {val.shape}. Transforms: {tree}. "
            )
        if expected.dtype != val.dtype:
            raise ValueError(
                f"Invalid dtype for `{what}`. Ref dtype: {expected.dtype}. Value dtype: "
                f"{val.dtype}. "
            )
    return expected


@abstract_eval_rules.register(swap_p)
def _swap_abstract_eval(
    ref: AbstractValue, val: AbstractValue, *idx: AbstractValue, tree: Transforms
) -> AbstractValue:
    return _check_value("swap", _ref_type(ref, "swap"), val, tree)


@abstract_eval_rules.register(addupdate_p)
def _addupdate_abstract_eval(
    ref: AbstractValue, val: AbstractValue, *idx: AbstractValue, tree: Transforms
) -> list[AbstractValue]:
    _check_value("addupdate", _ref_type(ref, "addupdate"), val, tree)
    return []


def _effects(effect: Any) -> Any:
    frozen: Effects = frozenset({effect})
    return lambda *avals, **params: frozen


effects_rules.set(new_ref_p, _effects(INTERNAL))
effects_rules.set(freeze_p, _effects(INTERNAL))
effects_rules.set(empty_ref_p, _effects(INTERNAL))
effects_rules.set(free_ref_p, _effects(INTERNAL))
effects_rules.set(get_p, _effects(READ))
effects_rules.set(swap_p, _effects(WRITE))
effects_rules.set(addupdate_p, _effects(ACCUM))
# Reads, writes and accumulations are the effects JAX's partial evaluator keeps a handle on
# (making or freezing a Ref is not): they decide the order of residuals.
partial_eval_kept_effects.append(lambda e: e is READ or e is WRITE or e is ACCUM)


def _dce_when_unread(used: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Making a Ref, reading one or freezing one changes nothing another equation observes:
    nobody reading the result, the equation goes, as in JAX (writes and `free_ref` stay)."""
    if any(used):
        return [True] * len(eqn.invars), eqn
    return [False] * len(eqn.invars), None


for _prim in (new_ref_p, empty_ref_p, get_p, freeze_p):
    dce_rules.set(_prim, _dce_when_unread)


def _result_sharding(mesh: Any, in_avals: Any, out: Any, **params: Any) -> Any:
    """Over Explicit mesh axes a Ref primitive's result is split as its abstract evaluation
    says (a read as the Ref's value: `transformed_aval` keeps the split)."""
    if isinstance(out, (list, tuple)):
        return [getattr(o, "spec", None) for o in out]
    return getattr(out, "spec", None)


for _prim in REF_PRIMITIVES:
    sharding_rules.set(_prim, _result_sharding)


# --- printing: `b:f32[] <- a[1]`, `d:f32[], a[1] <- a[1], c`, `a[...] += b` ----------------


def _pp_slice(s: Slice, dim: int) -> str:
    start = "" if s.start == 0 else str(s.start)
    end = s.start + s.size * s.stride
    stop = "" if end == dim else str(end)
    return f"{start}:{stop}" if s.stride == 1 else f"{start}:{stop}:{s.stride}"


def _pp_indexer(indexer: NDIndexer, operands: Sequence[Atom], ctx: PpContext) -> str:
    parts = []
    for i, dim in zip(indexer.indices, indexer.shape, strict=True):
        if isinstance(i, Slice):
            parts.append(_pp_slice(i, dim))
        else:
            atom = operands[i.position]
            parts.append(
                literal_text(atom, print_dtype=False)
                if isinstance(atom, Literal)
                else ctx.name(atom)
            )
    return f"[{','.join(parts)}]"


def _pp_indexed(eqn: JaxprEqn, ref_at: int, ctx: PpContext) -> str:
    ref = eqn.invars[ref_at]
    name = ctx.name(ref) if not isinstance(ref, Literal) else literal_text(ref)
    tree: Transforms = eqn.params["tree"]
    if not tree:
        return f"{name}[...]"
    operands = eqn.invars[ref_at + (1 if eqn.primitive is get_p else 2) :]
    return name + "".join(
        _pp_indexer(t, operands, ctx) if isinstance(t, NDIndexer) else t.pp() for t in tree
    )


def _atom(eqn: JaxprEqn, k: int, ctx: PpContext) -> str:
    atom = eqn.invars[k]
    return literal_text(atom) if isinstance(atom, Literal) else ctx.name(atom)


def _ref_doc(eqn: JaxprEqn, ctx: PpContext) -> pp.Doc:
    """The indexed Ref of a get, swap or addupdate, `x[i]`, in green (as JAX colors it)."""
    return pp.color(pp.text(_pp_indexed(eqn, 0, ctx)), pp.Color.GREEN, None, pp.Intensity.NORMAL)


def _get_pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=settings.print_shapes)
    annotation = eqn.source_info.summary() if settings.source_info else None
    return pp.concat([lhs, pp.text(" <- ", annotation), _ref_doc(eqn, ctx)])


def _swap_pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    annotation = eqn.source_info.summary() if settings.source_info else None
    target = _ref_doc(eqn, ctx)
    value = pp.text(_atom(eqn, 1, ctx))
    out = eqn.outvars[0]
    # A set is a swap whose result is unread at top level; a dropped result prints in full.
    if type(out) is not DropVar and ctx.name(out) == "_":
        return pp.concat([target, pp.text(" <- ", annotation), value])
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=settings.print_shapes)
    return pp.concat(
        [lhs, pp.text(", "), target, pp.text(" <- ", annotation), target, pp.text(", "), value]
    )


def _addupdate_pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    annotation = eqn.source_info.summary() if settings.source_info else None
    return pp.concat(
        [
            _ref_doc(eqn, ctx),
            pp.text(" += ", annotation),
            pp.text(_atom(eqn, 1, ctx)),
        ]
    )


pp_eqn_rules.set(get_p, _get_pp)
pp_eqn_rules.set(swap_p, _swap_pp)
pp_eqn_rules.set(addupdate_p, _addupdate_pp)


# --- functional meaning (applied eagerly by `lamina_refs._ref`, and by the discharge pass) -----


def get_value(value: Any, idx: tuple[Any, ...], tree: Transforms) -> Any:
    """`value[index]`: what `get` reads from a Ref holding `value`."""
    for t in tree:
        value = _read_view(value, idx, t)
    return value


def _read_view(value: Any, idx: tuple[Any, ...], t: Transform) -> Any:
    match t:
        case NDIndexer():
            return getitem(value, t.numpy_index(idx))
        case ReshapeTransform(shape):
            return lax.reshape(value, shape)
        case BitcastTransform(dtype):
            return _bitcast(value, dtype)
        case _:
            raise NotImplementedError(f"Unsupported transform: {t}")


def _bitcast(x: Any, dtype: np.dtype) -> Any:
    """`x` reinterpreted as `dtype`, the second-minor dimension scaled, as JAX's."""
    aval: ShapedArray = typeof(x)  # type: ignore[assignment]  # a Ref holds arrays
    old, shape = aval.dtype.itemsize, bitcast_shape(aval.shape, aval.dtype, dtype)
    if old < dtype.itemsize:
        ratio = dtype.itemsize // old
        x = lax.reshape(x, (*x.shape[:-2], x.shape[-2] // ratio, ratio, x.shape[-1]))
        x = lax.transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))
    y = lax.bitcast_convert_type(x, dtype)
    if old > dtype.itemsize:
        y = lax.reshape(
            lax.transpose(y, (*range(y.ndim - 3), y.ndim - 3, y.ndim - 1, y.ndim - 2)), shape
        )
    return y


def swap_value(value: Any, val: Any, idx: tuple[Any, ...], tree: Transforms) -> tuple[Any, Any]:
    """The Ref's new value and the old value at the index, for `swap`."""
    if not tree:
        return val, value
    t, rest = tree[0], tree[1:]
    if isinstance(t, ReshapeTransform):
        new, old = swap_value(lax.reshape(value, t.shape), val, idx, rest)
        return lax.reshape(new, value.shape), old
    if not isinstance(t, NDIndexer):
        raise NotImplementedError(f"Unsupported transform: {t}")
    index = t.numpy_index(idx)
    # A write through integer arrays names distinct elements (a Ref is written in place; which
    # of two writes to one element wins is unspecified, as in JAX), so its scatter has unique
    # indices, which also makes it transposable.
    if not rest:
        return at(value)[index].set(val, unique_indices=True), getitem(value, index)
    new, old = swap_value(getitem(value, index), val, idx, rest)
    return at(value)[index].set(new, unique_indices=True), old


def addupdate_value(value: Any, val: Any, idx: tuple[Any, ...], tree: Transforms) -> Any:
    if not tree:
        return lax.add(value, val)
    if len(tree) == 1 and isinstance(tree[0], NDIndexer):
        return at(value)[tree[0].numpy_index(idx)].add(val)
    # Through a chain of views: a read, an add and a write of the viewed part.
    new, _ = swap_value(value, lax.add(get_value(value, idx, tree), val), idx, tree)
    return new


# --- the user functions ----------------------------------------------------------------------


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Any:
    """A new Ref holding (a copy of) `init_val`: `jax.new_ref`."""
    if kind not in (None, "no_grad_no_remat"):
        raise ValueError(f"new_ref: kind must be None or 'no_grad_no_remat', got {kind!r}")
    return new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def empty_ref(ty: Any, memory_space: Any = None) -> Any:
    """A new Ref of type `ty` (an array, a `ShapeDtypeStruct` or an aval) whose contents are
    unspecified until written: `jax.empty_ref`."""
    aval = typeof(ty)
    if isinstance(aval, ShapedArray) and aval.weak_type:
        aval = aval.normalize()
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref: Any) -> tuple[()]:
    """Invalidate `ref` without reading it: `jax.free_ref`."""
    free_ref_p.bind(ref)
    return ()


def freeze(ref: Any) -> Any:
    """The final value of `ref`, which becomes invalid: `jax.freeze`."""
    return freeze_p.bind(ref)


def _ref_and_indexer(ref: Any, idx: Any, what: str) -> tuple[Any, Transforms, list[Any]]:
    """The Ref `ref` (a Ref or a view of one) views, and the `tree` and index operands of
    `ref[idx]`."""
    if isinstance(ref, TransformedRef):
        base, tree, operands = ref.ref, ref.transforms, list(ref.operands)
    else:
        base, tree, operands = ref, (), []
    aval = typeof(base)
    if not isinstance(aval, AbstractRef):
        raise ValueError(f"Can only call `{what}` on a `Ref`: {base}.")
    empty = idx is None or idx is Ellipsis or (isinstance(idx, tuple) and not idx)
    if aval.inner_aval.is_high:  # a hi value is read and written whole
        if empty and not tree:
            return base, (), []
        raise ValueError(
            f"Cannot index a Ref of the hi type {aval.inner_aval.str_short()} with {idx!r}: "
            "a Ref of a hi value is read and written whole, with `ref[...]`"
        )
    if empty:
        return base, tree, operands
    shape = ref.shape if tree else aval.shape
    more, more_operands = make_indexer(idx, shape, len(operands))
    return base, (*tree, *more), [*operands, *more_operands]


def ref_get(ref: Any, idx: Any = None) -> Any:
    """`ref[idx]`: the indexed part of the Ref's value, as a new array."""
    base, tree, operands = _ref_and_indexer(ref, idx, "ref_get")
    return get_p.bind(base, *operands, tree=tree)


def _implicit_cast(dtype: Any, value: Any) -> Any:
    # As JAX: weak floats and any integers are converted to the Ref's dtype.
    aval = typeof(value)
    if not isinstance(aval, ShapedArray):
        return value
    floats = issubdtype(dtype, np.floating) and issubdtype(aval.dtype, np.floating)
    ints = issubdtype(dtype, np.integer) and issubdtype(aval.dtype, np.integer)
    if (aval.weak_type and floats) or ints:
        return lax.convert_element_type(value, dtype)
    return value


def ref_swap(ref: Any, idx: Any, value: Any, _function_name: str = "ref_swap") -> Any:
    """Write `value` at `ref[idx]` and return what was there."""
    base, tree, operands = _ref_and_indexer(ref, idx, _function_name)
    inner = typeof(base).inner_aval  # type: ignore[attr-defined]  # a Ref
    if not inner.is_high:
        value = _implicit_cast(ref.dtype if tree else inner.dtype, value)
    return swap_p.bind(base, value, *operands, tree=tree)


def ref_set(ref: Any, idx: Any, value: Any) -> None:
    """`ref[idx] = value`."""
    ref_swap(ref, idx, value, _function_name="ref_set")


def ref_addupdate(ref: Any, idx: Any, value: Any) -> None:
    """`ref[idx] += value` as one accumulation (what reverse mode emits)."""
    base, tree, operands = _ref_and_indexer(ref, idx, "ref_addupdate")
    inner = typeof(base).inner_aval  # type: ignore[attr-defined]  # a Ref
    if not inner.is_high:
        viewed: ShapedArray = transformed_aval(tree, inner)  # type: ignore[assignment]  # arrays
        value = _implicit_cast(viewed.dtype, value)
    addupdate_p.bind(base, value, *operands, tree=tree)


AbstractRef.tracer_getitem = staticmethod(ref_get)
AbstractRef.tracer_setitem = staticmethod(ref_set)
# A traced Ref's methods, as JAX's (`r.get()`, `r.set(v, idx)`, `r.swap(v)`, `r.addupdate(v)`).
AbstractRef.get = aval_method(lambda ref, idx=(): ref_get(ref, idx))
AbstractRef.set = aval_method(lambda ref, value, idx=(): ref_set(ref, idx, value))
AbstractRef.swap = aval_method(lambda ref, value, idx=(): ref_swap(ref, idx, value))
AbstractRef.addupdate = aval_method(lambda ref, value, idx=(): ref_addupdate(ref, idx, value))
TransformedRef.getter = staticmethod(ref_get)
TransformedRef.setter = staticmethod(ref_set)
TransformedRef.swapper = staticmethod(ref_swap)

__all__ = [
    "REF_PRIMITIVES",
    "addupdate_p",
    "empty_ref",
    "empty_ref_p",
    "free_ref",
    "free_ref_p",
    "freeze",
    "freeze_p",
    "get_p",
    "new_ref",
    "new_ref_p",
    "ref_addupdate",
    "ref_get",
    "ref_set",
    "ref_swap",
    "swap_p",
]
