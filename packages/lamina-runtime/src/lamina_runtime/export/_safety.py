"""What export checks, and the checks a user may disable: platforms and custom-call targets.

An exported module may run years later on another jaxlib, so it may call only custom-call
targets whose behaviour jaxlib keeps stable (JAX's list, the subset Lamina emits or might
read in a JAX export), and it runs only on the platforms it was exported for, unless the
matching `DisabledSafetyCheck` says otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from lamina_runtime.environment import default_backend

_CPU_KERNELS: Final = frozenset(
    f"lapack_{t}{kernel}_ffi"
    for t in "sdcz"
    for kernel in (
        *("potrf", "geqrf", "getrf", "gesdd", "geev", "gees", "gtsv", "trsm", "gehrd"),
        *(("orgqr", "syevd", "sytrd") if t in "sd" else ("ungqr", "heevd", "hetrd")),
    )
)
"""jaxlib's LAPACK kernels on CPU (FFI), which JAX guarantees stable."""

STABLE_CUSTOM_CALL_TARGETS: Final = _CPU_KERNELS | {
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "annotate_device_placement",
    "AllocateBuffer",
    "shape_assertion",
    "cu_threefry2x32_ffi",
    "hip_threefry2x32_ffi",
    "cu_lu_pivots_to_permutation",
    "hip_lu_pivots_to_permutation",
    "cusolver_getrf_ffi",
    "cusolver_geqrf_ffi",
    "cusolver_orgqr_ffi",
    "cusolver_potrf_ffi",
    "cusolver_syevd_ffi",
    "cusolver_gesvd_ffi",
    "cusolver_gesvdj_ffi",
    "cusolver_sytrd_ffi",
    "cusparse_gtsv2_ffi",
    *(f"hipsolver_{k}_ffi" for k in ("getrf", "geqrf", "orgqr", "potrf", "syevd", "gesvd")),
    *(f"hipsolver_{k}_ffi" for k in ("gesvdj", "gesdd", "sytrd")),
    "Eigh",
    "Qr",
    "ProductOfElementaryHouseholderReflectors",
    "LuDecomposition",
    "ApproxTopK",
    "stablehlo.dynamic_approx_top_k",
    "stablehlo.dynamic_reduce_window",
    "stablehlo.dynamic_rng_bit_generator",
    "stablehlo.dynamic_top_k",
    "tf.call_tf_function",
    "tpu_custom_call",
    "mosaic_gpu_v2",
}
"""The custom-call targets an exported module may call (JAX 0.10.2's list)."""

PLATFORMS: Final = ("cpu", "cuda", "rocm", "tpu")
"""JAX's built-in platforms, which `export(platforms=...)` names."""


class DisabledSafetyCheck:
    """A safety check to skip when exporting or calling an exported function.

    Make one with `DisabledSafetyCheck.platform()` (call on a platform the function was not
    exported for) or `DisabledSafetyCheck.custom_call(target)` (export a call to a custom-call
    target with no compatibility guarantee). Checks compare and hash by their text, which is
    what a serialized export records.
    """

    _impl: str

    def __init__(self, _impl: str) -> None:
        # Private: make checks with the class methods, as JAX's.
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling on a platform other than those exported for (checked when calling)."""
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow exporting calls to the custom-call target `target_name` (checked when
        exporting)."""
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom-call target this check allows, or None."""
        found = re.match(r"custom_call:(.+)$", self._impl)
        return found.group(1) if found else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


def default_export_platform() -> str:
    """The platform `export` lowers for when given none: the default backend's, one of
    `'cpu'`, `'cuda'`, `'rocm'`, `'tpu'`."""
    backend = default_backend()
    return {"gpu": "cuda"}.get(backend, backend)


def check_custom_calls(
    targets: Sequence[tuple[str, str]], disabled: Sequence[DisabledSafetyCheck]
) -> None:
    """Raise JAX's `ValueError` for calls to custom-call targets with no compatibility
    guarantee, unless `disabled` allows them (`targets`: each call's target and text)."""
    allowed = set(STABLE_CUSTOM_CALL_TARGETS)
    allowed.update(t for check in disabled if (t := check.is_custom_call()) is not None)
    if "ALL" in allowed:
        return
    bad = [text for target, text in targets if target not in allowed]
    if bad:
        examples = "\n".join(bad)
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            "guarantees. See https://docs.jax.dev/en/latest/export/export.html"
            "#compatibility-guarantees-for-custom-calls. Examples are:\n"
            f"{examples}.\n"
        )


def platform_index(
    fun_name: str, platforms: Sequence[str], disabled: Sequence[DisabledSafetyCheck]
) -> int:
    """Which of `platforms` a call on this process's platform runs (JAX's `ValueError` when
    none, unless the platform check is disabled: then the first)."""
    here = default_export_platform()
    if here in platforms:
        return list(platforms).index(here)
    if DisabledSafetyCheck.platform() in disabled:
        return 0
    raise ValueError(
        f"Function '{fun_name}' was exported for platforms '{tuple(platforms)}' but it is used "
        f"on '{(here,)}'."
    )


def cpu_only(target: str) -> bool:
    """Whether a custom-call target exists only on CPU (jaxlib's LAPACK kernels, Python host
    callbacks): a module calling one runs nowhere else."""
    return target.startswith("lapack_") or target == "xla_ffi_python_cpu_callback"
