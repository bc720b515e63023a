"""What the harness checks: programs of the project's test corpora, traced on demand.

A `Program` names where it comes from (corpus, table, case, transformation) and traces
itself when asked, so that gathering a corpus costs only importing its test modules. The
tables stay in the test files that own them; `load_test_module` imports a test file by path
with the loader those files import their siblings with (`lamina_core.testing`: pytest's
importlib mode puts no test folder on `sys.path`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

import lamina_core as lc
from lamina_core.ir import dtypes
from lamina_core.testing import load_module, transforms
from lamina_core.testing import load_test_module as _load_test_module
from lamina_core.tree import tree_util
from tools.workspace import PACKAGES_DIR

SHARD_MAP_HARNESS = "lamina_core_tests_shard_map_harness"
"""The module name lamina-core's shard_map test modules find their harness under."""


@dataclass(frozen=True, slots=True)
class Traced:
    """A program as a closed jaxpr, with the flat arguments to evaluate it on."""

    closed: lc.ClosedJaxpr
    args: Sequence[Any] | None
    """None where the table gives a jaxpr but no values for its inputs."""
    mesh: Any = None
    """The mesh the program was traced under, which reading it back needs in context too
    (a type split over Explicit axes, `f32[8@x]`, prints no axis sizes)."""


@dataclass(frozen=True, slots=True)
class Program:
    corpus: str
    table: str
    """The test module and table the case comes from, as `module.TABLE`."""
    name: str
    make: Callable[[], Traced]
    transform: str = ""
    """The transformation applied to the table's program (`grad`, `vmap`, ...), if any."""

    @property
    def label(self) -> str:
        case = f"{self.table}[{self.name}]"
        return f"{self.transform}({case})" if self.transform else case


class NeedsDevices(Exception):
    """A corpus whose programs need more devices than the process has."""


def traced(
    f: Callable[..., Any], args: Sequence[Any], make_jaxpr: Callable[..., Any] = lc.make_jaxpr
) -> Traced:
    closed = make_jaxpr(f)(*args)
    return Traced(closed, tree_util.tree_leaves(tuple(args)))


def load_test_module(dist: str, name: str) -> ModuleType:
    """`packages/<dist>/tests/<name>.py`, imported once. A module-level `pytest.skip` (the
    multi-device tests' guard) becomes `NeedsDevices`."""
    tests = PACKAGES_DIR / dist / "tests"
    if dist == "lamina-core":  # as its conftest does, which only pytest runs
        load_module(tests / "shard_map_harness.py", SHARD_MAP_HARNESS)
    try:
        return _load_test_module(tests, name)
    except BaseException as e:
        if type(e).__name__ == "Skipped":  # pytest.skip(allow_module_level=True)
            raise NeedsDevices(f"{dist}/tests/{name}.py: {e}") from None
        raise


# --- transformations, built as the tests build them ---------------------------------------

AD_KINDS = ("jvp", "grad", "grad_jit")
"""`lamina_core.testing.transforms`' kinds: what `check_ad` traces for every AD case."""


def ad_transforms(
    corpus: str, table: str, name: str, f: Callable[..., Any], args: tuple[Any, ...]
) -> list[Program]:
    """`jvp`, `grad` (or `vjp` for non-scalar outputs) and `grad(jit(...))` of `f`, as
    `check_ad` traces them; only where `f` has an inexact argument to differentiate."""
    if not all(map(is_array_like, args)) or not any(map(_inexact, args)):
        return []  # `transforms` differentiates flat array arguments only

    def make(kind: str) -> Callable[[], Traced]:
        def build() -> Traced:
            tf, targs = transforms(lc, f, args, kind, f)
            return traced(tf, targs)

        return build

    return [Program(corpus, table, name, make(k), k) for k in AD_KINDS]


def is_array_like(x: Any) -> bool:
    """An array or a scalar (not a pytree of them)."""
    return hasattr(x, "dtype") or isinstance(x, bool | int | float | complex)


def _inexact(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return isinstance(x, float | complex)
    return dtypes.issubdtype(dtype, np.inexact)


def vmap_program(
    corpus: str,
    table: str,
    name: str,
    f: Callable[..., Any],
    batched: tuple[Any, ...],
    vmap: Callable[..., Any] = lc.vmap,
    make_jaxpr: Callable[..., Any] = lc.make_jaxpr,
    **kw: Any,
) -> Program:
    return Program(
        corpus,
        table,
        name,
        lambda: traced(vmap(f, **kw), batched, make_jaxpr),
        "vmap",
    )
