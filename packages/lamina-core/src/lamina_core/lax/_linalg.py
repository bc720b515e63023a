"""`dot_general`, the one contraction primitive, and the lax functions over it.

Params are JAX 0.10.2's: `dimension_numbers` as `((lhs_contracting, rhs_contracting),
(lhs_batch, rhs_batch))` of int tuples, `precision` (None, or a pair of `Precision`),
`preferred_element_type` (None or a dtype) and `out_sharding` (None). The result dimensions
are the batch dimensions, then lhs's free ones, then rhs's. Operand dtypes may differ: the
result takes the "wider" one by XLA's rule, which JAX copies; equally wide but different
dtypes are an error.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.config import affects_tracing, config, define_optional_enum
from lamina_core.ir import (
    AbstractValue,
    JaxprEqn,
    NamedSharding,
    PartitionSpec,
    PpContext,
    PpSettings,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
    named_in_context,
    pp,
    pp_eqn_rules,
    pp_eqn_with_params,
    register_param_decoder,
    type_sharding,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._dot_types import DotAlgorithmPreset, Precision
from lamina_core.lax._structural import canonical_sharding
from lamina_core.lax._types import Array
from lamina_core.trace import CHECKED_SCOPES, insert_pvary, typeof

_PRECISION_NAMES: Final = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
}

# Read when a contraction is staged without a precision: part of the tracing key, as JAX's.
default_matmul_precision: Final = affects_tracing(
    define_optional_enum(
        "jax_default_matmul_precision",
        (
            *("default", "high", "highest", "bfloat16", "tensorfloat32", "float32"),
            *(name for name in DotAlgorithmPreset.__members__ if name != "DEFAULT"),
        ),
        None,
        "Control the default matmul and conv precision for 32bit inputs: a precision name, "
        "or the name of a lax.DotAlgorithmPreset.",
        validator=lambda value: _check_default_precision(value),
    )
)


def _check_default_precision(value: str | None) -> None:
    if value is not None and value in DotAlgorithmPreset.__members__:
        raise NotImplementedError(
            f"config option jax_default_matmul_precision={value!r} is not supported by Lamina: "
            "dot algorithm presets other than DEFAULT are not implemented"
        )


_TOUCHED: Final = config.touched

DimensionNumbers: TypeAlias = tuple[
    tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]
]
CanonicalPrecision: TypeAlias = "tuple[Precision, Precision] | None"


def _precision_error(precision: Any) -> ValueError:
    names = [*_PRECISION_NAMES, None]
    return ValueError(
        "Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {names},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        "- a lax.DotAlgorithm value;\n"
        f"but got {precision}."
    )


def canonicalize_precision(precision: Any) -> CanonicalPrecision:
    """None, or the (lhs, rhs) pair of `Precision`s that `precision` names.

    Raises:
        ValueError: `precision` is not a name, a `Precision` or a pair of them (dot algorithm
            presets are not supported by Lamina yet).
    """
    if precision is None:
        if "jax_default_matmul_precision" not in _TOUCHED:
            return None
        default = default_matmul_precision.value  # a name of a precision (presets refused)
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, str) and precision in _PRECISION_NAMES:
        p = _PRECISION_NAMES[precision]
        return p, p
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return precision[0], precision[1]
        if all(isinstance(p, str) for p in precision):
            first, second = (canonicalize_precision(p) for p in precision)
            if first is not None and second is not None:
                return first[0], second[0]
    raise _precision_error(precision)


def _dot_precision(precision: Any) -> Any:
    """`canonicalize_precision` for `dot_general`, which also takes the DEFAULT dot algorithm
    preset (or its name): kept as it is, as JAX prints it, and lowered as default precision."""
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        precision = DotAlgorithmPreset[precision]
    if isinstance(precision, DotAlgorithmPreset):
        if precision is not DotAlgorithmPreset.DEFAULT:
            raise NotImplementedError(f"dot algorithm preset {precision}: Lamina has DEFAULT only")
        return precision
    return canonicalize_precision(precision)


@functools.cache  # a function of the dtype alone, asked twice per dot_general staged
def _type_properties(dtype: np.dtype) -> tuple[bool, int, int, int, bool]:
    """XLA's order of "higher precision" types: complex, exponent, mantissa, bits, signed."""
    kind = c.kind_of(dtype)
    real = np.dtype(np.float32 if dtype.itemsize == 8 else np.float64) if kind == "c" else dtype
    real_kind = c.kind_of(real)
    info = dtypes.finfo(real) if real_kind == "f" else None
    return (
        kind == "c",
        info.maxexp if info is not None else -1,
        info.nmant if info is not None else -1,
        _bit_width(real),
        real_kind != "u",
    )


def _bit_width(dtype: np.dtype) -> int:
    kind = c.kind_of(dtype)
    if kind in "fc":
        return int(dtypes.finfo(dtype).bits)
    if kind in "iu":
        return int(dtypes.iinfo(dtype).bits)
    return 1


def _result_dtype(lhs: ShapedArray, rhs: ShapedArray, preferred: np.dtype | None) -> np.dtype:
    left, right = _type_properties(lhs.dtype), _type_properties(rhs.dtype)
    if left > right:
        dtype = lhs.dtype
    elif right > left:
        dtype = rhs.dtype
    else:
        if lhs.dtype != rhs.dtype:
            raise TypeError(f"lax.dot_general argument type error: {lhs.dtype}, {rhs.dtype}")
        dtype = lhs.dtype
    if preferred is None or preferred == dtype:
        return dtype
    if c.kind_of(dtype) != "f" and _bit_width(preferred) < _bit_width(dtype):
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type, got "
            f"preferred_element_type of {preferred} for result type of {dtype}."
        )
    return preferred


_FINE_DOTS: set[tuple[Any, ...]] = set()
"""Operand shapes and dimension numbers that passed the checks below: every dot_general
staged is checked, and a program (its derivative above all) repeats a few of them."""


def _check_dimension_numbers(
    lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: DimensionNumbers
) -> None:
    try:
        key = (lhs.shape, rhs.shape, dimension_numbers)
        if key in _FINE_DOTS:
            return
    except TypeError:  # dimension numbers given as lists (a direct bind): not remembered
        key = None
    _check_dimension_numbers_anew(lhs, rhs, dimension_numbers)
    if key is not None:
        if len(_FINE_DOTS) >= 4096:
            _FINE_DOTS.clear()
        _FINE_DOTS.add(key)


def _check_dimension_numbers_anew(
    lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: DimensionNumbers
) -> None:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    for side, aval, contract, batch in (
        ("lhs", lhs, lhs_contract, lhs_batch),
        ("rhs", rhs, rhs_contract, rhs_batch),
    ):
        if not all(0 <= d < aval.ndim for d in (*contract, *batch)):
            raise TypeError(
                f"dot_general requires {side} dimension numbers to be nonnegative and less "
                f"than the number of axes of the {side} value, got {side}_batch of {batch} "
                f"and {side}_contracting of {contract} for {side} of rank {aval.ndim}"
            )
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError(
            f"dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lhs_batch} and rhs_batch {rhs_batch}."
        )
    for side, dims, what in (
        ("lhs", lhs_batch, "batch"),
        ("rhs", rhs_batch, "batch"),
        ("lhs", lhs_contract, "contracting"),
        ("rhs", rhs_contract, "contracting"),
    ):
        if len(set(dims)) != len(dims):
            raise TypeError(
                f"dot_general requires {side} {what} dimensions to be distinct, got "
                f"{side}_{what} {dims}."
            )
    for side, batch, contract in (
        ("lhs", lhs_batch, lhs_contract),
        ("rhs", rhs_batch, rhs_contract),
    ):
        if set(batch) & set(contract):
            raise TypeError(
                f"dot_general requires {side} batch dimensions to be disjoint from contracting "
                f"dimensions, got {side}_batch {batch} and {side}_contracting {contract}."
            )
    lhs_batch_shape = tuple(lhs.shape[d] for d in lhs_batch)
    rhs_batch_shape = tuple(rhs.shape[d] for d in rhs_batch)
    if lhs_batch_shape != rhs_batch_shape:
        raise TypeError(
            f"dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {lhs_batch_shape} and {rhs_batch_shape}."
        )
    lhs_contract_shape = tuple(lhs.shape[d] for d in lhs_contract)
    rhs_contract_shape = tuple(rhs.shape[d] for d in rhs_contract)
    if lhs_contract_shape != rhs_contract_shape:
        raise TypeError(
            f"dot_general requires contracting dimensions to have the same shape, got "
            f"{lhs_contract_shape} and {rhs_contract_shape}."
        )


def _free_dims(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


dot_general_p: Final = Primitive("dot_general")


@abstract_eval_rules.register(dot_general_p)
def _dot_general_abstract_eval(
    lhs: AbstractValue,
    rhs: AbstractValue,
    *,
    dimension_numbers: DimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: np.dtype | None,
    out_sharding: Any,
) -> ShapedArray:
    left, right = c.array_aval("dot_general", lhs), c.array_aval("dot_general", rhs)
    _check_dimension_numbers(left, right, dimension_numbers)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    shape = (
        *(left.shape[d] for d in lhs_batch),
        *(left.shape[d] for d in _free_dims(left.ndim, lhs_contract, lhs_batch)),
        *(right.shape[d] for d in _free_dims(right.ndim, rhs_contract, rhs_batch)),
    )
    dtype = _result_dtype(left, right, preferred_element_type)
    return ShapedArray(shape, dtype, left.weak_type and right.weak_type)


def _compute_dtype(out: np.dtype) -> np.dtype:
    kind = c.kind_of(out)
    if kind == "b":
        return np.dtype(np.int32)
    if kind == "f" and out.itemsize < 4:
        return np.dtype(np.float32)
    return out


@impl_rules.register(dot_general_p)
def _dot_general_impl(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    dimension_numbers: DimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: np.dtype | None,
    out_sharding: Any,
) -> np.ndarray:
    out_dtype = _result_dtype(
        c.array_aval("dot_general", typeof(lhs)),
        c.array_aval("dot_general", typeof(rhs)),
        preferred_element_type,
    )
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs_names = [next(letters) for _ in range(np.ndim(lhs))]
    rhs_names = [next(letters) for _ in range(np.ndim(rhs))]
    for left, right in zip((*lhs_contract, *lhs_batch), (*rhs_contract, *rhs_batch), strict=True):
        rhs_names[right] = lhs_names[left]
    out_names = [lhs_names[d] for d in lhs_batch]
    out_names += [lhs_names[d] for d in _free_dims(np.ndim(lhs), lhs_contract, lhs_batch)]
    out_names += [rhs_names[d] for d in _free_dims(np.ndim(rhs), rhs_contract, rhs_batch)]
    work = _compute_dtype(out_dtype)
    spec = f"{''.join(lhs_names)},{''.join(rhs_names)}->{''.join(out_names)}"
    out = np.einsum(spec, np.asarray(lhs).astype(work), np.asarray(rhs).astype(work))
    if out_dtype.kind == "b":
        return np.asarray(out != 0)
    return np.asarray(out).astype(out_dtype)


def _dot_general_pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    # JAX prints the dimension numbers as lists and leaves out params that are None, and
    # out_sharding (the binder's type implies it).
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
    params = {k: v for k, v in eqn.params.items() if v is not None and k != "out_sharding"}
    params["dimension_numbers"] = (
        (list(lhs_contract), list(rhs_contract)),
        (list(lhs_batch), list(rhs_batch)),
    )
    return pp_eqn_with_params(eqn.replace(params=params), ctx, settings)


pp_eqn_rules.set(dot_general_p, _dot_general_pp)


@register_param_decoder(dot_general_p.name)
def _dot_general_decoder(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    """The params the print rule hides, and the dimension numbers as tuples (printed as lists)."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    hidden = {"precision": None, "preferred_element_type": None}
    out = {**hidden, "out_sharding": type_sharding(outs[0], ins) if outs else None, **params}
    out["dimension_numbers"] = dims
    return out


def _index_tuple(dims: Any) -> tuple[int, ...]:
    if isinstance(dims, (int, np.integer)):
        return (int(dims),)
    return tuple(int(d) for d in dims)


def dot_general(
    lhs: Array,
    rhs: Array,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Contract `lhs` with `rhs` as `dimension_numbers` says; see `dot`."""
    return dot(
        lhs,
        rhs,
        dimension_numbers=dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def dot(
    lhs: Array,
    rhs: Array,
    *,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """General dot product: `dimension_numbers` is `((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`, inferred for plain matrix/vector products when None.

    Raises:
        ValueError: `dimension_numbers` is None but the operands are not vectors or matrices
            with matching inner dimension.
        TypeError: the dimension numbers or dtypes do not fit the operands.
    """
    lhs_shape = tuple(getattr(typeof(lhs), "shape", ()))
    rhs_shape = tuple(getattr(typeof(rhs), "shape", ()))
    if dimension_numbers is None:
        if 1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and lhs_shape[-1] == rhs_shape[0]:
            dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}"
            )
    out_sharding = _dot_out_sharding(out_sharding)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    numbers = (
        (_index_tuple(lhs_contract), _index_tuple(rhs_contract)),
        (_index_tuple(lhs_batch), _index_tuple(rhs_batch)),
    )
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type)
    )
    if CHECKED_SCOPES[0]:
        lhs, rhs = insert_pvary(lhs, rhs)
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=numbers,
        precision=_dot_precision(precision),
        preferred_element_type=preferred,
        out_sharding=out_sharding,
    )


def _dot_out_sharding(sharding: Any) -> Any:
    """`out_sharding` as JAX's `canonicalize_sharding` makes it (a bare spec names the mesh
    in context)."""
    if isinstance(sharding, PartitionSpec):
        return named_in_context(sharding)
    if sharding is not None and not isinstance(sharding, NamedSharding):
        raise TypeError(
            "`out_sharding` argument of dot_general only supports instances of "
            f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: {type(sharding)}"
        )
    return canonical_sharding(sharding)


def batch_matmul(lhs: Array, rhs: Array, precision: Any = None) -> Array:
    """Matrix product over the last two dimensions, batched over the leading ones."""
    lhs_ndim, rhs_ndim = len(typeof(lhs).shape), len(typeof(rhs).shape)  # type: ignore[attr-defined]  # array avals
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(
            f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, {rhs_ndim}"
        )
    if lhs_ndim != rhs_ndim:
        raise ValueError(
            f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, {rhs_ndim}"
        )
    batch = tuple(range(lhs_ndim - 2))
    return dot_general(
        lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)), precision=precision
    )


__all__ = [
    "Precision",
    "batch_matmul",
    "dot",
    "dot_general",
    "dot_general_p",
]
