"""Lamina: JAX's tracing compiler core as a stack of small typed libraries.

`import lamina as jax` runs JAX code for everything Lamina implements. This package only
re-exports the layers' public names; it holds no logic of its own.
"""

import gc as _gc
import importlib as _importlib
import typing as _typing

# Importing Lamina (and the JAX runtime under it) allocates a few hundred thousand objects;
# the cyclic collector would walk that growing heap several times over for nothing (measured:
# 50-80 ms of Lamina's 250 ms). It runs again as soon as the import is done, failed or not.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from lamina._umbrella import *  # noqa: F403
    from lamina._umbrella import __all__ as _eager_names
    from lamina._umbrella import __version__ as __version__
finally:
    if _collecting:
        _gc.enable()

if _typing.TYPE_CHECKING:
    from lamina import ad as ad
    from lamina import api_util as api_util
    from lamina import core as core
    from lamina import dlpack as dlpack
    from lamina import example_libraries as example_libraries
    from lamina import export as export
    from lamina import extend as extend
    from lamina import ffi as ffi
    from lamina import flatten_util as flatten_util
    from lamina import image as image
    from lamina import interpreters as interpreters
    from lamina import lib as lib
    from lamina import monitoring as monitoring
    from lamina import ops as ops
    from lamina import profiler as profiler
    from lamina import scipy as scipy
    from lamina._dslice import ds as ds
    from lamina._fwd_and_bwd import fwd_and_bwd as fwd_and_bwd
    from lamina._smap import smap as smap

_LAZY_SUBMODULES = frozenset(
    {
        "ad",
        "api_util",
        "core",
        "dlpack",
        "example_libraries",
        "export",
        "extend",
        "ffi",
        "flatten_util",
        "image",
        "interpreters",
        "lib",
        "monitoring",
        "ops",
        "profiler",
        "scipy",
    }
)
"""Imported on first use: most programs never touch them, and they cost start-up time."""

_LAZY_FUNCTIONS = {
    "ds": "lamina._dslice",
    "fwd_and_bwd": "lamina._fwd_and_bwd",
    "smap": "lamina._smap",
}
"""Functions whose modules are imported on first use, for the same reason."""

__all__ = sorted([*_eager_names, *_LAZY_SUBMODULES, *_LAZY_FUNCTIONS])


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"lamina.{name}")
    if name in _LAZY_FUNCTIONS:
        return getattr(_importlib.import_module(_LAZY_FUNCTIONS[name]), name)
    raise AttributeError(f"module 'lamina' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_SUBMODULES, *_LAZY_FUNCTIONS})
