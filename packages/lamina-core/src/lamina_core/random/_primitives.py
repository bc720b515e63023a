"""The PRNG primitives JAX prints, over typed key arrays, and `threefry2x32`.

Keys are arrays whose dtype is a key type (`key<fry>`, an extended dtype). The primitives and
their params are JAX 0.10.2's:

- `random_seed[impl]`: integer seeds to keys of the same shape;
- `random_split[shape]`: keys `s` to keys `(*s, *shape)`;
- `random_fold_in`: keys and `uint32` messages (broadcast together) to keys;
- `random_bits[bit_width shape]`: keys `s` to unsigned integers `(*s, *shape)`;
- `random_wrap[impl]` / `random_unwrap`: raw `uint32[..., 2]` data to keys and back;
- `random_clone`: the identity (JAX's key-reuse checker tells the copy apart);
- `threefry2x32`: the hash itself, on four broadcast `uint32` arrays, two results.

Each has an abstract-evaluation rule, a NumPy reference rule (on key arrays held as NumPy
structured arrays whose field is the raw data), a zero derivative and a batching rule: a key
array's mapped axis is an ordinary axis, so all but `random_wrap` and `random_fold_in` keep it
where it is. Lowering rules live in lamina-mlir. The reference rules find each
implementation's key operations in a registry its own module fills (`register_key_ops`:
`_threefry_original` for threefry, `_rbg` for the rbg ones), so this module imports none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from lamina_core.config import affects_tracing, config
from lamina_core.interpreters import AxisData, BatchDim, batching_rules, defjvp_zero
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    hide_params,
    impl_rules,
    physical_aval,
    register_param_decoder,
)
from lamina_core.lax import bdim_at_front, checks, defbroadcasting, defvectorized
from lamina_core.random import _threefry


@dataclass(frozen=True, eq=False)
class PRNGImpl:
    """A PRNG implementation: the shape of its raw keys and its name. Identity is intended.

    Prints as its tag (`fry`), as in `random_seed[impl=fry]`; `key_type` is the extended dtype
    of its keys (`key<fry>`).
    """

    name: str
    tag: str
    key_shape: tuple[int, ...]
    key_type: dtypes.ExtendedDType = field(init=False)

    def __post_init__(self) -> None:
        ext = dtypes.register_extended_dtype(
            f"key<{self.tag}>", self.key_shape, np.uint32, self, dtypes.prng_key
        )
        object.__setattr__(self, "key_type", ext)

    def __str__(self) -> str:
        return self.tag

    def __repr__(self) -> str:
        return f"PRNGImpl({self.name})"


threefry_partitionable: Final = affects_tracing(
    config.define_bool(
        "jax_threefry_partitionable",
        True,
        "Draw threefry bits and split keys from the flat index of each element (True, JAX "
        "0.10.2's default), or from one flat list of counters hashed in halves (False).",
    )
)


def layout_params() -> dict[str, bool]:
    """The params that record, on `random_bits` and `random_split`, the threefry layout in
    effect when they were bound: none for the default, `partitionable=False` otherwise.

    The layout is read when a function is traced, as JAX reads it; the param (never printed)
    carries it to evaluation and lowering, and into the caches keyed by params.
    """
    return {} if threefry_partitionable.value else {"partitionable": False}


threefry_prng_impl: Final = PRNGImpl("threefry2x32", "fry", (2,))
rbg_prng_impl: Final = PRNGImpl("rbg", "rbg", (4,))
unsafe_rbg_prng_impl: Final = PRNGImpl("unsafe_rbg", "urbg", (4,))
prng_impls: Final[dict[str, PRNGImpl]] = {
    i.name: i for i in (threefry_prng_impl, rbg_prng_impl, unsafe_rbg_prng_impl)
}


@dataclass(frozen=True)
class KeyOps:
    """How the reference evaluator runs one PRNG implementation's key operations: functions
    of host arrays, on raw key data (`uint32[*batch, *key_shape]`). Each implementation's module
    registers its own (`register_key_ops`), so the primitives' rules name none of them."""

    seed: Callable[[np.ndarray], np.ndarray]
    """Raw keys from integer seeds (of the same shape)."""
    split: Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]
    """`split(raw, shape, partitionable)`: raw keys `(*batch, *shape, *key_shape)`."""
    fold_in: Callable[[np.ndarray, np.ndarray], np.ndarray]
    """`fold_in(raw, msgs)`: raw keys, keys and `uint32` messages broadcast together."""
    random_bits: Callable[[np.ndarray, int, tuple[int, ...], bool], np.ndarray]
    """`random_bits(raw, bit_width, shape, partitionable)`: unsigned integers `(*batch, *shape)`."""


_key_ops: dict[PRNGImpl, KeyOps] = {}


def register_key_ops(impl: PRNGImpl, ops: KeyOps) -> None:
    """How the reference evaluator runs `impl`'s key operations (at its module's import)."""
    _key_ops[impl] = ops


def key_ops(impl: PRNGImpl) -> KeyOps:
    """`impl`'s registered key operations; an error naming it if none are."""
    ops = _key_ops.get(impl)
    if ops is None:
        raise NotImplementedError(
            f"no key operations are registered for {impl.name} keys; import lamina_core.random"
        )
    return ops


def key_impl_of(dtype: object) -> PRNGImpl | None:
    """The PRNG implementation whose keys have `dtype`, or None if `dtype` is not a key type."""
    ext = dtypes.extended_dtype_of(dtype)
    payload = None if ext is None else ext.payload
    return payload if isinstance(payload, PRNGImpl) else None


def _key_aval(x: AbstractValue, prim: str) -> ShapedArray:
    if not isinstance(x, ShapedArray) or key_impl_of(x.dtype) is None:
        raise TypeError(f"{prim} takes key array operand, got {x.str_short(True)}")
    return x


def _raw(keys: np.ndarray) -> np.ndarray:
    """The raw data of a host key array (a structured array): `uint32[..., 2]` (or `4`)."""
    impl = key_impl_of(keys.dtype)
    words = 2 if impl is None else math.prod(impl.key_shape)
    return np.ascontiguousarray(keys).view(np.uint32).reshape(*keys.shape, words)


def _keys(raw: np.ndarray, impl: PRNGImpl) -> np.ndarray:
    """Raw data `uint32[..., 2]` as a host key array."""
    raw = np.ascontiguousarray(raw, np.uint32)
    return raw.view(impl.key_type.dtype).reshape(raw.shape[:-1])


random_seed_p: Final = Primitive("random_seed")
random_split_p: Final = Primitive("random_split")
random_fold_in_p: Final = Primitive("random_fold_in")
random_bits_p: Final = Primitive("random_bits")
random_wrap_p: Final = Primitive("random_wrap")
random_unwrap_p: Final = Primitive("random_unwrap")
random_clone_p: Final = Primitive("random_clone")
threefry2x32_p: Final = Primitive("threefry2x32", multiple_results=True)


# --- random_seed ---------------------------------------------------------------------------


@abstract_eval_rules.register(random_seed_p)
def _seed_abstract_eval(seeds: AbstractValue, *, impl: PRNGImpl) -> ShapedArray:
    aval = checks.array_aval("random_seed", seeds)
    if not dtypes.issubdtype(aval.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {aval.str_short(True)}")
    return ShapedArray(aval.shape, impl.key_type.dtype)


@impl_rules.register(random_seed_p)
def _seed_impl(seeds: np.ndarray, *, impl: PRNGImpl) -> np.ndarray:
    return _keys(key_ops(impl).seed(seeds), impl)


# --- random_split --------------------------------------------------------------------------


@abstract_eval_rules.register(random_split_p)
def _split_abstract_eval(
    keys: AbstractValue, *, shape: tuple[int, ...], partitionable: bool = True
) -> ShapedArray:
    aval = _key_aval(keys, "random_split")
    return ShapedArray((*aval.shape, *shape), aval.dtype)


@impl_rules.register(random_split_p)
def _split_impl(
    keys: np.ndarray, *, shape: tuple[int, ...], partitionable: bool = True
) -> np.ndarray:
    impl = key_impl_of(keys.dtype)
    assert impl is not None
    return _keys(key_ops(impl).split(_raw(keys), tuple(shape), partitionable), impl)


# --- random_fold_in ------------------------------------------------------------------------


@abstract_eval_rules.register(random_fold_in_p)
def _fold_in_abstract_eval(keys: AbstractValue, msgs: AbstractValue) -> ShapedArray:
    aval = _key_aval(keys, "random_fold_in")
    msgs_aval = checks.array_aval("random_fold_in", msgs)
    return ShapedArray(checks.broadcast_shapes("random_fold_in", [aval, msgs_aval]), aval.dtype)


@impl_rules.register(random_fold_in_p)
def _fold_in_impl(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    impl = key_impl_of(keys.dtype)
    assert impl is not None
    return _keys(key_ops(impl).fold_in(_raw(keys), np.asarray(msgs)), impl)


# --- random_bits ---------------------------------------------------------------------------


@abstract_eval_rules.register(random_bits_p)
def _bits_abstract_eval(
    keys: AbstractValue, *, bit_width: int, shape: tuple[int, ...], partitionable: bool = True
) -> ShapedArray:
    aval = _key_aval(keys, "random_bits")
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    return ShapedArray((*aval.shape, *shape), np.dtype(f"uint{bit_width}"))


@impl_rules.register(random_bits_p)
def _bits_impl(
    keys: np.ndarray, *, bit_width: int, shape: tuple[int, ...], partitionable: bool = True
) -> np.ndarray:
    impl = key_impl_of(keys.dtype)
    assert impl is not None
    return key_ops(impl).random_bits(_raw(keys), bit_width, tuple(shape), partitionable)


# --- random_wrap, random_unwrap, random_clone ----------------------------------------------


@abstract_eval_rules.register(random_wrap_p)
def _wrap_abstract_eval(base: AbstractValue, *, impl: PRNGImpl) -> ShapedArray:
    aval = checks.array_aval("random_wrap", base)
    n = len(impl.key_shape)
    if aval.shape[aval.ndim - n :] != impl.key_shape or aval.ndim < n:
        raise TypeError(
            f"random_wrap: the trailing shape of the key data must be {impl.key_shape} for "
            f"{impl.name} keys, got shape {aval.shape}"
        )
    if aval.dtype != dtypes.uint32:
        raise TypeError(f"random_wrap: key data must be uint32, got {aval.dtype.name}")
    return ShapedArray(aval.shape[: aval.ndim - n], impl.key_type.dtype)


@impl_rules.register(random_wrap_p)
def _wrap_impl(base: np.ndarray, *, impl: PRNGImpl) -> np.ndarray:
    return _keys(base, impl)


@abstract_eval_rules.register(random_unwrap_p)
def _unwrap_abstract_eval(keys: AbstractValue) -> ShapedArray:
    return physical_aval(_key_aval(keys, "random_unwrap"))


@impl_rules.register(random_unwrap_p)
def _unwrap_impl(keys: np.ndarray) -> np.ndarray:
    return _raw(keys).copy()


@abstract_eval_rules.register(random_clone_p)
def _clone_abstract_eval(keys: AbstractValue) -> AbstractValue:
    return keys


@impl_rules.register(random_clone_p)
def _clone_impl(keys: np.ndarray) -> np.ndarray:
    return keys


# --- threefry2x32 --------------------------------------------------------------------------


@abstract_eval_rules.register(threefry2x32_p)
def _threefry_abstract_eval(*args: AbstractValue) -> tuple[ShapedArray, ShapedArray]:
    avals = [checks.array_aval("threefry2x32", a) for a in args]
    if any(a.dtype != dtypes.uint32 for a in avals):
        got = ", ".join(a.str_short(True) for a in avals)
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {got}")
    out = ShapedArray(checks.broadcast_shapes("threefry2x32", avals), dtypes.uint32)
    return out, out


def _decode_prng_impl(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    # Printed as its tag (`impl=fry`).
    by_tag = {i.tag: i for i in prng_impls.values()}
    return {**params, "impl": by_tag[params["impl"]]}


register_param_decoder("random_seed")(_decode_prng_impl)
register_param_decoder("random_wrap")(_decode_prng_impl)


@impl_rules.register(threefry2x32_p)
def _threefry_impl(*args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k1, k2, x1, x2 = args
    return _threefry.threefry2x32(k1, k2, x1, x2)


# --- derivatives and batching --------------------------------------------------------------

for _prim in (
    random_seed_p,
    random_split_p,
    random_fold_in_p,
    random_bits_p,
    random_wrap_p,
    random_unwrap_p,
    random_clone_p,
    threefry2x32_p,
):
    defjvp_zero(_prim)

for _prim in (random_seed_p, random_split_p, random_bits_p, random_unwrap_p, random_clone_p):
    defvectorized(_prim)
defbroadcasting(random_fold_in_p)
defbroadcasting(threefry2x32_p)
for _prim in (random_split_p, random_bits_p):
    hide_params(_prim, lambda k, v: k == "partitionable")


def _wrap_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, impl: PRNGImpl
) -> tuple[Any, BatchDim]:
    # The trailing axes are the key data: the mapped axis must not be among them.
    (x,) = vals
    return random_wrap_p.bind(bdim_at_front(x, dims[0], axis_data.size), impl=impl), 0


batching_rules.set(random_wrap_p, _wrap_batch)
