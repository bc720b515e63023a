"""MLIR contexts for lowering: lean to make, and reused per thread a bounded number of times.

A context registers only what Lamina emits (stablehlo, chlo, sdy, and func from the upstream
registry) instead of loading every linked dialect: about 0.2 ms instead of 1.2–1.5 ms. Contexts
intern types and attributes for as long as they live, so a thread reuses its context for at
most `MAX_MODULES_PER_CONTEXT` modules and then starts a new one. Each context carries a
`ContextCaches` of the IR types and attributes the lowering asks for again and again.

This module knows nothing about jaxprs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

import jaxlib.mlir._mlir_libs._jax_mlir_ext as _jax_mlir_ext
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import stablehlo as hlo

IrValue: TypeAlias = "ir.Value[Any]"
"""An SSA value (the bindings' `Value` is generic in the type of op that owns it)."""

MAX_MODULES_PER_CONTEXT: Final = 10
"""How many modules one thread lowers in one context before it makes a fresh one."""

_UPSTREAM: Final = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(_UPSTREAM)
_THREAD_POOL: Final = ir.ThreadPool()
"""One pool for every context: `ir.Context()` otherwise starts threads per context."""


def make_context() -> ir.Context:
    """A new MLIR context with the stablehlo, chlo, sdy and func dialects loaded."""
    # jaxlib's Context subclass takes the pool; the stubs describe the base class.
    context = ir.Context(thread_pool=_THREAD_POOL)  # type: ignore[call-arg]
    context.append_dialect_registry(_UPSTREAM)
    hlo.register_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)
    context.dialects["func"]  # loads func now rather than at first use, mid-lowering
    return context


@dataclass(eq=False, slots=True)
class ContextCaches:
    """Memo tables tied to one context (its types and attributes). Identity is intended."""

    context: ir.Context
    types: dict[Any, ir.Type] = field(default_factory=dict)
    """IR types by key: a dtype, or `(shape, dtype)` for ranked tensors."""
    attributes: dict[Any, ir.Attribute] = field(default_factory=dict)
    """Attributes by a key naming their kind and value, e.g. `("cmp", "GT")`."""


@dataclass(eq=False, slots=True)
class _ThreadSlot:
    caches: ContextCaches | None = None
    uses: int = 0


_slots: Final = threading.local()


def context_for_module() -> ContextCaches:
    """The calling thread's context (with its caches) for one more module."""
    slot: _ThreadSlot | None = getattr(_slots, "slot", None)
    if slot is None:
        slot = _slots.slot = _ThreadSlot()
    if slot.caches is None or slot.uses >= MAX_MODULES_PER_CONTEXT:
        slot.caches = ContextCaches(make_context())
        slot.uses = 0
    slot.uses += 1
    return slot.caches
