"""The capture report: which constants a jaxpr closes over, how big, and where they came from.

`captured_constants(jaxpr)` lists each const arg with its shape, dtype, size, number of uses
and the user source line of its first use; the runtime warns through `warn_large_captures`
when a compiled function captures more than `jax_captured_constants_warn_bytes`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np

from lamina_consts.const_args import jaxpr_const_args
from lamina_consts.policy import captured_constants_warn_bytes, nbytes
from lamina_core.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, jaxprs_in_params


@dataclass(frozen=True, slots=True)
class CapturedConstant:
    """One const arg of a jaxpr, described for people."""

    shape: tuple[int, ...]
    dtype: np.dtype
    nbytes: int
    uses: int
    """How many equation operands (in the jaxpr and its sub-jaxprs) refer to it."""
    source: str
    """`file:line:column (function)` of its first use, or `<output>` if only returned."""

    def __str__(self) -> str:
        dims = ",".join(map(str, self.shape))
        return f"{self.dtype.name}[{dims}] ({self.nbytes} bytes, {self.uses} uses) at {self.source}"


def _walk(jaxpr: Jaxpr, uses: Counter[int], first: dict[int, JaxprEqn]) -> None:
    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            if isinstance(atom, Literal):
                uses[id(atom.val)] += 1
                first.setdefault(id(atom.val), eqn)
        for sub in jaxprs_in_params(eqn.params):
            _walk(sub, uses, first)
    for atom in jaxpr.outvars:
        if isinstance(atom, Literal):
            uses[id(atom.val)] += 1


def captured_constants(jaxpr: Jaxpr | ClosedJaxpr) -> list[CapturedConstant]:
    """The const args of `jaxpr`, in argument order, with sizes, use counts and sources."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    uses: Counter[int] = Counter()
    first: dict[int, JaxprEqn] = {}
    _walk(jaxpr, uses, first)
    report = []
    for value, aval in jaxpr_const_args(jaxpr):
        eqn = first.get(id(value))
        source = "<output>" if eqn is None else eqn.source_info.summary()
        shape = tuple(np.shape(value))
        dtype = np.dtype(getattr(aval, "dtype", np.asarray(value).dtype))
        report.append(CapturedConstant(shape, dtype, nbytes(value), uses[id(value)], source))
    return report


def format_report(report: list[CapturedConstant]) -> str:
    total = sum(c.nbytes for c in report)
    lines = [f"{len(report)} captured constants, {total} bytes in all:"]
    lines.extend(f"  {c}" for c in report)
    return "\n".join(lines)


class CapturedConstantsWarning(UserWarning):
    """A compiled function captures more constant bytes than the configured threshold."""


def warn_large_captures(jaxpr: Jaxpr | ClosedJaxpr, name: str, *, stacklevel: int = 2) -> None:
    """Warn if `jaxpr`'s const args exceed `jax_captured_constants_warn_bytes` (-1: never)."""
    threshold = captured_constants_warn_bytes.value
    if threshold < 0:
        return
    report = captured_constants(jaxpr)
    total = sum(c.nbytes for c in report)
    if total > threshold:
        warnings.warn(
            f"{name} captures {total} bytes of constants (more than "
            f"jax_captured_constants_warn_bytes={threshold}); pass large arrays as arguments "
            f"instead of closing over them.\n{format_report(report)}",
            CapturedConstantsWarning,
            stacklevel=stacklevel + 1,
        )
