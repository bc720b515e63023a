"""`fwd_and_bwd`: a function's forward and backward passes as two (jitted) functions, JAX's.

The forward returns the pullback itself as the residuals: the pullback is a pytree whose leaves
are the residuals, so it leaves one `jit` and enters the other, and the backward compiles once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import vjp
from lamina_runtime import jit


def _check_argnums(argnums: Any) -> int | tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return argnums
    try:
        return tuple(int(a) for a in argnums)
    except TypeError:
        raise TypeError(f"argnums must be an int or a sequence of ints, got {argnums!r}") from None


def fwd_and_bwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    jitted: bool = True,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """`fwd(*args)` gives `(fun(*args), residuals[, aux])`; `bwd(residuals, ct)` gives the
    cotangents of the arguments `argnums` names (one, unpacked, for an int `argnums`).

    Args:
        fun: the function to differentiate.
        argnums: the positional arguments to differentiate with respect to.
        has_aux: `fun` returns `(output, aux)`; `aux` is returned by `fwd` last.
        jitted: return `jit`s of both (the default: the backward then compiles once).
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    nums = _check_argnums(argnums)
    picked = (nums,) if isinstance(nums, int) else nums

    def fwd(*args: Any) -> Any:
        def partial_fun(*dyn: Any) -> Any:
            full = list(args)
            for i, x in zip(picked, dyn, strict=True):
                full[i] = x
            return fun(*full)

        return vjp(partial_fun, *(args[i] for i in picked), has_aux=has_aux)

    def bwd(f_vjp: Callable[[Any], Any], outgrad: Any) -> Any:
        cts = f_vjp(outgrad)
        return cts[0] if isinstance(nums, int) else cts

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
