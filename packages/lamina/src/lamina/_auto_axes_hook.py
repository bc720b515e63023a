"""Gives lamina-core the `auto_axes` cast that samplers' and `jnp.percentile`'s `out_sharding`
compute under (lamina-core has no reshard of concrete values of its own).

Installed by `lamina.numpy` and `lamina.random` as they load; the cast's module (and the
runtime's reshard behind it) loads on first use, so `import lamina` does not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina_core.lax import install_auto_axes


def _auto_axes(f: Callable[..., Any], **kwargs: Any) -> Callable[..., Any]:
    from lamina._axis_casts import auto_axes

    cast: Callable[..., Any] = auto_axes(f, **kwargs)
    return cast


install_auto_axes(_auto_axes)
