"""The serialized export format: exported functions with their constants, each stored once.

Layout (integers little-endian):

    offset  size  field
    0       8     magic b"\\x89LAMEXP\\n"
    8       4     format version (u32), FORMAT_VERSION
    12      4     header length H (u32)
    16      32    sha256 of everything after this field (header and body)
    48      H     header: UTF-8 JSON (below)
    48+H    ...   body: each function's module, then each distinct constant's raw bytes

The header is `{"byteorder", "lamina", "consts", "functions"}`. `consts` is the constant pool:
`{"shape", "dtype", "data": [offset, size]}` per distinct constant, stored C-contiguous in the
host's byte order. `functions[0]` is the exported function, `functions[i + 1]` the vjp of
`functions[i]` (as many as the serialization's vjp order). Each function has JAX's fields
(`fun_name`, `in_tree`, `out_tree` as `_trees` JSON; `in_avals`, `out_avals` as
`{"shape", "dtype", "weak_type"}`, a symbolic dimension as its text; `nr_devices`,
`platforms`, `ordered_effects`, `unordered_effects`, `disabled_safety_checks`,
`calling_convention_version`, `module_kept_var_idx`, `uses_global_constants`),
`in_shardings` and `out_shardings` (null: unspecified), `module` (`[offset, size]` of its
portable StableHLO artifact in the body), `consts` (indices into the pool, in the order its
module takes them) and, with symbolic shapes under constraints, `constraints` (their texts).

A constant used by several functions (the primal and its vjp close over the same weights) is
one pool entry: entries are shared by identity, then by equal type and bytes.

Decoding checks the magic, version and checksum, then every field (types, ranges, sections
inside the body, constant sizes, trees against the number of types), so that nothing
malformed reaches MLIR or XLA. Nothing here is pickled or names Python code; node types of
the trees must be registered by the loading program. The module is StableHLO that XLA
compiles: load only exports you trust. This module knows nothing of MLIR or of `Exported`.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
import struct
import sys
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core import dtypes
from lamina_runtime._version import __version__

MAGIC: Final = b"\x89LAMEXP\n"
FORMAT_VERSION: Final = 1
PREFIX: Final = struct.Struct("<8sII32s")
"""magic, format version, header length, sha256 of header and body."""


class SerializedExportError(ValueError):
    """The bytes are not a valid serialized export (truncated, corrupted, or not Lamina's)."""


class IncompatibleExportError(SerializedExportError):
    """A valid serialized export in a format version or byte order this Lamina does not read."""


Aval = tuple[tuple[int, ...], np.dtype, bool]
"""An argument or result type: shape, dtype, weak type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Function:
    """One serialized function, decoded into plain values (trees still as JSON)."""

    fun_name: str
    in_tree: Any
    out_tree: Any
    in_avals: tuple[Aval, ...]
    out_avals: tuple[Aval, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[str, ...]
    unordered_effects: tuple[str, ...]
    disabled_safety_checks: tuple[str, ...]
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    module: bytes
    consts: tuple[np.ndarray, ...]
    vjp: Function | None = None
    constraints: tuple[str, ...] = ()
    """The constraints of the symbolic scope of its types (`"a >= b"`); none if static."""


_DTYPES: Final = {dt.name: dt for dt in dtypes.all_dtypes()}


def _dtype_name(dtype: np.dtype) -> str:
    return "float0" if dtype == dtypes.float0 else dtype.name


def _aval_json(aval: Aval) -> dict[str, Any]:
    shape, dtype, weak = aval
    # A symbolic dimension is stored as its text (`2*b`), an integer as itself.
    dims = [d if type(d) is int else str(d) for d in shape]
    return {"shape": dims, "dtype": _dtype_name(dtype), "weak_type": weak}


def encode(function: Function) -> bytes:
    """The bytes of `function` and the vjps chained from it."""
    body: list[bytes | memoryview] = []
    position = 0

    def section(data: bytes | memoryview) -> list[int]:
        nonlocal position
        body.append(data)  # joined at the end: a constant's bytes are copied once
        position += len(data)
        return [position - len(data), len(data)]

    pool: list[dict[str, Any]] = []
    by_id: dict[int, int] = {}
    by_content: dict[tuple[str, tuple[int, ...], bytes], int] = {}
    keep_alive: list[Any] = []  # ids in `by_id` stay theirs while encoding

    def const_index(value: Any) -> int:
        found = by_id.get(id(value))
        if found is not None:
            return found
        array = np.ascontiguousarray(np.asarray(value))
        keep_alive.append(value)
        # ndarrays have the buffer protocol, which NumPy's stubs do not declare for 3.11.
        data = memoryview(array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]
        key = (_dtype_name(array.dtype), array.shape, hashlib.sha256(data).digest())
        found = by_content.get(key)
        if found is None:
            found = by_content[key] = len(pool)
            entry = _aval_json((array.shape, array.dtype, False))
            del entry["weak_type"]
            entry["data"] = section(data)
            pool.append(entry)
        by_id[id(value)] = found
        return found

    functions = []
    current: Function | None = function
    while current is not None:
        functions.append(
            {
                "fun_name": current.fun_name,
                "in_tree": current.in_tree,
                "out_tree": current.out_tree,
                "in_avals": [_aval_json(a) for a in current.in_avals],
                "out_avals": [_aval_json(a) for a in current.out_avals],
                "in_shardings": [None] * len(current.in_avals),
                "out_shardings": [None] * len(current.out_avals),
                "nr_devices": current.nr_devices,
                "platforms": list(current.platforms),
                "ordered_effects": list(current.ordered_effects),
                "unordered_effects": list(current.unordered_effects),
                "disabled_safety_checks": list(current.disabled_safety_checks),
                "calling_convention_version": current.calling_convention_version,
                "module_kept_var_idx": list(current.module_kept_var_idx),
                "uses_global_constants": current.uses_global_constants,
                "module": section(current.module),
                "consts": [const_index(c) for c in current.consts],
                **({"constraints": list(current.constraints)} if current.constraints else {}),
            }
        )
        current = current.vjp
    header = {
        "byteorder": sys.byteorder,
        "lamina": __version__,
        "consts": pool,
        "functions": functions,
    }
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    digest = hashlib.sha256(header_bytes)
    for part in body:
        digest.update(part)
    prefix = PREFIX.pack(MAGIC, FORMAT_VERSION, len(header_bytes), digest.digest())
    return b"".join([prefix, header_bytes, *body])


# ---- decoding ---------------------------------------------------------------------------------


def _malformed(what: str, value: Any, why: str) -> SerializedExportError:
    return SerializedExportError(
        f"malformed serialized export: {what} is {reprlib.repr(value)} ({why})"
    )


def _int(value: Any, what: str, low: int = 0) -> int:
    if type(value) is not int or value < low:
        raise _malformed(what, value, f"expected an integer >= {low}")
    return value


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not (isinstance(value, list) and all(isinstance(s, str) for s in value)):
        raise _malformed(what, value, "expected a list of strings")
    return tuple(value)


def _dtype(value: Any, what: str) -> np.dtype:
    if value == "float0":
        return dtypes.float0
    if not (isinstance(value, str) and value in _DTYPES):
        raise _malformed(what, value, "not a dtype Lamina has")
    return _DTYPES[value]


def _aval(entry: Any, what: str) -> Aval:
    if not isinstance(entry, dict):
        raise _malformed(what, entry, "expected {shape, dtype, weak_type}")
    shape = entry.get("shape")
    if not (
        isinstance(shape, list)
        and all((type(d) is int and d >= 0) or (type(d) is str and d) for d in shape)
    ):
        raise _malformed(
            f"{what}.shape", shape, "expected a list of integers >= 0 or dimension expressions"
        )
    weak = entry.get("weak_type")
    if type(weak) is not bool:
        raise _malformed(f"{what}.weak_type", weak, "expected true or false")
    return tuple(shape), _dtype(entry.get("dtype"), f"{what}.dtype"), weak


def _avals(value: Any, what: str) -> tuple[Aval, ...]:
    if not isinstance(value, list):
        raise _malformed(what, value, "expected a list of types")
    return tuple(_aval(e, f"{what}[{i}]") for i, e in enumerate(value))


def decode(data: bytes) -> Function:
    """The function serialized in `data`, every field checked (trees still as JSON).

    Raises:
        SerializedExportError: not a serialized Lamina export, corrupted, or malformed.
        IncompatibleExportError: a format version or byte order this Lamina does not read.
    """
    if len(data) < PREFIX.size or data[:8] != MAGIC:
        raise SerializedExportError(
            "not a serialized Lamina export (wrong magic number); Lamina reads the exports "
            "that `Exported.serialize` writes, not JAX's flatbuffers"
        )
    _, version, header_size, digest = PREFIX.unpack_from(data)
    if version != FORMAT_VERSION:
        raise IncompatibleExportError(
            f"serialized with export format version {version}; this Lamina reads version "
            f"{FORMAT_VERSION}. Export the function again with this Lamina."
        )
    view = memoryview(data)
    if hashlib.sha256(view[PREFIX.size :]).digest() != digest:
        raise SerializedExportError("corrupted or truncated serialized export (checksum mismatch)")
    body_start = PREFIX.size + header_size
    if body_start > len(data):
        raise SerializedExportError(f"header length {header_size} runs past the end of the data")
    try:
        header = json.loads(data[PREFIX.size : body_start])
    except (ValueError, RecursionError) as err:
        raise SerializedExportError(f"malformed serialized export header ({err})") from None
    if not isinstance(header, dict):
        raise _malformed("the header", header, "expected a JSON object")
    if header.get("byteorder") != sys.byteorder:
        raise IncompatibleExportError(
            f"serialized on a {header.get('byteorder')}-endian host; this one is "
            f"{sys.byteorder}-endian"
        )
    body_size = len(data) - body_start

    def section(where: Any, what: str) -> memoryview:
        if not (isinstance(where, list) and len(where) == 2 and all(type(x) is int for x in where)):
            raise _malformed(what, where, "expected [offset, size]")
        start, size = where
        if start < 0 or size < 0 or start + size > body_size:
            raise _malformed(what, where, f"outside the {body_size}-byte body")
        return view[body_start + start : body_start + start + size]

    pool_entries = header.get("consts")
    if not isinstance(pool_entries, list):
        raise _malformed("consts", pool_entries, "expected a list")
    pool = [_const(entry, f"consts[{i}]", section) for i, entry in enumerate(pool_entries)]
    functions = header.get("functions")
    if not (isinstance(functions, list) and functions):
        raise _malformed("functions", functions, "expected a non-empty list")
    decoded: Function | None = None
    for i in reversed(range(len(functions))):
        decoded = _function(functions[i], f"functions[{i}]", section, pool, decoded)
    assert decoded is not None
    return decoded


def _const(entry: Any, what: str, section: Any) -> np.ndarray:
    if not isinstance(entry, dict):
        raise _malformed(what, entry, "expected {shape, dtype, data}")
    shape, dtype, _ = _aval({**entry, "weak_type": False}, what)
    if dtype == dtypes.float0:
        raise _malformed(f"{what}.dtype", "float0", "constants hold values")
    data = section(entry.get("data"), f"{what}.data")
    count = int(np.prod(shape, dtype=np.int64))
    if len(data) != count * dtype.itemsize:
        raise _malformed(f"{what}.data", entry.get("data"), f"{count} {dtype.name} values")
    # A read-only view of the serialized bytes: loading copies nothing until it reaches a device.
    return np.frombuffer(data, dtype=dtype, count=count).reshape(shape)


_FIELDS: Final = frozenset(
    (
        *("fun_name", "in_tree", "out_tree", "in_avals", "out_avals", "in_shardings"),
        *("out_shardings", "nr_devices", "platforms", "ordered_effects", "unordered_effects"),
        *("disabled_safety_checks", "calling_convention_version", "module_kept_var_idx"),
        *("uses_global_constants", "module", "consts"),
    )
)


def _function(
    entry: Any, what: str, section: Any, pool: list[np.ndarray], vjp: Function | None
) -> Function:
    if not isinstance(entry, dict):
        raise _malformed(what, entry, "expected an object")
    missing = sorted(_FIELDS - entry.keys())
    if missing:
        raise SerializedExportError(
            f"malformed serialized export: {what} has no {', '.join(missing)}"
        )
    name = entry["fun_name"]
    if not isinstance(name, str):
        raise _malformed(f"{what}.fun_name", name, "expected a string")
    in_avals = _avals(entry["in_avals"], f"{what}.in_avals")
    out_avals = _avals(entry["out_avals"], f"{what}.out_avals")
    for key, n in (("in_shardings", len(in_avals)), ("out_shardings", len(out_avals))):
        value = entry[key]
        if not (isinstance(value, list) and len(value) == n and all(s is None for s in value)):
            raise _malformed(f"{what}.{key}", value, f"expected {n} nulls (unspecified)")
    kept = entry["module_kept_var_idx"]
    if not (
        isinstance(kept, list)
        and all(type(i) is int and 0 <= i < len(in_avals) for i in kept)
        and kept == sorted(set(kept))
    ):
        raise _malformed(f"{what}.module_kept_var_idx", kept, "expected sorted argument indices")
    const_ids = entry["consts"]
    if not (
        isinstance(const_ids, list)
        and all(type(i) is int and 0 <= i < len(pool) for i in const_ids)
    ):
        raise _malformed(
            f"{what}.consts", const_ids, f"expected indices into {len(pool)} constants"
        )
    uses_global = entry["uses_global_constants"]
    if type(uses_global) is not bool:
        raise _malformed(f"{what}.uses_global_constants", uses_global, "expected true or false")
    platforms = _strings(entry["platforms"], f"{what}.platforms")
    if not platforms:
        raise _malformed(f"{what}.platforms", [], "expected at least one platform")
    return Function(
        fun_name=name,
        in_tree=entry["in_tree"],
        out_tree=entry["out_tree"],
        in_avals=in_avals,
        out_avals=out_avals,
        nr_devices=_int(entry["nr_devices"], f"{what}.nr_devices", 1),
        platforms=platforms,
        ordered_effects=_strings(entry["ordered_effects"], f"{what}.ordered_effects"),
        unordered_effects=_strings(entry["unordered_effects"], f"{what}.unordered_effects"),
        disabled_safety_checks=_strings(
            entry["disabled_safety_checks"], f"{what}.disabled_safety_checks"
        ),
        calling_convention_version=_int(
            entry["calling_convention_version"], f"{what}.calling_convention_version"
        ),
        module_kept_var_idx=tuple(kept),
        uses_global_constants=uses_global,
        module=bytes(section(entry["module"], f"{what}.module")),
        consts=tuple(pool[i] for i in const_ids),
        vjp=vjp,
        constraints=_strings(entry.get("constraints", []), f"{what}.constraints"),
    )
