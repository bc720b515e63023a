"""The alias itself: `jax` and `jax.X` resolve to `lamina` and `lamina.X`, strictly, while the
runtime under Lamina keeps real JAX (docs/as-jax.md).

JAX's public paths (`jax`, `jax.numpy`, `jax.experimental.X`: no component starting with `_`)
and its private ones (`jax._src...`) are handled apart:

- `sys.modules`: each public `jax...` name Lamina has loaded is Lamina's module (`jax` is
  `lamina`); real JAX's public modules are kept aside. The private ones stay real JAX's, under
  their names: real JAX's runtime and jaxlib's C++ look them up by name while they run (e.g.
  `jax._src.sharding_impls`, for each shard of a sharded array).
- a finder, first on `sys.meta_path`, for a public `jax.X` not loaded yet: `lamina.X` served
  under that name, or a `ModuleNotFoundError` naming it (never real JAX's module).
- `builtins.__import__`, which alone sees who imports before `sys.modules` is consulted. An
  import made by the runtime's own modules (JAX's, jaxlib's, the bridge's:
  `lamina_runtime.is_runtime_module`) gets real JAX, e.g. the lazy
  `from jax.experimental import multihost_utils` of JAX's `device_put`; a real module not
  loaded yet is loaded with real JAX's public modules put back for the time of that import
  (`_real_view`). An import statement of anyone else that names a private path
  (`from jax._src import api`) raises `ModuleNotFoundError`, except the few in
  `_private.SERVED`: Lamina's own stand-ins for what widely used libraries reach
  (`jax._src.compiler`, whose functions Lamina's runtime compiles through while the alias is
  on, so chex's `restrict_backends` sees each compilation; `jax._src.xla_bridge`, for chex's
  `_backends`). They are served to the import statement alone, and as the attribute
  `jax._src` (`lamina._src`, while the alias is on), never under JAX's names in `sys.modules`.

jaxlib's C++ keeps one public module's class in a static (`jax.core.ShapedArray`): the bridge
has it looked up when the backend starts, in the real view the alias lends it
(`lamina_runtime.set_real_jax_view`).
"""

from __future__ import annotations

import _imp
import builtins
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType, ModuleType
from typing import Any, Final

import lamina
import lamina_runtime
from lamina.as_jax import _private

ALIAS: Final = "jax"
TARGET: Final = "lamina"
_LAMINA_ONLY: Final = frozenset({"as_jax"})
"""Lamina's modules with no JAX counterpart: never served under `jax`."""
_PRIVATE_ATTRIBUTE: Final = _private.PACKAGE.rpartition(".")[2]
"""`_src`: `lamina._src` is the stand-ins' package while the alias is on."""
JAX_VERSION: Final = "0.10.2"
"""The JAX release whose API Lamina implements: `jax.__version__` (and `jax.version`'s) while
the alias is on, since libraries compare it with JAX's releases to choose which API to call."""
_VERSION_NAMES: Final = ("__version__", "__version_info__")

ImportFunction = Callable[..., ModuleType]


def is_alias_name(name: str) -> bool:
    """`jax` or one of its submodules (not `jaxlib`, `jax_plugins`, `jaxtyping`...)."""
    return name == ALIAS or name.startswith(ALIAS + ".")


def is_public(name: str) -> bool:
    """A public module path: no component starts with `_`."""
    return not any(part.startswith("_") for part in name.split("."))


def _alias_of(name: str) -> str | None:
    """The `jax...` name a Lamina module is served under, if it is one of JAX's public paths."""
    if name != TARGET and not name.startswith(TARGET + "."):
        return None
    parts = name.split(".")[1:]
    if not is_public(name) or (parts and parts[0] in _LAMINA_ONLY):
        return None
    return ".".join([ALIAS, *parts])


def _not_provided(name: str, why: str) -> ModuleNotFoundError:
    return ModuleNotFoundError(
        f"lamina.as_jax: {name} is not provided by Lamina ({why})", name=name
    )


def _private_import(name: str, fromlist: Sequence[str]) -> ModuleType:
    """`__import__`'s answer to a user's import statement naming private path `name`: one of
    Lamina's stand-ins (`_private.SERVED`) or their package, else a `ModuleNotFoundError`."""
    if name == _private.PACKAGE:
        for item in fromlist:
            if f"{name}.{item}" not in _private.SERVED:
                raise _private.refused(f"{name}.{item}")
        return _private if fromlist else lamina
    module = _private.SERVED.get(name)
    if module is None:
        raise _private.refused(name)
    return module if fromlist else lamina  # `import jax._src.X`: reached through `lamina._src`


def lamina_module(name: str) -> ModuleType:
    """Lamina's module for the `jax...` name `name`.

    Raises:
        ModuleNotFoundError: Lamina has no such module (the message names both).
    """
    if not is_public(name):
        raise _private.refused(name)
    target = TARGET + name[len(ALIAS) :]
    if _alias_of(target) != name:
        raise _not_provided(name, f"{target} is Lamina's own")
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if target == missing or target.startswith(missing + "."):
            raise _not_provided(name, f"no module {target}") from None
        raise  # a module of Lamina's failed to import: its own error, unmasked


@dataclass
class _Alias:
    """What one `install()` changed: to run the alias, and to undo it."""

    real: dict[str, ModuleType]
    """Real JAX's public modules by name: those `install()` took out of `sys.modules`, and
    those loaded for the runtime since."""
    original_import: ImportFunction
    finder: _Finder
    lamina_versions: dict[str, Any] = field(default_factory=dict)
    """Lamina's own `__version__` and `__version_info__`, put back by `uninstall()`."""
    loading_real: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)


_state: _Alias | None = None
_install_lock = threading.Lock()


class _Loader(importlib.abc.Loader):
    """Hands the import system an existing Lamina module."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the module's __spec__ to the alias's; it stays Lamina's own.
        module.__spec__ = self._spec


def _importer_is_runtime(frame: FrameType | None) -> bool:
    """Whether the code that started the import under way (the first frame outside importlib
    and this module) is the runtime's."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not isinstance(name, str):
            return False
        if name != __name__ and name != "importlib" and not name.startswith("importlib."):
            return lamina_runtime.is_runtime_module(name)
        frame = frame.f_back
    return False


class _Finder(importlib.abc.MetaPathFinder):
    """A `jax...` module not in `sys.modules`: a public one is `lamina.X` or a
    `ModuleNotFoundError`; a private one is loaded from real JAX for the runtime only.

    Never returns None for a public name: the next finder would look for the file in the
    parent's `__path__`, which is Lamina's folder, and load a second copy of a Lamina module.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        state = _state
        if not is_alias_name(fullname) or state is None or state.loading_real:
            return None
        runtime = _importer_is_runtime(sys._getframe(1))
        if not is_public(fullname):
            if runtime:
                return None  # real JAX's file, found in its real parent's __path__
            raise _private.refused(fullname)
        if runtime:  # importlib.import_module in real JAX (its lazy submodules): rare
            raise ModuleNotFoundError(
                f"lamina.as_jax: JAX's runtime imported {fullname} through importlib while "
                "`jax` means Lamina; only import statements are routed to real JAX",
                name=fullname,
            )
        module = lamina_module(fullname)
        return importlib.machinery.ModuleSpec(
            fullname, _Loader(module), is_package=hasattr(module, "__path__")
        )


def _absolute(name: str, globals: Mapping[str, Any], level: int) -> str:
    if level == 0:
        return name
    package = globals.get("__package__")
    if not package:
        module_name = str(globals.get("__name__", ""))
        package = module_name if "__path__" in globals else module_name.rpartition(".")[0]
    return importlib.util.resolve_name("." * level + name, package)


def _import(
    name: str,
    globals: Mapping[str, Any] | None = None,
    locals: Mapping[str, Any] | None = None,
    fromlist: Sequence[str] | None = (),
    level: int = 0,
) -> ModuleType:
    """`builtins.__import__` while the alias is on; see the module's docstring."""
    state = _state
    if state is None:
        return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)
    if globals is not None and not state.loading_real and (level or name.startswith(ALIAS)):
        importer = globals.get("__name__")
        if isinstance(importer, str) and lamina_runtime.is_runtime_module(importer):
            target = _absolute(name, globals, level)
            if is_alias_name(target):
                return _real_import(state, target, fromlist or (), level)
        # Anyone else's relative import stays in its own package, which is not real JAX's.
        elif level == 0 and is_alias_name(name) and not is_public(name):
            return _private_import(name, fromlist or ())
    return state.original_import(name, globals, locals, fromlist, level)


_ORIGINAL_IMPORT: Final[ImportFunction] = builtins.__import__


def _real_import(state: _Alias, name: str, fromlist: Sequence[str], level: int) -> ModuleType:
    """`__import__`'s answer from real JAX: the module (with `fromlist`'s submodules loaded),
    or the top-level package when nothing is imported from it."""
    module = _real_module(state, name)
    if not fromlist:
        return module if level else state.real[ALIAS]
    if hasattr(module, "__path__"):
        for item in fromlist:
            if item != "*" and not hasattr(module, item):
                try:
                    _real_module(state, f"{name}.{item}")
                except ModuleNotFoundError as err:
                    if err.name != f"{name}.{item}":  # a missing name, not a submodule
                        raise
    return module


def _real_module(state: _Alias, name: str) -> ModuleType:
    module = state.real.get(name) if is_public(name) else sys.modules.get(name)
    if module is None:
        with _real_view(state):
            module = importlib.import_module(name)
    return module


@contextlib.contextmanager
def _real_view(state: _Alias) -> Iterator[None]:
    """Real JAX's public modules under their names in `sys.modules` for the time of the block:
    to load a module for the runtime, and for the bridge's one C++ look-up. Held under the
    import lock; another thread's import of a `jax` module already in `sys.modules` does not
    wait for it, and may see real JAX in that instant."""
    with state.lock:
        _imp.acquire_lock()
        try:
            aliased = {n: sys.modules.pop(n) for n in _public_jax_names()}
            sys.modules.update(state.real)
            state.loading_real += 1
            try:
                yield
            finally:
                state.loading_real -= 1
                for n in _public_jax_names():
                    state.real[n] = sys.modules.pop(n)
                sys.modules.update(aliased)
        finally:
            _imp.release_lock()


def _public_jax_names() -> list[str]:
    return [n for n in sys.modules if is_alias_name(n) and is_public(n)]


def _set_version(version: str, version_info: tuple[int, ...]) -> None:
    """`lamina.__version__` and `lamina.version.__version__` (and `__version_info__`)."""
    for module in (lamina, lamina.version):
        setattr(module, "__version__", version)  # noqa: B010  (a module's own, not a declared one)
        setattr(module, "__version_info__", version_info)  # noqa: B010


def install() -> None:
    """From now on `import jax` is `import lamina`, and `import jax.X` is `import lamina.X`;
    `jax.__version__` is the JAX release whose API Lamina implements (`JAX_VERSION`).

    A `jax.X` Lamina lacks raises `ModuleNotFoundError` naming it. Lamina's runtime keeps using
    real JAX's (imported with Lamina, before the alias). Modules imported while the alias is on
    keep the Lamina modules they bound. A second call does nothing.
    """
    global _state
    with _install_lock:
        if _state is not None:
            return
        # Lamina is imported (this module is part of it), and with it real JAX's runtime.
        real = {n: sys.modules.pop(n) for n in _public_jax_names()}
        sys.modules[ALIAS] = lamina
        for n, module in list(sys.modules.items()):
            alias = _alias_of(n)
            if alias is not None:
                sys.modules[alias] = module
        finder = _Finder()
        state = _Alias(real=real, original_import=builtins.__import__, finder=finder)
        _state = state
        sys.meta_path.insert(0, finder)
        lamina_runtime.set_real_jax_view(lambda: _real_view(state))
        lamina_runtime.set_compile_interceptor(_private.compiler.compile_through_module)
        setattr(lamina, _PRIVATE_ATTRIBUTE, _private)  # `jax._src.xla_bridge._backends`, read
        state.lamina_versions = {n: getattr(lamina, n) for n in _VERSION_NAMES}
        _set_version(JAX_VERSION, tuple(int(p) for p in JAX_VERSION.split(".")))
        setattr(builtins, "__import__", _import)  # noqa: B010  (typeshed's __import__ is a def)


def uninstall() -> None:
    """Undo `install()`: every public `jax` entry of `sys.modules` is real JAX's again, the
    very module `install()` found (with those JAX's runtime loaded since); none stays Lamina's.
    Modules imported under the alias keep what they bound. Does nothing when not installed."""
    global _state
    with _install_lock:
        state = _state
        if state is None:
            return
        with state.lock:
            if builtins.__import__ is _import:
                setattr(builtins, "__import__", state.original_import)  # noqa: B010
            if state.finder in sys.meta_path:
                sys.meta_path.remove(state.finder)
            lamina_runtime.set_real_jax_view(None)
            lamina_runtime.set_compile_interceptor(None)
            if getattr(lamina, _PRIVATE_ATTRIBUTE, None) is _private:
                delattr(lamina, _PRIVATE_ATTRIBUTE)
            if state.lamina_versions:
                _set_version(*(state.lamina_versions[n] for n in _VERSION_NAMES))
            for n in _public_jax_names():
                del sys.modules[n]
            sys.modules.update(state.real)
            _state = None


def is_installed() -> bool:
    return _state is not None
