"""`platform_dependent` and `pcast` as they behave on Lamina's one CPU platform, without a mesh.

`platform_dependent` picks the `cpu` branch (else `default`) and calls it, as JAX does when it
knows the platform at trace time; it does not stage JAX's `platform_index` and multi-branch
`cond`, since Lamina lowers for the CPU only. `pcast` over no axes is the identity; over named
axes it needs `shard_map`'s varying types, which Lamina lacks, and says so as JAX does outside
`shard_map`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PCAST_TARGETS = ("reduced", "unreduced", "varying")


def platform_dependent(
    *args: Any, default: Callable[..., Any] | None = None, **per_platform: Callable[..., Any]
) -> Any:
    """The result of the branch for the CPU (`cpu=`), or of `default`, on `args`."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    chosen = per_platform.get("cpu", default)
    if chosen is None:
        platforms = tuple((name,) for name in per_platform)
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' "
            "not found for platform cpu"
        )
    return chosen(*args)


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """`x` with its named-axis type changed (`to`: varying, reduced or unreduced); the
    identity over no axes."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
    if not axis_name:
        return x
    if to not in _PCAST_TARGETS:
        allowed = "{" + ", ".join(repr(t) for t in _PCAST_TARGETS) + "}"
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {allowed}")
    raise ValueError("pvary should be called under jax.shard_map.")


__all__ = ["pcast", "platform_dependent"]
