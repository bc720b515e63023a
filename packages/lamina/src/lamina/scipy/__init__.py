"""`lamina.scipy`: as `jax.scipy` (see `lamina_core.scipy`): `special`, `stats`, `linalg`, `fft`,
`signal`; and, imported on first use, `ndimage`, `integrate`, `interpolate`, `cluster`,
`optimize` and `sparse`."""

import importlib as _importlib
import typing as _typing

from lamina.scipy import fft, linalg, signal, special, stats

if _typing.TYPE_CHECKING:
    from lamina.scipy import cluster as cluster
    from lamina.scipy import integrate as integrate
    from lamina.scipy import interpolate as interpolate
    from lamina.scipy import ndimage as ndimage
    from lamina.scipy import optimize as optimize
    from lamina.scipy import sparse as sparse

_LAZY_SUBMODULES = frozenset(
    {"cluster", "integrate", "interpolate", "ndimage", "optimize", "sparse"}
)
"""Imported on first use: few programs need them."""

__all__ = [
    "cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
    "sparse", "special", "stats",
]  # fmt: skip


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"lamina.scipy.{name}")
    raise AttributeError(f"module 'lamina.scipy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_SUBMODULES})
