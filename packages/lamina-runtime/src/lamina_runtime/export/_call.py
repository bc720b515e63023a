"""The `call_exported` primitive: an exported function called from a program.

`call_exported[exported=...] c1 .. ck x1 .. xn` applies the exported function to `x1 .. xn`;
`c1 .. ck` are the constants the function closed over when it was exported, which its module
takes as leading arguments (seed 000). They are operands, not baked into the module, so a
program calling the function hoists them as its own const args like any other closed-over
array: a device array is passed from its buffer, never copied, and never inlined.

Its abstract evaluation checks the arguments against the exported types (JAX's errors); its
lowering merges the exported module into the caller's (`lamina_mlir.call_portable_artifact`).
Called eagerly, it runs as any primitive does: one small compiled program, cached.

This module knows the exported function only through `CallTarget`, what the primitive reads.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from typing import Any, Final, Protocol

import numpy as np

from lamina_core import dtypes, tree_util
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    is_symbolic_dim,
)
from lamina_mlir import LoweringRuleContext, call_portable_artifact, lowering_rules
from lamina_runtime.export._safety import DisabledSafetyCheck, platform_index
from lamina_runtime.export._solve import solve_dimensions

call_exported_p: Final = Primitive("call_exported", multiple_results=True)


class CallTarget(Protocol):
    """What `call_exported` needs of the function it calls (an `Exported`)."""

    @property
    def fun_name(self) -> str: ...
    @property
    def in_tree(self) -> Any: ...
    @property
    def in_avals(self) -> tuple[ShapedArray, ...]: ...
    @property
    def out_avals(self) -> tuple[ShapedArray, ...]: ...
    @property
    def const_avals(self) -> tuple[ShapedArray, ...]: ...
    @property
    def platforms(self) -> tuple[str, ...]: ...
    @property
    def disabled_safety_checks(self) -> Sequence[DisabledSafetyCheck]: ...
    @property
    def mlir_module_serialized(self) -> bytes: ...
    @property
    def module_kept_var_idx(self) -> tuple[int, ...]: ...


def arg_description(in_tree: Any, index: int, dim: int | None = None) -> str:
    """JAX's name for flat argument `index` of a call structured `(args, kwargs)` as
    `in_tree`: `args[0]`, `kwargs['x']`, with `.shape[d]` for a dimension."""
    placeholders = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    path, _ = tree_util.tree_flatten_with_path(placeholders)[0][index]
    head = "args" if path[0] == tree_util.SequenceKey(0) else "kwargs"
    text = f"{head}{tree_util.keystr(tuple(path[1:]))}"
    return text if dim is None else f"{text}.shape[{dim}]"


def check_arguments(exported: CallTarget, avals: Sequence[AbstractValue]) -> dict[str, int]:
    """JAX's `ValueError` for arguments whose rank, dtype or shape is not what the function
    was exported for; the values of its dimension variables (none without symbolic shapes)."""
    for index, (expected, got) in enumerate(zip(exported.in_avals, avals, strict=True)):
        if not isinstance(got, ShapedArray):
            raise ValueError(f"Expected ShapedArray but got: {got}")
        if len(expected.shape) != len(got.shape):
            raise ValueError(
                f"Rank mismatch for {arg_description(exported.in_tree, index)}: expected "
                f"{expected.shape} and called with {got.shape}"
            )
        if expected.dtype != got.dtype:
            raise ValueError(
                f"Dtype mismatch for {arg_description(exported.in_tree, index)}: expected "
                f"{expected.dtype} and called with {got.dtype}"
            )
        for dim, (want, have) in enumerate(zip(expected.shape, got.shape, strict=True)):
            if not is_symbolic_dim(want) and want != have:
                raise ValueError(
                    f"Shape mismatch for {arg_description(exported.in_tree, index, dim)} "
                    f"(expected same constant): expected {expected.shape} and called with "
                    f"{got.shape}"
                )
    if not any(is_symbolic_dim(d) for a in exported.in_avals for d in a.shape):
        return {}
    return solve_dimensions(exported.in_tree, exported.in_avals, avals)


@abstract_eval_rules.register(call_exported_p)
def _call_exported_abstract_eval(
    *avals: AbstractValue, exported: CallTarget
) -> list[AbstractValue]:
    n_consts = len(exported.const_avals)
    if len(avals) != n_consts + len(exported.in_avals):
        raise ValueError(
            f"call_exported of {exported.fun_name!r}: {len(avals)} operands for "
            f"{n_consts} constants and {len(exported.in_avals)} arguments"
        )
    env = check_arguments(exported, avals[n_consts:])
    if not env:
        return list(exported.out_avals)
    return [a.update(shape=tuple(_value(d, env) for d in a.shape)) for a in exported.out_avals]


def _value(d: Any, env: dict[str, int]) -> int:
    return d.evaluate(env) if is_symbolic_dim(d) else d  # type: ignore[no-any-return]


@lowering_rules.register(call_exported_p)
def _call_exported_lowering(
    ctx: LoweringRuleContext, *operands: Any, exported: CallTarget
) -> Sequence[Any]:
    platforms = exported.platforms
    index = platform_index(exported.fun_name, platforms, exported.disabled_safety_checks)
    n_consts = len(exported.const_avals)
    consts, args = operands[:n_consts], operands[n_consts:]
    kept = [args[i] for i in exported.module_kept_var_idx]
    return call_portable_artifact(
        ctx,
        exported.mlir_module_serialized,
        f"call_exported_{exported.fun_name}",
        [*consts, *kept],
        platform_index=index if len(platforms) > 1 else None,
    )


@dataclasses.dataclass(frozen=True, eq=False)
class _Physical:
    """An exported function seen with bool arguments where it takes float0 ones (JAX's
    physical form of float0). Identity is intended: one per exported function, a cache key."""

    target: weakref.ref[Any]
    """The exported function (weakly: the table below must not keep it alive)."""
    in_avals: tuple[ShapedArray, ...]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target(), name)


_physical: Final[weakref.WeakKeyDictionary[Any, _Physical]] = weakref.WeakKeyDictionary()


@impl_rules.register(call_exported_p)
def _call_exported_with_float0(*operands: Any, exported: CallTarget) -> Any:
    """Eagerly, with float0 operands (cotangents of integer results), which have no device
    representation: the call runs with bool zeros in their place. The module never reads
    them (nothing computed can depend on a float0), so it drops them."""
    n_consts = len(exported.const_avals)
    kept = {n_consts + i for i in exported.module_kept_var_idx}
    if any(i in kept and _is_float0(x) for i, x in enumerate(operands)):
        raise NotImplementedError(
            f"calling {exported.fun_name}: its module reads a float0 argument"
        )
    view = _physical.get(exported)
    if view is None:
        avals = tuple(
            ShapedArray(a.shape, np.dtype(bool)) if a.dtype == dtypes.float0 else a
            for a in exported.in_avals
        )
        view = _physical.setdefault(exported, _Physical(weakref.ref(exported), avals))
    physical = [np.zeros(np.shape(x), bool) if _is_float0(x) else x for x in operands]
    return call_exported_p.bind(*physical, exported=view)


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == dtypes.float0
