"""`Exported`: a function lowered to StableHLO with what calling it needs, and `call`.

An `Exported` holds JAX's fields (the module as a portable artifact, the argument and result
structures and types, platforms, effects, safety checks, calling convention) and one of
Lamina's: `const_args`, the values of the constants the function closed over. JAX inlines those
into the module (so a 128 MB constant is 128 MB of module text, once per vjp order); Lamina's
module takes them as leading arguments, as a jitted function's does, and the serialized form
stores each constant once however many functions (primal, vjps) use it.

`call(exported)` makes a function that applies it to arrays eagerly or under any trace, with
reverse-mode differentiation through the exported vjp (as JAX: a `custom_vjp`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lamina_core import custom_vjp, dtypes, tree_util
from lamina_core.ir import (
    AbstractMesh,
    Effect,
    Mesh,
    NamedSharding,
    ShapedArray,
    SymbolicScope,
    is_symbolic_dim,
    symbolic_shape,
)
from lamina_core.tree import equality_errors, public
from lamina_mlir import (
    portable_artifact_mismatch,
    portable_artifact_module,
    portable_artifact_text,
)
from lamina_runtime import _bridge_devices
from lamina_runtime.array import Array, to_buffer
from lamina_runtime.environment import Device
from lamina_runtime.export import _format
from lamina_runtime.export._call import call_exported_p
from lamina_runtime.export._safety import DisabledSafetyCheck
from lamina_runtime.export._trees import decode_treedef, encode_treedef

_DeviceKey = Any


@dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered to StableHLO, ready to serialize or call (JAX's `Exported`).

    Identity is intended (eq=False): its constants are arrays, which have no useful equality,
    and a program calling it is cached by the object.
    """

    fun_name: str
    """The function's name, for messages."""
    in_tree: Any
    """The structure of the call's `(args, kwargs)`."""
    in_avals: tuple[ShapedArray, ...]
    """The flat arguments' types."""
    out_tree: Any
    out_avals: tuple[ShapedArray, ...]
    _has_named_shardings: bool
    _in_named_shardings: tuple[NamedSharding | None, ...]
    _out_named_shardings: tuple[NamedSharding | None, ...]
    in_shardings_hlo: tuple[None, ...]
    """All None, as in JAX's exports made after March 2026 (shardings are named)."""
    out_shardings_hlo: tuple[None, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[Effect, ...]
    unordered_effects: tuple[Effect, ...]
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    """The module as a portable StableHLO artifact (VHLO bytecode)."""
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    """The positions of the flat arguments the module takes (unused ones are dropped)."""
    uses_global_constants: bool
    """Whether the module takes a platform index (or, in JAX, dimension variables)."""
    _get_vjp: Callable[[Exported], Exported] | None
    const_args: tuple[Any, ...] = field(default=(), repr=False)
    """Lamina: the values of the constants the function closed over, which the module takes
    as its leading arguments (before the arguments it keeps)."""
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    """The exported vjp and the constants on each device, made once."""
    _lock: Any = field(default_factory=threading.Lock, repr=False)

    @property
    def const_avals(self) -> tuple[ShapedArray, ...]:
        """The types of `const_args`."""
        return tuple(ShapedArray(np.shape(c), np.dtype(c.dtype)) for c in self.const_args)

    def __str__(self) -> str:
        # What a printed jaxpr shows of a `call_exported`: never the whole module.
        return f"Exported(fun_name={self.fun_name}, ...)"

    def mlir_module(self, serialized: bool = True) -> Any:
        """The module as text, with locations (or, with `serialized=False`, as an MLIR
        `Module` in a context of its own)."""
        if serialized:
            return portable_artifact_text(self.mlir_module_serialized)
        return portable_artifact_module(self.mlir_module_serialized)

    def in_shardings_jax(self, mesh: Mesh | AbstractMesh) -> tuple[NamedSharding | None, ...]:
        """The arguments' shardings over `mesh` (which must have the axes of the export's),
        None where unspecified."""
        return tuple(_on_mesh(s, mesh) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh: Mesh | AbstractMesh) -> tuple[NamedSharding | None, ...]:
        """The results' shardings over `mesh`; see `in_shardings_jax`."""
        return tuple(_on_mesh(s, mesh) for s in self._out_named_shardings)

    def has_vjp(self) -> bool:
        """Whether `vjp()` is available (an export loaded without its vjp has none)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported vjp: it takes the flat primal arguments then a cotangent for each flat
        result, and returns the cotangents of the flat arguments. Made once.

        Raises:
            ValueError: none is available (loaded from a serialization without it).
        """
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        with self._lock:
            found: Exported | None = self._memo.get("vjp")
        if found is None:
            found = self._get_vjp(self)
            with self._lock:
                found = self._memo.setdefault("vjp", found)
        return found

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """This function, its constants and `vjp_order` orders of its vjp, as bytes that
        `deserialize` loads in any process (the format: `lamina_runtime.export._format`).

        Raises:
            ValueError: `vjp_order` orders of vjp are not available, or an argument or result
                structure holds a node type not registered for serialization.
        """
        return bytearray(_format.encode(_record(self, vjp_order)))

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Apply the function to arrays structured as when it was exported (eagerly, under
        `jit` or any transformation; reverse-mode differentiable through its vjp)."""
        return call(self)(*args, **kwargs)

    def device_consts(self, device: Device | None = None) -> tuple[Any, ...]:
        """`const_args` on `device` (default: the first), put there once."""
        key: _DeviceKey = ("consts", device)
        with self._lock:
            found: tuple[Any, ...] | None = self._memo.get(key)
        if found is None:
            found = tuple(_on_device(c, device) for c in self.const_args)
            with self._lock:
                found = self._memo.setdefault(key, found)
        return found


def _record(exported: Exported, vjp_order: int) -> _format.Function:
    vjp = None
    if vjp_order > 0:
        if not exported.has_vjp():
            raise ValueError(
                "serialization of an Exported that does not have vjps of high-enough order"
            )
        vjp = _record(exported.vjp(), vjp_order - 1)
    if exported.ordered_effects or exported.unordered_effects:
        raise NotImplementedError(f"serializing {exported.fun_name}: it has effects")
    return _format.Function(
        fun_name=exported.fun_name,
        in_tree=encode_treedef(exported.in_tree),
        out_tree=encode_treedef(exported.out_tree),
        in_avals=tuple((a.shape, a.dtype, a.weak_type) for a in exported.in_avals),
        out_avals=tuple((a.shape, a.dtype, a.weak_type) for a in exported.out_avals),
        nr_devices=exported.nr_devices,
        platforms=exported.platforms,
        ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=tuple(str(c) for c in exported.disabled_safety_checks),
        calling_convention_version=exported.calling_convention_version,
        module_kept_var_idx=exported.module_kept_var_idx,
        uses_global_constants=exported.uses_global_constants,
        module=exported.mlir_module_serialized,
        consts=exported.const_args,
        vjp=vjp,
        constraints=_constraints(exported),
    )


def _constraints(exported: Exported) -> tuple[str, ...]:
    """The constraint texts of the symbolic scope of `exported`'s types."""
    dims: list[Any] = [d for a in (*exported.in_avals, *exported.out_avals) for d in a.shape]
    for d in dims:
        if is_symbolic_dim(d):
            return tuple(dict.fromkeys(text for text, _ in d.scope.constraints))
    return ()


def deserialize(blob: bytes | bytearray) -> Exported:
    """The function that `Exported.serialize` wrote into `blob`, with its vjps if saved.

    Every field is checked, and the module's signature against the types the header gives
    (a module rewritten around other types is refused).

    Raises:
        SerializedExportError: `blob` is not a serialized Lamina export, is corrupted, or its
            header and module disagree.
        IncompatibleExportError: another format version or byte order.
        ValueError: a structure names a node type this process has not registered.
    """
    return _from_record(_format.decode(bytes(blob)))


def _shape(dims: tuple[Any, ...], scope: SymbolicScope) -> tuple[Any, ...]:
    """A stored shape, its symbolic dimensions (stored as text) parsed in `scope`."""
    if all(type(d) is int for d in dims):
        return dims
    try:
        return symbolic_shape(", ".join(map(str, dims)), scope=scope)
    except ValueError as err:
        raise _format.SerializedExportError(
            f"malformed serialized export: the shape {dims} does not parse: {err}"
        ) from None


def _from_record(record: _format.Function) -> Exported:
    in_tree = decode_treedef(record.in_tree)
    out_tree = decode_treedef(record.out_tree)
    try:  # one scope for all the types: their expressions combine
        scope = SymbolicScope(record.constraints)
    except ValueError as err:
        raise _format.SerializedExportError(
            f"malformed serialized export: constraints {record.constraints}: {err}"
        ) from None
    in_avals = tuple(ShapedArray(_shape(s, scope), d, w) for s, d, w in record.in_avals)
    out_avals = tuple(ShapedArray(_shape(s, scope), d, w) for s, d, w in record.out_avals)
    for name, tree, avals in (("in_tree", in_tree, in_avals), ("out_tree", out_tree, out_avals)):
        if tree.num_leaves != len(avals):
            raise _format.SerializedExportError(
                f"malformed serialized export: {record.fun_name}'s {name} has "
                f"{tree.num_leaves} leaves for {len(avals)} types"
            )
    checks = []
    for text in record.disabled_safety_checks:
        check = DisabledSafetyCheck(text)
        if text != "platform" and check.is_custom_call() is None:
            raise _format.SerializedExportError(
                f"malformed serialized export: unknown disabled safety check {text!r}"
            )
        checks.append(check)
    multi = len(record.platforms) > 1
    consts = [ShapedArray(c.shape, c.dtype) for c in record.consts]
    kept = [in_avals[i] for i in record.module_kept_var_idx]
    wrong = portable_artifact_mismatch(record.module, [*consts, *kept], out_avals, multi)
    if wrong is not None:
        raise _format.SerializedExportError(
            f"serialized export of {record.fun_name!r} is inconsistent: its header does not "
            f"describe its module ({wrong})"
        )
    vjp = record.vjp
    get_vjp = None if vjp is None else _loaded_vjp(vjp)
    return Exported(
        fun_name=record.fun_name,
        in_tree=public_treedef(in_tree),
        in_avals=in_avals,
        out_tree=public_treedef(out_tree),
        out_avals=out_avals,
        _has_named_shardings=True,
        _in_named_shardings=(None,) * len(in_avals),
        _out_named_shardings=(None,) * len(out_avals),
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=record.nr_devices,
        platforms=record.platforms,
        ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=tuple(checks),
        mlir_module_serialized=record.module,
        calling_convention_version=record.calling_convention_version,
        module_kept_var_idx=record.module_kept_var_idx,
        uses_global_constants=record.uses_global_constants,
        _get_vjp=get_vjp,
        const_args=record.consts,
    )


def _loaded_vjp(record: _format.Function) -> Callable[[Exported], Exported]:
    loaded = _from_record(record)  # now: a malformed vjp fails the load, not a later grad
    return lambda _primal: loaded


def public_treedef(treedef: Any) -> Any:
    """`treedef` printing as JAX's (`PyTreeDef(...)`)."""
    return public.treedef_tuple([treedef]).children()[0]


def _on_device(value: Any, device: Device | None) -> Any:
    if type(value) is Array and device is None:
        return value
    aval = ShapedArray(np.shape(value), np.dtype(value.dtype))
    target = device if device is not None else _bridge_devices.default_device()
    return Array(to_buffer(value, aval, target), aval)


def _on_mesh(sharding: NamedSharding | None, mesh: Mesh | AbstractMesh) -> NamedSharding | None:
    if sharding is None:
        return None
    exported_mesh = sharding.mesh
    if (mesh.axis_names, mesh.axis_sizes) != (exported_mesh.axis_names, exported_mesh.axis_sizes):
        raise ValueError(
            f"NamedSharding new mesh {mesh} does not match the mesh used for export "
            f"{exported_mesh}."
        )
    return NamedSharding(mesh, sharding.spec, memory_kind=sharding.memory_kind)


def _mismatch_message(exported: Exported, in_tree: Any) -> str:
    got = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    want = tree_util.tree_unflatten(exported.in_tree, [0] * exported.in_tree.num_leaves)
    lines = [
        f"   - {_path_text(path)} is a {thing1} in the invocation and a {thing2} when "
        f"exported, so {explanation}.\n"
        for path, thing1, thing2, explanation in equality_errors(got, want)
    ]
    return (
        "The invocation args and kwargs must have the same pytree structure as when the "
        f"function '{exported.fun_name}' was exported, but they have the following structural "
        "differences:\n" + "\n".join(lines)
    )


def _path_text(path: Sequence[Any]) -> str:
    head = "args" if path[0] == tree_util.SequenceKey(0) else "kwargs"
    return f"{head}{tree_util.keystr(tuple(path[1:]))}"


def call(exported: Exported) -> Callable[..., Any]:
    """A function applying `exported` to arguments structured as when it was exported.

    It runs eagerly or under any transformation; reverse-mode differentiation calls the
    exported vjp (`exported.vjp()`), forward mode and batching are not supported (as JAX).

    Raises:
        ValueError: `exported` is not an `Exported`.
    """
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found {exported}.")

    # The names are JAX's: they show in printed jaxprs (`custom_vjp_call[name=f_flat ...]`).
    @custom_vjp
    def f_flat(*args_flat: Any) -> Any:
        return call_exported_p.bind(*exported.device_consts(), *args_flat, exported=exported)

    def f_flat_vjp_fwd(*args_flat: Any) -> Any:
        # The primal arguments are the residuals: the exported vjp takes them.
        return f_flat(*args_flat), args_flat

    def f_flat_vjp_bwd(residual: Any, ct_res_flat: Any) -> Any:
        exp_vjp = exported.vjp()
        expected = exp_vjp.in_avals[len(residual) :]
        cts = [
            np.zeros(aval.shape, dtypes.float0) if aval.dtype == dtypes.float0 else ct
            for ct, aval in zip(ct_res_flat, expected, strict=True)
        ]
        return call(exp_vjp)(*residual, *cts)

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args: Any, **kwargs: Any) -> Any:
        args_flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            raise ValueError(_mismatch_message(exported, in_tree))
        return tree_util.tree_unflatten(exported.out_tree, f_flat(*args_flat))

    return f_imported
