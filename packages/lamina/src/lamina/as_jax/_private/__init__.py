"""Lamina's stand-ins for the few JAX private modules that widely used libraries import, served
by the alias as `jax._src` (this package) and `jax._src.X` (its modules in `SERVED`) to code that
is not the runtime's; no other private path is served (docs/as-jax.md, "Private paths").

They are Lamina's modules, not JAX's: each holds only what those libraries reach and maps it
onto Lamina (chex's `restrict_backends` wraps `compiler.backend_compile_and_load`; chex's
`set_n_cpu_devices` reads `xla_bridge._backends`; equinox imports `traceback_util`, `dispatch`
and `dtypes`; flax `traceback_util`, `dtypes`, `core`, `checkify`, `state.types` and
`tree_util`; numpyro `core`). They never enter `sys.modules` under JAX's names, which stay real
JAX's for the runtime. A served path's parent packages are not served (`jax._src.state` is
refused; `state` here only holds `types`). This package must not know the alias's machinery.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final, NoReturn

from lamina.as_jax._private import (
    checkify,
    compiler,
    core,
    dispatch,
    dtypes,
    traceback_util,
    tree_util,
    xla_bridge,
)
from lamina.as_jax._private.state import types as state_types

SERVED: Final[dict[str, ModuleType]] = {
    "jax._src.checkify": checkify,
    "jax._src.compiler": compiler,
    "jax._src.core": core,
    "jax._src.dispatch": dispatch,
    "jax._src.dtypes": dtypes,
    "jax._src.state.types": state_types,
    "jax._src.traceback_util": traceback_util,
    "jax._src.tree_util": tree_util,
    "jax._src.xla_bridge": xla_bridge,
}
"""Each private path served, and Lamina's module for it."""

PACKAGE: Final = "jax._src"


def refused(name: str) -> ModuleNotFoundError:
    """The error for private path `name`, which is not served."""
    return ModuleNotFoundError(
        f"lamina.as_jax: {name} is not provided by Lamina (JAX's private modules are never "
        f"served, except {', '.join(sorted(SERVED))})",
        name=name,
    )


def __getattr__(name: str) -> NoReturn:
    # `jax._src.core` read as an attribute (after `import jax`): the same refusal as an import.
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(str(refused(f"{PACKAGE}.{name}"))) from None
