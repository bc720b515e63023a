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

Every header field is checked when decoding (types, ranges, sections inside the body, constant
sizes, tree structures against the number of types), so that nothing malformed reaches XLA;
loading (`aot.deserialize`) then checks the types against what the executable itself reports,
since the checksum only catches accidents, not a writer that recomputes it.

Nothing in the file is pickled or names Python code. The executable is machine code compiled by
XLA, though: load only artifacts you trust, as you would run only binaries you trust. This module
knows nothing of jaxlib: the executable is opaque bytes here.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import numpy as np

from lamina_core import dtypes
from lamina_core.ir import ShapedArray
from lamina_runtime.tree_codec import JsonTree, TreeCodecError, decode_treedef

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
    kept: tuple[int, ...] | None = None
    """Positions of the inputs the executable takes, if it dropped unused ones (`in_avals`
    and `donated` describe every input); None: all. Written only when some are dropped, so
    other files are as before; a reader without it refuses such a file (its executable then
    takes fewer inputs than its header lists)."""


_DTYPES: Final = {dt.name: dt for dt in dtypes.all_dtypes()} | {"float0": dtypes.float0}
"""The dtypes an artifact may name: Lamina's (NumPy's others, e.g. object, never load)."""


def _dtype_name(dtype: np.dtype) -> str:
    return "float0" if dtype == dtypes.float0 else dtype.name


def _aval_json(aval: ShapedArray) -> dict[str, Any]:
    return {
        "shape": list(aval.shape),
        "dtype": _dtype_name(aval.dtype),
        "weak_type": aval.weak_type,
    }


def _short(value: Any) -> str:
    return reprlib.repr(value)


def _malformed(what: str, value: Any, why: str) -> ArtifactError:
    return ArtifactError(f"malformed saved-function header: {what} is {_short(value)} ({why})")


def _is_int(x: Any) -> bool:
    return type(x) is int


def _aval(entry: Any, what: str) -> ShapedArray:
    if not isinstance(entry, dict):
        raise _malformed(what, entry, "expected {shape, dtype, weak_type}")
    shape, dtype, weak = entry.get("shape"), entry.get("dtype"), entry.get("weak_type")
    if not (isinstance(shape, list) and all(_is_int(d) and d >= 0 for d in shape)):
        raise _malformed(f"{what}'s shape", shape, "expected a list of integers >= 0")
    if not (isinstance(dtype, str) and dtype in _DTYPES):
        raise _malformed(f"{what}'s dtype", dtype, "not a dtype Lamina has")
    if type(weak) is not bool:
        raise _malformed(f"{what}'s weak_type", weak, "expected true or false")
    try:
        return ShapedArray(tuple(shape), _DTYPES[dtype], weak)
    except (TypeError, ValueError, OverflowError) as err:  # e.g. more elements than XLA holds
        raise _malformed(what, entry, str(err)) from None


def _avals(entries: Any, what: str) -> tuple[ShapedArray, ...]:
    if not isinstance(entries, list):
        raise _malformed(what, entries, "expected a list of types")
    return tuple(_aval(e, f"{what}[{i}]") for i, e in enumerate(entries))


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
    if artifact.kept is not None:
        header["kept"] = list(artifact.kept)
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    payload = header_bytes + b"".join(body)
    digest = hashlib.sha256(payload).digest()
    return PREFIX.pack(MAGIC, FORMAT_VERSION, len(header_bytes), digest) + payload


class Verified(NamedTuple):
    """What `verify` found in a saved function's fixed prefix."""

    checksum: bytes
    """The sha256 of the header and body."""
    header_size: int
    """Not covered by the checksum: with it, the checksum names the whole file (two files with
    both equal hold the same bytes), so what was checked of one need not be checked again."""


def verify(data: bytes) -> Verified:
    """Check the magic, format version and checksum of a saved function (one pass over it).

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
    if hashlib.sha256(memoryview(data)[PREFIX.size :]).digest() != digest:
        raise ArtifactError("corrupted or truncated saved function (checksum mismatch)")
    if PREFIX.size + header_size > len(data):
        raise ArtifactError(f"header length {header_size} runs past the end of the file")
    return Verified(digest, header_size)


def read_header(data: bytes) -> dict[str, Any]:
    """The JSON header of a saved function, after checking the magic, version and checksum.

    Raises:
        ArtifactError: not a saved Lamina function, or corrupted.
        IncompatibleArtifactError: a format version this Lamina does not read.
    """
    return _parse_header(data, verify(data).header_size)


def _parse_header(data: bytes, header_size: int) -> dict[str, Any]:
    try:
        header: dict[str, Any] = json.loads(data[PREFIX.size : PREFIX.size + header_size])
    except ValueError as err:
        raise ArtifactError(f"malformed saved-function header ({err})") from None
    except RecursionError:
        raise ArtifactError("malformed saved-function header: nested too deeply") from None
    if not isinstance(header, dict):
        raise _malformed("the header", header, "expected a JSON object")
    return header


Section = tuple[int, int]
"""Where a section lies in the file: [start, end) offsets from the start of the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """A saved function's header, every field checked, with where its sections lie: all of the
    file but the sections' bytes (so keeping one costs no copy of the executable or constants).
    """

    name: str
    built_with: Mapping[str, str]
    in_tree: JsonTree
    out_tree: JsonTree
    in_treedef: Any
    """`in_tree` decoded (a treedef of `in_avals`' leaves)."""
    out_treedef: Any
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    donated: tuple[bool, ...]
    const_avals: tuple[ShapedArray, ...]
    const_sections: tuple[Section, ...]
    executable: Section
    compile_options: Section
    kept: tuple[int, ...] | None = None
    """Positions of the inputs the executable takes (None: all)."""

    @property
    def executable_in_avals(self) -> tuple[ShapedArray, ...]:
        """The types of the inputs the executable takes."""
        kept = self.kept
        return self.in_avals if kept is None else tuple(self.in_avals[i] for i in kept)

    def artifact(self, data: bytes) -> Artifact:
        """The saved function in `data`, the bytes this layout was read from."""
        return Artifact(
            name=self.name,
            executable=self.section(data, self.executable),
            compile_options=self.section(data, self.compile_options),
            built_with=dict(self.built_with),
            in_tree=self.in_tree,
            out_tree=self.out_tree,
            in_avals=self.in_avals,
            out_avals=self.out_avals,
            donated=self.donated,
            consts=self.consts(data),
            kept=self.kept,
        )

    def consts(self, data: bytes) -> tuple[np.ndarray, ...]:
        """The constants' values in `data` (copies: they keep none of `data` alive)."""
        view = memoryview(data)
        return tuple(
            np.frombuffer(bytes(view[start:end]), dtype=aval.dtype).reshape(aval.shape)
            for aval, (start, end) in zip(self.const_avals, self.const_sections, strict=True)
        )

    @staticmethod
    def section(data: bytes, where: Section) -> bytes:
        return data[where[0] : where[1]]


def decode(data: bytes) -> Artifact:
    """The saved function in `data`, every header field checked.

    Raises:
        ArtifactError: not a saved Lamina function, corrupted, or a header that is malformed
            or inconsistent (a type Lamina lacks, a section outside the file, a constant whose
            bytes do not fit its type, a tree structure that does not match its types, ...).
        IncompatibleArtifactError: a format version this Lamina does not read, or one saved on a
            host of the other byte order.
    """
    return read_layout(data, verify(data)).artifact(data)


def read_layout(data: bytes, verified: Verified) -> Layout:
    """The layout of `data`, which `verify` checked (giving `verified`); see `decode`."""
    header = _parse_header(data, verified.header_size)
    body_start = PREFIX.size + verified.header_size
    body_size = len(data) - body_start
    missing = sorted(_HEADER_FIELDS - header.keys())
    if missing:
        raise ArtifactError(f"malformed saved-function header: no {', '.join(missing)}")
    if header["byteorder"] not in ("little", "big"):
        raise _malformed("byteorder", header["byteorder"], "expected little or big")
    if header["byteorder"] != sys.byteorder:
        raise IncompatibleArtifactError(
            f"saved on a {header['byteorder']}-endian host; this one is {sys.byteorder}-endian"
        )
    name, built_with = header["name"], header["built_with"]
    if not isinstance(name, str):
        raise _malformed("name", name, "expected a string")
    if not (
        isinstance(built_with, dict)
        and all(isinstance(v, str) for v in built_with.values())
        and all(isinstance(built_with.get(f), str) for f in PLATFORM_FIELDS)
    ):
        raise _malformed("built_with", built_with, f"expected strings for {PLATFORM_FIELDS}")

    def section(where: Any, what: str) -> Section:
        if not (isinstance(where, list) and len(where) == 2 and all(map(_is_int, where))):
            raise _malformed(what, where, "expected [offset, size]")
        start, size = where
        if start < 0 or size < 0 or start + size > body_size:
            raise _malformed(what, where, f"outside the {body_size}-byte body")
        return body_start + start, body_start + start + size

    const_avals, const_sections = [], []
    if not isinstance(header["consts"], list):
        raise _malformed("consts", header["consts"], "expected a list")
    for i, entry in enumerate(header["consts"]):
        aval = _aval(entry, f"consts[{i}]")
        start, end = section(entry.get("data"), f"consts[{i}].data")
        expected = aval.size * aval.dtype.itemsize
        if end - start != expected or aval.dtype == dtypes.float0:
            raise _malformed(
                f"consts[{i}].data",
                entry.get("data"),
                f"{aval.str_short(True)} takes {expected} bytes",
            )
        const_avals.append(ShapedArray(aval.shape, aval.dtype))  # never weak: a value's type
        const_sections.append((start, end))
    in_avals = _avals(header["in_avals"], "in_avals")
    out_avals = _avals(header["out_avals"], "out_avals")
    donated = header["donated"]
    if not (
        isinstance(donated, list)
        and len(donated) == len(in_avals)
        and all(type(d) is bool for d in donated)
    ):
        raise _malformed("donated", donated, f"expected {len(in_avals)} booleans")
    kept = header.get("kept")
    if kept is not None and not (
        isinstance(kept, list)
        and all(_is_int(i) and 0 <= i < len(in_avals) for i in kept)
        and kept == sorted(set(kept))
    ):
        raise _malformed("kept", kept, f"expected increasing positions below {len(in_avals)}")
    treedefs = []
    for what, tree, avals in (
        ("in_tree", header["in_tree"], in_avals),
        ("out_tree", header["out_tree"], out_avals),
    ):
        try:
            treedef = decode_treedef(tree)
        except TreeCodecError as err:
            raise ArtifactError(f"malformed saved-function header: {what}: {err}") from None
        if treedef.num_leaves != len(avals):
            raise _malformed(what, tree, f"{treedef.num_leaves} leaves for {len(avals)} types")
        treedefs.append(treedef)
    in_tree = header["in_tree"]
    if not (
        isinstance(in_tree, dict)
        and isinstance(in_tree.get("tuple"), list)
        and len(in_tree["tuple"]) == 2
        and isinstance(in_tree["tuple"][0], dict)
        and "tuple" in in_tree["tuple"][0]
        and isinstance(in_tree["tuple"][1], dict)
        and "dict" in in_tree["tuple"][1]
    ):
        raise _malformed("in_tree", in_tree, "expected the structure of (args tuple, kwargs dict)")
    return Layout(
        name=name,
        built_with=dict(built_with),
        in_tree=in_tree,
        out_tree=header["out_tree"],
        in_treedef=treedefs[0],
        out_treedef=treedefs[1],
        in_avals=in_avals,
        out_avals=out_avals,
        donated=tuple(donated),
        const_avals=tuple(const_avals),
        const_sections=tuple(const_sections),
        executable=section(header["executable"], "executable"),
        compile_options=section(header["compile_options"], "compile_options"),
        kept=None if kept is None else tuple(kept),
    )


_HEADER_FIELDS: Final = frozenset(
    (
        "name",
        "built_with",
        "byteorder",
        "in_tree",
        "out_tree",
        "in_avals",
        "out_avals",
        "donated",
        "executable",
        "compile_options",
        "consts",
    )
)


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
    return ", ".join(a.str_short(True) for a in avals) or "nothing"


__all__ = [
    "Artifact",
    "ArtifactError",
    "IncompatibleArtifactError",
    "Layout",
    "TreeCodecError",
    "Verified",
    "check_compatible",
    "decode",
    "encode",
    "read_header",
    "read_layout",
    "verify",
]
