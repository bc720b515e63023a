"""Checkify rules of lax's primitives: the automatic checks, and `check` made functional.

NaN checks follow the primitives that can make a NaN from finite operands (JAX's list), the
division check looks for zero divisors, and the index checks compare the start indices of
slices, gathers and scatters with the operand's bounds (their payload: the first
out-of-bounds index, its axis and the axis size). Each check is added only if its category
is enabled.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.callbacks import check_p
from lamina_core.checkify._errors import (
    DivisionByZeroError,
    Error,
    NaNError,
    OOBError,
    assert_func,
    init_error,
    update_error,
)
from lamina_core.checkify._interpreter import EnabledErrors, checkify_rules
from lamina_core.ir import Primitive, current_source_info, dtypes
from lamina_core.tree import tree_util


def check_nans(prim: Primitive, error: Error, enabled_errors: EnabledErrors, out: Any) -> Error:
    """`error` with a NaN check of `prim`'s result(s) `out`."""
    if NaNError not in enabled_errors:
        return error

    def isnan(x: Any) -> Any:
        if dtypes.issubdtype(x.dtype, dtypes.prng_key):
            return False
        return jnp.any(jnp.isnan(x))

    any_nans = jnp.any(jnp.array([isnan(x) for x in out])) if prim.multiple_results else isnan(out)
    return assert_func(error, any_nans, NaNError(current_source_info(), prim.name))


def _nan_rule(
    prim: Primitive, error: Error, enabled_errors: EnabledErrors, *args: Any, **params: Any
) -> tuple[Error, Any]:
    out = prim.bind(*args, **params)
    return check_nans(prim, error, enabled_errors, out), out


_NAN_PRIMITIVES = [
    "acos_p",
    "acosh_p",
    "add_p",
    "asin_p",
    "asinh_p",
    "atan2_p",
    "atan_p",
    "atanh_p",
    "bessel_i0e_p",
    "bessel_i1e_p",
    "cbrt_p",
    "conv_general_dilated_p",
    "cos_p",
    "cosh_p",
    "cumlogsumexp_p",
    "cummax_p",
    "cummin_p",
    "cumprod_p",
    "cumsum_p",
    "digamma_p",
    "dot_general_p",
    "erf_inv_p",
    "erf_p",
    "erfc_p",
    "exp_p",
    "expm1_p",
    "fft_p",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac_p",
    "integer_pow_p",
    "lgamma_p",
    "linear_solve_p",
    "log1p_p",
    "log_p",
    "logistic_p",
    "mul_p",
    "pad_p",
    "pow_p",
    "psum_p",
    "reduce_p",
    "reduce_prod_p",
    "reduce_sum_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "regularized_incomplete_beta_p",
    "rem_p",
    "rng_uniform_p",
    "rsqrt_p",
    "sin_p",
    "sinh_p",
    "sqrt_p",
    "sub_p",
    "tan_p",
    "tanh_p",
]
"""The primitives that can make a NaN, by their names in `lax` (JAX's list)."""

for _name in _NAN_PRIMITIVES:
    _prim: Primitive = getattr(lax, _name)
    checkify_rules.set(_prim, functools.partial(_nan_rule, _prim))


@checkify_rules.register(lax.div_p)
def _div_rule(error: Error, enabled_errors: EnabledErrors, x: Any, y: Any) -> tuple[Error, Any]:
    if DivisionByZeroError in enabled_errors:
        any_zero = jnp.any(jnp.equal(y, 0))
        error = assert_func(error, any_zero, DivisionByZeroError(current_source_info()))
    return _nan_rule(lax.div_p, error, enabled_errors, x, y)


def oob_payload(
    oob_mask: Any, indices: Any, dims_map: Sequence[int], operand_shape: tuple[int, ...]
) -> Any:
    """The first out-of-bounds index of `indices`, its operand axis and that axis's size."""
    flat_idx = jnp.argmin(jnp.logical_not(oob_mask))
    multi_idx = jnp.unravel_index(flat_idx, indices.shape)
    oob_axis = jnp.array(dims_map)[multi_idx[-1]]
    oob_axis_size = jnp.array(operand_shape)[oob_axis]
    oob_index = jnp.ravel(indices)[flat_idx]
    return jnp.array([oob_index, oob_axis, oob_axis_size], dtype=np.int32)


def _oob_error(
    error: Error, prim_name: str, operand: Any, oob_mask: Any, indices: Any, dims: Sequence[int]
) -> Error:
    payload = oob_payload(oob_mask, indices, dims, operand.shape)
    exc = OOBError(current_source_info(), prim_name, operand.shape, payload)
    return assert_func(error, jnp.any(oob_mask), exc)


@checkify_rules.register(lax.dynamic_slice_p)
def _dynamic_slice_rule(
    error: Error, enabled_errors: EnabledErrors, operand: Any, *starts: Any, slice_sizes: Any
) -> tuple[Error, Any]:
    out = lax.dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes)
    if OOBError not in enabled_errors:
        return error, out
    indices = jnp.array(starts)
    operand_dims = np.array(operand.shape, dtype=indices.dtype)
    sizes = np.array(slice_sizes, dtype=indices.dtype)
    oob_mask = (indices < 0) | (indices + sizes > operand_dims)
    dims = range(np.ndim(operand))
    return _oob_error(error, "dynamic_slice", operand, oob_mask, indices, dims), out


@checkify_rules.register(lax.dynamic_update_slice_p)
def _dynamic_update_slice_rule(
    error: Error, enabled_errors: EnabledErrors, operand: Any, update: Any, *starts: Any
) -> tuple[Error, Any]:
    out = lax.dynamic_update_slice_p.bind(operand, update, *starts)
    if OOBError not in enabled_errors:
        return error, out
    operand_dims = np.array(operand.shape)
    update_dims = np.array(update.shape)
    indices = jnp.array(starts)
    oob_mask = (indices < 0) | (indices + update_dims > operand_dims)
    dims = range(np.ndim(operand))
    return _oob_error(error, "dynamic_update_slice", operand, oob_mask, indices, dims), out


@checkify_rules.register(lax.gather_p)
def _gather_rule(
    error: Error, enabled_errors: EnabledErrors, operand: Any, indices: Any, **params: Any
) -> tuple[Error, Any]:
    out = lax.gather_p.bind(operand, indices, **params)
    if OOBError not in enabled_errors:
        return error, out
    dnums = params["dimension_numbers"]
    start_index_map = np.array(dnums.start_index_map)
    num_batch_dims = len(indices.shape) - 1
    upper_bound = np.array(operand.shape)[start_index_map]
    upper_bound -= np.array(params["slice_sizes"])[start_index_map]
    bound = jnp.expand_dims(upper_bound, axis=tuple(range(num_batch_dims)))
    oob_mask = (indices < 0) | (indices > bound.astype(indices.dtype))
    return _oob_error(error, "gather", operand, oob_mask, indices, dnums.start_index_map), out


def _scatter_oob(operand: Any, indices: Any, updates: Any, dnums: Any) -> tuple[Any, Any]:
    slice_sizes = []
    pos = 0
    for i in range(len(operand.shape)):
        if i in dnums.inserted_window_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates.shape[dnums.update_window_dims[pos]])
            pos += 1
    upper = np.array(
        [operand.shape[i] - slice_sizes[i] for i in dnums.scatter_dims_to_operand_dims], np.int64
    )
    upper = np.minimum(upper, np.iinfo(indices.dtype).max)
    bound = lax.broadcast_in_dim(upper, indices.shape, (len(indices.shape) - 1,))
    lower_oob = jnp.less(indices, 0)
    upper_oob = jnp.greater(indices, bound.astype(indices.dtype))
    oob_mask = jnp.logical_or(lower_oob, upper_oob)
    payload = oob_payload(oob_mask, indices, dnums.scatter_dims_to_operand_dims, operand.shape)
    return jnp.any(oob_mask), payload


def _scatter_rule(
    prim: Primitive,
    error: Error,
    enabled_errors: EnabledErrors,
    operand: Any,
    indices: Any,
    updates: Any,
    **params: Any,
) -> tuple[Error, Any]:
    out = prim.bind(operand, indices, updates, **params)
    if OOBError not in enabled_errors:
        return error, out
    out_of_bounds, payload = _scatter_oob(operand, indices, updates, params["dimension_numbers"])
    exc = OOBError(current_source_info(), prim.name, operand.shape, payload)
    error = assert_func(error, out_of_bounds, exc)
    return check_nans(prim, error, enabled_errors, out), out


for _prim in (lax.scatter_p, lax.scatter_add_p, lax.scatter_mul_p, lax.scatter_min_p,
              lax.scatter_max_p):  # fmt: skip
    checkify_rules.set(_prim, functools.partial(_scatter_rule, _prim))


@checkify_rules.register(check_p)
def _check_discharge_rule(
    error: Error, enabled_errors: EnabledErrors, *args: Any, err_tree: Any, debug: bool
) -> tuple[Error, list[Any]]:
    """A `check` (or `check_error`) merged into the error. Errors of disabled categories are
    dropped, as JAX drops them."""
    new_error: Error = tree_util.tree_unflatten(err_tree, args)
    discharged, dropped = error, init_error
    for effect, pred in new_error._pred.items():
        code, payload = new_error._code[effect], new_error._payload[effect]
        if effect.error_type in enabled_errors:
            discharged = update_error(discharged, pred, code, {}, payload, effect)
        else:
            dropped = update_error(dropped, pred, code, {}, payload, effect)
    discharged = discharged._replace(_metadata={**new_error._metadata, **discharged._metadata})
    return discharged, []
