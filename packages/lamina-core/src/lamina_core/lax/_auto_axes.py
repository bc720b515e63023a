"""The `auto_axes` cast, for the functions that compute under it (JAX's samplers and
`jnp.percentile` given an `out_sharding`).

`auto_axes(f, out_sharding=..., axes=...)` runs `f` with mesh `axes` made Auto and reshards its
result to `out_sharding`; it needs `reshard` of concrete values, which lives in the runtime, so
the umbrella installs it (`install_auto_axes`) as it loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

AutoAxes = Callable[..., Callable[..., Any]]
"""`auto_axes(f, out_sharding=..., axes=...)`: `f` run with `axes` made Auto, its result
resharded to `out_sharding` (JAX's `jax.sharding.auto_axes`)."""

_installed: list[AutoAxes] = []


def install_auto_axes(auto_axes: AutoAxes) -> None:
    """Give lamina-core the `auto_axes` cast (the umbrella's, over the runtime's reshard)."""
    _installed[:] = [auto_axes]


def under_auto_axes(f: Callable[..., Any], out_sharding: Any) -> Callable[..., Any]:
    """`f` under `auto_axes` towards `out_sharding` (a canonical `NamedSharding`), its mesh's
    Explicit axes made Auto.

    Raises:
        NotImplementedError: no `auto_axes` is installed (only lamina-core is loaded).
    """
    if not _installed:
        raise NotImplementedError("out_sharding here needs `lamina` (its auto_axes)")
    return _installed[0](f, out_sharding=out_sharding, axes=out_sharding.mesh.explicit_axes)


__all__ = ["install_auto_axes", "under_auto_axes"]
