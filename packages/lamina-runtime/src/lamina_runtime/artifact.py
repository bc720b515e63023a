"""The saved-function file format: a compiled executable with everything needed to call it.

Layout (all integers little-endian):

    offset  size  field
    0       8     magic b"\\x89LAMINA\\n"
    8       4     format version (u32)
    12      4     header length H (u32)
    16      32    sha256 of everything after this field (header and body)
    48      H     header: UTF-8 JSON (below)
    48+H    ...   body: the serialized executable, its compile options, then each hoisted
                  constant's raw bytes

The JSON header holds the function's name, what built it (`lamina`, `jaxlib`, `platform`,
`platform_version`, `device_kind`), the input and output tree structures (`tree_codec`), the
avals of the inputs, outputs and constants (`{"shape", "dtype", "weak_type"}`), which inputs are
donated, and where in the body each section is (`[offset, size]` pairs under `executable`,
`compile_options` and each constant's `data`). Constants are stored C-contiguous in the host's
byte order (recorded as `byteorder`).

Nothing in the file is pickled or names Python code. The executable is machine code compiled by
XLA, though: load only artifacts you trust, as you would run only binaries you trust. This module
knows nothing of jaxlib: the executable is opaque bytes here.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.avals import ShapedArray
from lamina_runtime.tree_codec import JsonTree, TreeCodecError

MAGIC: Final = b"\x89LAMINA\n"
FORMAT_VERSION: Final = 1
PREFIX: Final = struct.Struct("<8sII32s")
"""magic, format version, header length, sha256 of header and body."""
PLATFORM_FIELDS: Final = ("jaxlib", "platform", "platform_version", "device_kind")
"""What must match between the process that compiled and the one that loads."""


class ArtifactError(ValueError):
    """The bytes are not a valid saved function (truncated, corrupted, or not Lamina's)."""


class IncompatibleArtifactError(ArtifactError):
    """A valid saved function built for another format, jaxlib or platform than this one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """A saved compiled function, decoded: what `lamina.aot.load` needs to run it."""

    name: str
    executable: bytes
    """jaxlib's serialized executable."""
    compile_options: bytes
    """jaxlib's serialized `CompileOptions`, which loading the executable needs again."""
    built_with: Mapping[str, str]
    """`lamina`, `jaxlib`, `platform`, `platform_version`, `device_kind` of the compiler."""
    in_tree: JsonTree
    out_tree: JsonTree
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    donated: tuple[bool, ...]
    consts: tuple[np.ndarray, ...]
    """The hoisted constants' values, in the executable's const-arg order."""


def _aval_json(aval: ShapedArray) -> dict[str, Any]:
    return {"shape": list(aval.shape), "dtype": aval.dtype.name, "weak_type": aval.weak_type}


def _aval(entry: Any) -> ShapedArray:
    try:
        return ShapedArray(
            tuple(int(d) for d in entry["shape"]),
            np.dtype(entry["dtype"]),
            bool(entry["weak_type"]),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise ArtifactError(f"malformed type in artifact: {entry!r} ({err})") from None


def encode(artifact: Artifact) -> bytes:
    """The file's bytes."""
    body: list[bytes] = []
    position = 0

    def section(data: bytes) -> list[int]:
        nonlocal position
        body.append(data)
        position += len(data)
        return [position - len(data), len(data)]

    executable = section(artifact.executable)
    options = section(artifact.compile_options)
    consts = []
    for value in artifact.consts:
        array = np.ascontiguousarray(value)
        entry = _aval_json(ShapedArray(array.shape, array.dtype))
        entry["data"] = section(array.tobytes())
        consts.append(entry)
    header = {
        "name": artifact.name,
        "built_with": dict(artifact.built_with),
        "byteorder": sys.byteorder,
        "in_tree": artifact.in_tree,
        "out_tree": artifact.out_tree,
        "in_avals": [_aval_json(a) for a in artifact.in_avals],
        "out_avals": [_aval_json(a) for a in artifact.out_avals],
        "donated": list(artifact.donated),
        "executable": executable,
        "compile_options": options,
        "consts": consts,
    }
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    payload = header_bytes + b"".join(body)
    digest = hashlib.sha256(payload).digest()
    return PREFIX.pack(MAGIC, FORMAT_VERSION, len(header_bytes), digest) + payload


def read_header(data: bytes) -> dict[str, Any]:
    """The JSON header of a saved function, after checking the magic, version and checksum.

    Raises:
        ArtifactError: not a saved Lamina function, or corrupted.
        IncompatibleArtifactError: a format version this Lamina does not read.
    """
    if len(data) < PREFIX.size or data[:8] != MAGIC:
        raise ArtifactError("not a saved Lamina function (wrong magic number)")
    _, version, header_size, digest = PREFIX.unpack_from(data)
    if version != FORMAT_VERSION:
        raise IncompatibleArtifactError(
            f"saved with artifact format version {version}; this Lamina reads version "
            f"{FORMAT_VERSION}. Save it again with this Lamina."
        )
    if hashlib.sha256(data[PREFIX.size :]).digest() != digest:
        raise ArtifactError("corrupted or truncated saved function (checksum mismatch)")
    try:
        header: dict[str, Any] = json.loads(data[PREFIX.size : PREFIX.size + header_size])
    except ValueError as err:
        raise ArtifactError(f"malformed saved-function header ({err})") from None
    return header


def decode(data: bytes) -> Artifact:
    """The saved function in `data`.

    Raises:
        ArtifactError: not a saved Lamina function, or corrupted.
        IncompatibleArtifactError: a format version this Lamina does not read, or one saved on a
            host of the other byte order.
    """
    header = read_header(data)
    _, _, header_size, _ = PREFIX.unpack_from(data)
    body = memoryview(data)[PREFIX.size + header_size :]
    try:
        if header["byteorder"] != sys.byteorder:
            raise IncompatibleArtifactError(
                f"saved on a {header['byteorder']}-endian host; this one is {sys.byteorder}-endian"
            )

        def section(where: Any) -> bytes:
            start, size = (int(n) for n in where)
            if start < 0 or size < 0 or start + size > len(body):
                raise ArtifactError(f"section {where!r} lies outside the file")
            return bytes(body[start : start + size])

        consts = []
        for entry in header["consts"]:
            aval = _aval(entry)
            raw = section(entry["data"])
            consts.append(np.frombuffer(raw, dtype=aval.dtype).reshape(aval.shape))
        return Artifact(
            name=str(header["name"]),
            executable=section(header["executable"]),
            compile_options=section(header["compile_options"]),
            built_with={k: str(v) for k, v in header["built_with"].items()},
            in_tree=header["in_tree"],
            out_tree=header["out_tree"],
            in_avals=tuple(_aval(a) for a in header["in_avals"]),
            out_avals=tuple(_aval(a) for a in header["out_avals"]),
            donated=tuple(bool(d) for d in header["donated"]),
            consts=tuple(consts),
        )
    except (KeyError, TypeError, ValueError, IndexError) as err:
        if isinstance(err, ArtifactError):
            raise
        raise ArtifactError(f"malformed saved-function header ({err!r})") from None


def check_compatible(built_with: Mapping[str, str], here: Mapping[str, str], name: str) -> None:
    """Raise `IncompatibleArtifactError` unless an executable built with `built_with` runs here."""
    differ = [f for f in PLATFORM_FIELDS if built_with.get(f) != here.get(f)]
    if not differ:
        return

    def describe(facts: Mapping[str, str]) -> str:
        return (
            f"jaxlib {facts.get('jaxlib')} on {facts.get('platform')} "
            f"({facts.get('device_kind')}, platform version {facts.get('platform_version')})"
        )

    raise IncompatibleArtifactError(
        f"cannot load the compiled function {name!r}: it was compiled by "
        f"{describe(built_with)}, but this process runs {describe(here)} (differs in: "
        f"{', '.join(differ)}). A compiled executable loads only where it was built for; "
        "compile it again here (`lamina compile`, or `jit(f).lower(...).compile().serialize()`)."
    )


def describe_avals(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(a.str_short() for a in avals) or "nothing"


__all__ = [
    "Artifact",
    "ArtifactError",
    "IncompatibleArtifactError",
    "TreeCodecError",
    "check_compatible",
    "decode",
    "encode",
    "read_header",
]
