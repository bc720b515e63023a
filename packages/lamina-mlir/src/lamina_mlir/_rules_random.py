"""Lowering of the PRNG primitives, and of the shape primitives on key arrays.

A key array lowers as its physical data (`key<fry>[s]` is `tensor<s x 2 x ui32>`, see
`_ir_types.tensor_type`). `threefry2x32` is twenty rounds of 32-bit adds, rotations and xors,
emitted unrolled; the `random_*` primitives emit the threefry algorithms of
`lamina_core.random._threefry` (JAX's, with `jax_threefry_partitionable=True`): a key's two
words broadcast against 64-bit flat-index counters (two `ui32` iotas), hashed. Bound with
`partitionable=False`, `random_bits` and `random_split` lower the other layout's lax ops
(`lamina_core.random._threefry_original`), traced in place; the rbg and unsafe_rbg keys'
operations (`lamina_core.random._rbg`, on `rng_bit_generator`) are lowered the same way, and
so are the functions of implementations users define (`lamina_core.random.user_key_ops`).
`random_wrap`, `random_unwrap` and `random_clone` are the identity on the data.

Shape primitives whose params name axes (`slice`, `broadcast_in_dim`, `transpose`,
`dynamic_slice`, `dynamic_update_slice`, `stack`, `unstack`, and `select_n`, whose predicate is
broadcast over the key data) get the key data's trailing axes appended when their result is a
key array; the ones whose lowering only needs the result type (`reshape`, `squeeze`,
`concatenate`, `rev`) work unchanged. `gather` and `scatter` of keys are not lowered yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import dtypes, lax
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ShapedArray, physical_aval
from lamina_core.random import (
    KEY_SCHEDULE_PARITY,
    ROTATIONS,
    gamma_impl,
    key_impl_of,
    random_bits_p,
    random_clone_p,
    random_fold_in_p,
    random_gamma_p,
    random_seed_p,
    random_split_p,
    random_unwrap_p,
    random_wrap_p,
    rbg_prng_impl,
    threefry2x32_p,
    threefry_prng_impl,
    user_key_ops,
)
from lamina_core.random import (
    rbg as _rbg,
)
from lamina_core.random import (
    threefry_original as _threefry_original,
)
from lamina_mlir import _hlo, _rules_shape, _rules_slicing  # noqa: F401  (the rules wrapped below)
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRule, LoweringRuleContext, lowering_rules
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import array_aval, out_aval, register

_U32: Final = np.dtype(np.uint32)
_U64: Final = np.dtype(np.uint64)


def _u32(caches: ContextCaches, value: int, shape: tuple[int, ...]) -> IrValue:
    return _hlo.full(caches, np.uint32(value), shape, _U32)


def _op(name: str, a: IrValue, b: IrValue) -> IrValue:
    return _hlo.emit1(name, a.type, a, b)


def _threefry(
    caches: ContextCaches,
    shape: tuple[int, ...],
    k1: IrValue,
    k2: IrValue,
    x1: IrValue,
    x2: IrValue,
) -> tuple[IrValue, IrValue]:
    """The hash of `(x1, x2)` under `(k1, k2)`, all `ui32` tensors of `shape`."""
    add, xor = "stablehlo.add", "stablehlo.xor"
    ks = (k1, k2, _op(xor, _op(xor, k1, k2), _u32(caches, KEY_SCHEDULE_PARITY, shape)))
    a, b = _op(add, x1, ks[0]), _op(add, x2, ks[1])
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            a = _op(add, a, b)
            left = _op("stablehlo.shift_left", b, _u32(caches, r, shape))
            right = _op("stablehlo.shift_right_logical", b, _u32(caches, 32 - r, shape))
            b = _op(xor, _op("stablehlo.or", left, right), a)
        a = _op(add, a, ks[(i + 1) % 3])
        b = _op(add, _op(add, b, ks[(i + 2) % 3]), _u32(caches, i + 1, shape))
    return a, b


def _broadcast(
    caches: ContextCaches, x: IrValue, x_shape: tuple[int, ...], shape: tuple[int, ...],
    dims: Sequence[int],
) -> IrValue:  # fmt: skip
    if x_shape == shape:
        return x
    return _hlo.broadcast_in_dim(caches, x, shape, _U32, dims)


def _key_words(
    caches: ContextCaches, keys: IrValue, batch: tuple[int, ...]
) -> tuple[IrValue, IrValue]:
    """The two words of raw keys `(*batch, 2)`, each of shape `batch`."""
    n = len(batch)
    words = []
    for i in (0, 1):
        part = _hlo.slice_op(
            caches, keys, (*batch, 1), _U32, (0,) * n + (i,), (*batch, i + 1), (1,) * (n + 1)
        )
        words.append(_hlo.reshape(caches, part, batch, _U32))
    return words[0], words[1]


def _counters(caches: ContextCaches, shape: tuple[int, ...]) -> tuple[IrValue, IrValue]:
    """The 64-bit flat index of each element of `shape`, as `(high, low)` `ui32` words."""
    if not shape:
        zero = _u32(caches, 0, ())
        return zero, zero
    u64_type = tensor_type(caches, shape, _U64)
    strides = [int(np.prod(shape[d + 1 :])) for d in range(len(shape))]
    flat: IrValue | None = None
    for d, stride in enumerate(strides):
        iota = _hlo.emit1(
            "stablehlo.iota", u64_type, attributes={"iota_dimension": _hlo.i64_attr(caches, d)}
        )
        term = _op("stablehlo.multiply", _hlo.full(caches, np.uint64(stride), shape, _U64), iota)
        flat = term if flat is None else _op("stablehlo.add", flat, term)
    assert flat is not None
    high = _op("stablehlo.shift_right_logical", flat, _hlo.full(caches, np.uint64(32), shape, _U64))
    return _hlo.convert(caches, high, shape, _U32), _hlo.convert(caches, flat, shape, _U32)


def _hash_counters(
    caches: ContextCaches, keys: IrValue, batch: tuple[int, ...], shape: tuple[int, ...]
) -> tuple[IrValue, IrValue, tuple[int, ...]]:
    """Each key of `batch` hashing the counters of `shape`: two words of `(*batch, *shape)`."""
    out = (*batch, *shape)
    k1, k2 = _key_words(caches, keys, batch)
    k1 = _broadcast(caches, k1, batch, out, range(len(batch)))
    k2 = _broadcast(caches, k2, batch, out, range(len(batch)))
    hi, lo = _counters(caches, shape)
    hi = _broadcast(caches, hi, shape, out, range(len(batch), len(out)))
    lo = _broadcast(caches, lo, shape, out, range(len(batch), len(out)))
    b1, b2 = _threefry(caches, out, k1, k2, hi, lo)
    return b1, b2, out


def _stack_words(
    caches: ContextCaches, b1: IrValue, b2: IrValue, shape: tuple[int, ...], *more: IrValue
) -> IrValue:
    """Raw keys `(*shape, 2)` from their two words (or more words)."""
    parts = [_hlo.reshape(caches, b, (*shape, 1), _U32) for b in (b1, b2, *more)]
    return _hlo.emit1(
        "stablehlo.concatenate",
        tensor_type(caches, (*shape, len(parts)), _U32),
        *parts,
        attributes={"dimension": _hlo.i64_attr(caches, len(shape))},
    )


def _key_shape(ctx: LoweringRuleContext, i: int = 0) -> tuple[int, ...]:
    return array_aval(ctx.avals_in[i]).shape


@register(random_seed_p)
def _random_seed_lowering(ctx: LoweringRuleContext, seeds: IrValue, *, impl: Any) -> list[IrValue]:
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    user = user_key_ops(impl)
    if user is not None:
        return _lower_traced(ctx, user.seed, [aval], seeds)  # type: ignore[no-any-return]
    shape = aval.shape
    if aval.dtype.itemsize == 8:
        shift = _hlo.full(caches, np.array(32, aval.dtype), shape, aval.dtype)
        high = _op("stablehlo.shift_right_logical", seeds, shift)
        mask = _hlo.full(caches, np.array(0xFFFFFFFF, aval.dtype), shape, aval.dtype)
        hi = _hlo.convert(caches, high, shape, _U32)
        lo = _hlo.convert(caches, _op("stablehlo.and", seeds, mask), shape, _U32)
    else:
        # Seeds of 32 bits or fewer: the high word is 0, the low word the seed (sign-extended).
        hi = _u32(caches, 0, shape)
        lo = _hlo.convert(caches, seeds, shape, _U32)
    if impl is not threefry_prng_impl:
        # rbg keys are the threefry key twice.
        return [_stack_words(caches, hi, lo, shape, hi, lo)]
    return [_stack_words(caches, hi, lo, shape)]


def _lower_traced(ctx: LoweringRuleContext, fun: Any, avals: Sequence[Any], *args: IrValue) -> Any:
    """`fun` (lax ops) traced at `avals` and lowered in place of the equation."""
    closed = trace_to_jaxpr(lambda *xs: [fun(*xs)], list(avals))
    consts = [
        ir_constant(ctx.caches, c, v.aval, ctx.const_lowering)
        for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)
    ]
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        consts,
        *args,
        const_lowering=ctx.const_lowering,
    )
    return list(outs)


def _is_rbg(ctx: LoweringRuleContext) -> bool:
    """Whether the equation's keys are rbg or unsafe_rbg keys (not threefry's)."""
    return key_impl_of(array_aval(ctx.avals_in[0]).dtype) is not threefry_prng_impl


def _physical_in(ctx: LoweringRuleContext) -> list[ShapedArray]:
    return [physical_aval(array_aval(ctx.avals_in[0]))]


def _user_ops(ctx: LoweringRuleContext) -> Any:
    """The key operations of a user-defined implementation whose keys the equation takes."""
    impl = key_impl_of(array_aval(ctx.avals_in[0]).dtype)
    return None if impl is None else user_key_ops(impl)


@register(random_bits_p)
def _random_bits_lowering(
    ctx: LoweringRuleContext, keys: IrValue, *, bit_width: int, shape: Sequence[int],
    partitionable: bool = True,
) -> list[IrValue]:  # fmt: skip
    user = _user_ops(ctx)
    if user is not None:
        fun = partial(
            user.random_bits, bit_width=bit_width, shape=tuple(shape), partitionable=partitionable
        )
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    if _is_rbg(ctx):
        fun = partial(_rbg.random_bits, bit_width=bit_width, shape=tuple(shape))
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    if not partitionable:
        fun = partial(_threefry_original.random_bits, bit_width=bit_width, shape=tuple(shape))
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    caches = ctx.caches
    b1, b2, out = _hash_counters(caches, keys, _key_shape(ctx), tuple(shape))
    if bit_width == 64:
        wide1 = _hlo.convert(caches, b1, out, _U64)
        wide2 = _hlo.convert(caches, b2, out, _U64)
        high = _op("stablehlo.shift_left", wide1, _hlo.full(caches, np.uint64(32), out, _U64))
        return [_op("stablehlo.or", high, wide2)]
    bits = _op("stablehlo.xor", b1, b2)
    if bit_width != 32:
        bits = _hlo.convert(caches, bits, out, out_aval(ctx).dtype)
    return [bits]


@register(random_split_p)
def _random_split_lowering(
    ctx: LoweringRuleContext, keys: IrValue, *, shape: Sequence[int], partitionable: bool = True
) -> list[IrValue]:
    user = _user_ops(ctx)
    if user is not None:
        fun = partial(user.split, shape=tuple(shape), partitionable=partitionable)
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    if _is_rbg(ctx):
        impl = key_impl_of(array_aval(ctx.avals_in[0]).dtype)
        split = _rbg.rbg_split if impl is rbg_prng_impl else _rbg.unsafe_split
        fun = partial(split, shape=tuple(shape), partitionable=partitionable)
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    if not partitionable:
        fun = partial(_threefry_original.split, shape=tuple(shape))
        return _lower_traced(ctx, fun, _physical_in(ctx), keys)  # type: ignore[no-any-return]
    caches = ctx.caches
    b1, b2, out = _hash_counters(caches, keys, _key_shape(ctx), tuple(shape))
    return [_stack_words(caches, b1, b2, out)]


@register(random_fold_in_p)
def _random_fold_in_lowering(
    ctx: LoweringRuleContext, keys: IrValue, msgs: IrValue
) -> list[IrValue]:
    user = _user_ops(ctx)
    if user is not None:
        avals = [*_physical_in(ctx), ctx.avals_in[1]]
        return _lower_traced(ctx, user.fold_in, avals, keys, msgs)  # type: ignore[no-any-return]
    if _is_rbg(ctx):
        impl = key_impl_of(array_aval(ctx.avals_in[0]).dtype)
        fold_in = _rbg.rbg_fold_in if impl is rbg_prng_impl else _rbg.unsafe_fold_in
        avals = [*_physical_in(ctx), ctx.avals_in[1]]
        return _lower_traced(ctx, fold_in, avals, keys, msgs)  # type: ignore[no-any-return]
    caches = ctx.caches
    key_shape, msg_shape = _key_shape(ctx, 0), _key_shape(ctx, 1)
    out = out_aval(ctx).shape
    k1, k2 = _key_words(caches, keys, key_shape)
    # Operands of rank 0 broadcast to anything; the others have the result's rank.
    k_dims = range(len(key_shape))
    k1 = _broadcast(caches, k1, key_shape, out, k_dims)
    k2 = _broadcast(caches, k2, key_shape, out, k_dims)
    msgs = _broadcast(caches, msgs, msg_shape, out, range(len(msg_shape)))
    b1, b2 = _threefry(caches, out, k1, k2, _u32(caches, 0, out), msgs)
    return [_stack_words(caches, b1, b2, out)]


@register(threefry2x32_p)
def _threefry2x32_lowering(ctx: LoweringRuleContext, *args: IrValue) -> list[IrValue]:
    caches = ctx.caches
    out = out_aval(ctx).shape
    operands = [
        _broadcast(
            caches, x, array_aval(a).shape, out, range(len(out) - array_aval(a).ndim, len(out))
        )
        for x, a in zip(args, ctx.avals_in, strict=True)
    ]
    return list(_threefry(caches, out, *operands))


def _identity_lowering(ctx: LoweringRuleContext, x: IrValue, **params: Any) -> list[IrValue]:
    return [x]


for _prim in (random_wrap_p, random_unwrap_p, random_clone_p):
    lowering_rules.set(_prim, _identity_lowering)


# --- shape primitives on key arrays ---------------------------------------------------------


def _trailing(aval: Any) -> tuple[int, ...]:
    """The physical axes a key array's data adds (none for numeric arrays)."""
    ext = dtypes.extended_dtype_of(getattr(aval, "dtype", None))
    return () if ext is None else ext.physical_shape


_NUMERIC: Final[dict[Any, LoweringRule]] = {}
"""The rules `_on_keys` wrapped, by primitive."""


def _on_keys(prim: Any, physical: LoweringRule) -> None:
    """Lower `prim` with `physical` when its result is a key array, else with its own rule."""
    numeric = _NUMERIC[prim] = lowering_rules[prim]

    def rule(ctx: LoweringRuleContext, *args: IrValue, **params: Any) -> Any:
        # No results (unstacking an empty axis) needs no physical layout either.
        if ctx.avals_out and _trailing(ctx.avals_out[0]):
            return physical(ctx, *args, **params)
        return numeric(ctx, *args, **params)

    # RuleTable has no way to replace a rule: the key case wraps the numeric one in place.
    lowering_rules._rules[prim] = rule


def _slice_keys(
    ctx: LoweringRuleContext, x: IrValue, *, start_indices: Sequence[int],
    limit_indices: Sequence[int], strides: Sequence[int] | None,
) -> list[IrValue]:  # fmt: skip
    aval = out_aval(ctx)
    extra = _trailing(aval)
    steps = tuple(strides) if strides is not None else (1,) * len(start_indices)
    return [
        _hlo.slice_op(
            ctx.caches, x, aval.shape, aval.dtype, (*start_indices, *(0 for _ in extra)),
            (*limit_indices, *extra), (*steps, *(1 for _ in extra)),
        )
    ]  # fmt: skip


def _broadcast_in_dim_keys(
    ctx: LoweringRuleContext, x: IrValue, *, broadcast_dimensions: Sequence[int], **params: Any
) -> list[IrValue]:
    aval = out_aval(ctx)
    extra = _trailing(aval)
    dims = (*broadcast_dimensions, *range(aval.ndim, aval.ndim + len(extra)))
    return [_hlo.broadcast_in_dim(ctx.caches, x, aval.shape, aval.dtype, dims)]


def _transpose_keys(
    ctx: LoweringRuleContext, x: IrValue, *, permutation: Sequence[int]
) -> list[IrValue]:
    ndim = len(permutation)
    extra = _trailing(ctx.avals_out[0])
    return [_hlo.transpose(ctx.caches, x, (*permutation, *range(ndim, ndim + len(extra))))]


def _physical(aval: Any) -> ShapedArray:
    return physical_aval(array_aval(aval))


def _select_n_keys(ctx: LoweringRuleContext, which: IrValue, *cases: IrValue) -> Any:
    # The predicate has the keys' logical shape (or none): broadcast it over the key data.
    which_aval = array_aval(ctx.avals_in[0])
    phys = _physical(ctx.avals_out[0])
    if which_aval.ndim:
        dims = range(which_aval.ndim)
        which = _hlo.broadcast_in_dim(ctx.caches, which, phys.shape, which_aval.dtype, dims)
        which_aval = ShapedArray(phys.shape, which_aval.dtype)
    avals = [which_aval, *(_physical(a) for a in ctx.avals_in[1:])]
    sub = ctx.replace(avals_in=avals, avals_out=[phys])
    return _NUMERIC[lax.select_n_p](sub, which, *cases)


def _zero_index(ctx: LoweringRuleContext, like: int) -> IrValue:
    return _hlo.full(ctx.caches, 0, (), array_aval(ctx.avals_in[like]).dtype)


def _dynamic_slice_keys(
    ctx: LoweringRuleContext, x: IrValue, *starts: IrValue, slice_sizes: Sequence[int]
) -> list[IrValue]:
    phys = _physical(ctx.avals_out[0])
    extra = [_zero_index(ctx, 1) for _ in _trailing(ctx.avals_out[0])]
    attrs = {"slice_sizes": _hlo.dense_i64_array(ctx.caches, phys.shape)}
    out = tensor_type(ctx.caches, phys.shape, phys.dtype)
    return [_hlo.emit1("stablehlo.dynamic_slice", out, x, *starts, *extra, attributes=attrs)]


def _dynamic_update_slice_keys(
    ctx: LoweringRuleContext, x: IrValue, update: IrValue, *starts: IrValue
) -> list[IrValue]:
    phys = _physical(ctx.avals_out[0])
    extra = [_zero_index(ctx, 2) for _ in _trailing(ctx.avals_out[0])]
    out = tensor_type(ctx.caches, phys.shape, phys.dtype)
    return [_hlo.emit1("stablehlo.dynamic_update_slice", out, x, update, *starts, *extra)]


def _stack_keys(ctx: LoweringRuleContext, *xs: IrValue, axis: int) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    shape = list(aval.shape)
    shape.insert(axis, 1)
    pieces = [_hlo.reshape(ctx.caches, x, tuple(shape), aval.dtype) for x in xs]
    attrs = {"dimension": _hlo.i64_attr(ctx.caches, axis)}
    out = tensor_type(ctx.caches, out_aval(ctx).shape, aval.dtype)
    return [_hlo.emit1("stablehlo.concatenate", out, *pieces, attributes=attrs)]


def _unstack_keys(ctx: LoweringRuleContext, x: IrValue, *, axis: int) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    extra = _trailing(aval)
    outs = []
    for i, result in enumerate(ctx.avals_out):
        start = [0] * aval.ndim
        limit = list(aval.shape)
        start[axis], limit[axis] = i, i + 1
        piece_shape = list(aval.shape)
        piece_shape[axis] = 1
        piece = _hlo.slice_op(
            ctx.caches, x, tuple(piece_shape), aval.dtype, (*start, *(0 for _ in extra)),
            (*limit, *extra), (1,) * (aval.ndim + len(extra)),
        )  # fmt: skip
        outs.append(_hlo.reshape(ctx.caches, piece, array_aval(result).shape, aval.dtype))
    return outs


_on_keys(lax.slice_p, _slice_keys)
_on_keys(lax.select_n_p, _select_n_keys)
_on_keys(lax.dynamic_slice_p, _dynamic_slice_keys)
_on_keys(lax.dynamic_update_slice_p, _dynamic_update_slice_keys)
_on_keys(lax.stack_p, _stack_keys)
_on_keys(lax.unstack_p, _unstack_keys)
_on_keys(lax.broadcast_in_dim_p, _broadcast_in_dim_keys)
_on_keys(lax.transpose_p, _transpose_keys)


@register(random_gamma_p)
def _random_gamma_lowering(
    ctx: LoweringRuleContext, key: IrValue, a: IrValue, *, log_space: bool
) -> list[IrValue]:
    # As JAX: the sampling algorithm traced, vmapped over the elements, and lowered in place.
    fun = partial(gamma_impl, log_space=log_space, use_vmap=True)
    return _lower_traced(ctx, fun, ctx.avals_in, key, a)  # type: ignore[no-any-return]
