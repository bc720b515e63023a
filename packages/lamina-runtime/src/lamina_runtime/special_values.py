"""`jax_debug_nans` / `jax_debug_infs`: NaN and infinity checks on computed values.

With either option on, every primitive applied eagerly and every jitted call has its outputs
checked. A jitted call whose outputs hold a bad value is run again without `jit`, op by op, so
that the error names the primitive that produced it, as JAX does. So is a `jit` equation
applied eagerly (a jitted function under `grad`, `vmap` or `jvp`, a backward pass): its jaxpr
is evaluated equation by equation, where JAX runs the function again under the transformation
(the same primitives, so the same error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NoReturn

import numpy as np

from lamina_core import tree_util
from lamina_core.config import config, debug_infs, debug_nans
from lamina_core.ir import Primitive
from lamina_core.trace import eval_jaxpr
from lamina_core.transforms import jit_p


class SpecialValueFound(Exception):
    """A checked output held a NaN (`kind` "nan") or an infinity ("inf")."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


_OPTIONS: Final = frozenset({debug_nans.name, debug_infs.name})


def checking() -> bool:
    # Called for every eager operation: a set test answers while the options were never set.
    if _OPTIONS.isdisjoint(config.touched):
        return False
    return debug_nans.value or debug_infs.value


def find_special(values: Iterable[Any]) -> None:
    """Raise `SpecialValueFound` for the first floating leaf holding a value being checked for."""
    for leaf in values:
        dtype = getattr(leaf, "dtype", None)
        if dtype is None or not np.issubdtype(dtype, np.inexact):
            continue
        host = np.asarray(leaf)
        if debug_nans.value and np.isnan(host).any():
            raise SpecialValueFound("nan")
        if debug_infs.value and np.isinf(host).any():
            raise SpecialValueFound("inf")


def check_primitive_outputs(
    prim: Primitive, args: Sequence[Any], params: dict[str, Any], outs: Any
) -> None:
    """An eagerly applied primitive's outputs; FloatingPointError names the primitive (for a
    `jit` equation, the primitive inside it that made the bad value)."""
    try:
        find_special(outs if isinstance(outs, list) else [outs])
    except SpecialValueFound as found:
        if prim is jit_p:
            _announce()
            closed = params["jaxpr"]
            eval_jaxpr(closed.jaxpr, closed.consts, *args)  # raises at the offending primitive
            _not_reproduced(str(params["name"]), found.kind)
        raise FloatingPointError(
            f"invalid value ({found.kind}) encountered in {prim.name}"
        ) from None


def _announce() -> None:
    # JAX's words, "nan" even for an infinity.
    print(
        "Invalid nan value encountered in the output of a jax.jit function. "
        "Calling the de-optimized version."
    )


def check_jit_outputs(
    name: str, fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], outs: Any
) -> None:
    """A jitted call's outputs: on a bad value, find the primitive by running `fun` unjitted."""
    try:
        find_special(tree_util.tree_leaves(outs))
    except SpecialValueFound as found:
        _announce()
        # Only this jit is removed: jitted functions it calls check their own outputs.
        fun(*args, **kwargs)  # raises FloatingPointError at the offending primitive
        _not_reproduced(name, found.kind)


def _not_reproduced(name: str, kind: str) -> NoReturn:
    raise FloatingPointError(
        f"('jit({name})', '{kind}'). Because jax_config.debug_nans.value "
        "and/or config.jax_debug_infs is set, the de-optimized function (i.e., the function as "
        "if the `jit` decorator were removed) was called in an attempt to get a more precise "
        "error message. However, the de-optimized function did not produce invalid values "
        "during its execution. This behavior can result from `jit` optimizations causing the "
        "invalid value to be produced. It may also arise from having nan/inf literals as inputs "
        "or outputs, like `jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to "
        "avoid the invalid value by removing the `jit` decorator, at the cost of losing "
        "optimizations. \n\nIf you see this error, consider opening a bug report at "
        "https://github.com/jax-ml/jax."
    ) from None
