"""Ref types and the Ref equations read back from printed jaxprs (`ir.parse`).

A Ref's type prints `Ref{f32[3]}` (`Ref<space>{...}` with a memory space), read by the type
reader registered for `Ref`. The Ref primitives print in forms of their own, read by the
equation forms registered for their markers:

- `c:f32[4] <- b[1,:]` — `get`;
- `b[0,:] <- d` — `swap` whose result is dropped; `c:f32[4], b[1,:] <- b[1,:], d` — kept;
- `b[...] += d` — `addupdate`.

A Ref viewed through a chain (`ref.at[...]`) prints each view in turn: `b[1:,:][0,:]`,
`b[0,:]{reshape([2, 2])}[1,:]`, `b{transpose([1, 0])}`, `b[1:,:]{bitcast(int32)}`.

An index lists one entry per dimension: a static slice (`1:3`, `::2`, `:`), or an integer
operand printed without its type (a variable, `1`, or `[...]`, the next elided constant).
Integer literals read as int32, as `ref[1]` makes them (int64 beyond its range). Elided
constants take their values in print order (an index before the value written), a kept
swap's index once although it prints twice.
"""

from __future__ import annotations

import re
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Atom,
    EqnSource,
    JaxprEqn,
    ReadEqn,
    ShapedArray,
    parse_type,
    register_constant_codec,
    register_eqn_form,
    register_printed_operands,
    register_type_reader,
)
from lamina_refs._indexing import (
    BitcastTransform,
    IntIndex,
    NDIndexer,
    ReshapeTransform,
    Slice,
    Transform,
    Transforms,
    TransposeTransform,
    transformed_aval,
)
from lamina_refs._primitives import addupdate_p, new_ref, swap_p
from lamina_refs._ref import Ref
from lamina_refs._types import AbstractRef

_REF: Final = re.compile(r"Ref(?:<(?P<space>[^>]*)>)?\{(?P<inner>.+)\}\Z")
_BINDER: Final = re.compile(r"(?P<name>\w+):(?P<type>\S+)\Z")
_INDEXED: Final = re.compile(r"(?P<ref>\w+)(?P<views>[\[{].*)\Z")
_VIEW: Final = re.compile(r"\{(?P<kind>reshape|transpose|bitcast)\((?P<arg>[^)]*)\)\}")
_INT32: Final = np.iinfo(np.int32)
_ELIDED: Final = re.compile(r"(?<!\w)\[\.\.\.\]")


def read_ref_type(text: str) -> AbstractRef:
    """`Ref{f32[3]}` or `Ref<space>{f32[3]}`."""
    m = _REF.match(text)
    if m is None:
        raise ValueError("expected Ref{type} or Ref<memory space>{type}")
    return AbstractRef(parse_type(m["inner"]), m["space"])


register_type_reader("Ref", read_ref_type)


def _slice(text: str, dim: int) -> Slice:
    parts = text.split(":")
    if len(parts) > 3:
        raise ValueError(f"a slice has at most two ':', got {text!r}")
    try:
        start, stop, stride = (int(p) if p else None for p in (*parts, "")[:3])
    except ValueError:
        raise ValueError(f"a Ref slice has integer bounds, got {text!r}") from None
    start = 0 if start is None else start
    stop = dim if stop is None else stop
    stride = 1 if stride is None else stride
    if stride < 1 or not 0 <= start <= dim:
        raise ValueError(f"bad slice {text!r} of a dimension of size {dim}")
    return Slice(start, len(range(start, stop, stride)), stride)


def _int_operand(text: str, source: EqnSource) -> Atom:
    dtype: Any = np.int32
    if text.lstrip("-").isdigit() and not _INT32.min <= int(text) <= _INT32.max:
        dtype = np.int64
    atom = source.atom(text, dtype)
    aval = atom.aval
    if not isinstance(aval, ShapedArray) or aval.dtype.kind not in "iu":
        raise TypeError(f"a Ref index is an integer, got {text!r} of type {aval.str_short(True)}")
    return atom


class _Indexed:
    """`ref[index]` as printed, or a chain of views `ref[1:,:]{reshape([2, 4])}[0,:]`: the
    Ref, and its transforms once its shape is known."""

    def __init__(self, text: str, source: EqnSource) -> None:
        m = _INDEXED.match(text.strip())
        if m is None:
            raise ValueError(f"expected a Ref and its index, as a[1,:], found {text.strip()!r}")
        self.ref = source.atom(m["ref"])
        self.views = _views(m["views"])
        if not isinstance(self.ref.aval, AbstractRef):
            raise TypeError(
                f"'{m['ref']}' is not a Ref: its type is {self.ref.aval.str_short(True)}"
            )

    def read(self, source: EqnSource) -> tuple[Transforms, list[Atom]]:
        if self.views == ["[...]"]:
            return (), []
        tree: list[Transform] = []
        operands: list[Atom] = []
        aval = self.ref.aval.inner_aval  # type: ignore[attr-defined]  # a Ref
        for view in self.views:
            if view.startswith("["):
                transform: Transform = self._indexer(view[1:-1], aval.shape, operands, source)
            else:
                transform = _view(view)
            tree.append(transform)
            aval = transformed_aval((transform,), aval)
        return tuple(tree), operands

    @staticmethod
    def _indexer(
        index: str, shape: tuple[int, ...], operands: list[Atom], source: EqnSource
    ) -> NDIndexer:
        parts = index.split(",")
        if len(parts) != len(shape):
            raise ValueError(
                f"an index of a Ref of shape {shape} has {len(shape)} entries, got {len(parts)}"
            )
        indices: list[Slice | IntIndex] = []
        mine: list[Atom] = []
        for part, dim in zip(parts, shape, strict=True):
            if ":" in part:
                indices.append(_slice(part, dim))
            else:
                indices.append(IntIndex(len(operands) + len(mine)))
                mine.append(_int_operand(part, source))
        operands.extend(mine)
        shapes = [a.aval.shape for a in mine]  # type: ignore[attr-defined]  # arrays
        common = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        return NDIndexer(tuple(indices), shape, common)


def _views(text: str) -> list[str]:
    """`[1:,:]{reshape([2, 4])}[0,:]` split into its views (an index may hold `[...]`)."""
    views, k = [], 0
    while k < len(text):
        close = {"[": "]", "{": "}"}.get(text[k])
        if close is None:
            raise ValueError(f"expected an index [...] or a view {{...}}, found {text[k:]!r}")
        depth, end = 0, k
        for end in range(k, len(text)):
            depth += text[end] == text[k]
            depth -= text[end] == close
            if depth == 0:
                break
        if depth:
            raise ValueError(f"unbalanced {text[k]!r} in {text!r}")
        views.append(text[k : end + 1])
        k = end + 1
    return views


def _view(text: str) -> Transform:
    m = _VIEW.fullmatch(text)
    if m is None:
        raise ValueError(f"expected a view {{reshape([...])}}, {{transpose([...])}} or "
                         f"{{bitcast(dtype)}}, found {text!r}")  # fmt: skip
    if m["kind"] == "bitcast":
        return BitcastTransform(np.dtype(m["arg"]))
    dims = tuple(int(d) for d in m["arg"].strip("[]").split(",") if d.strip())
    return ReshapeTransform(dims) if m["kind"] == "reshape" else TransposeTransform(dims)


def _binder(text: str, source: EqnSource) -> tuple[str, AbstractValue]:
    m = _BINDER.match(text.strip())
    if m is None:
        raise ValueError(f"expected a variable and its type, as c:f32[3], found {text.strip()!r}")
    return m["name"], source.type(m["type"])


def read_arrow(text: str, source: EqnSource) -> ReadEqn:
    """`c:T <- a[i]` (get), `a[i] <- v` (swap, result dropped), `c:T, a[i] <- a[i], v` (swap)."""
    lhs, _, rhs = text.partition(" <- ")
    if _BINDER.match(lhs.strip()):  # a get
        target = _Indexed(rhs, source)
        out = _binder(lhs, source)
        tree, operands = target.read(source)
        return ReadEqn("get", [out], [target.ref, *operands], {"tree": tree})
    if ", " in lhs:  # a swap whose result is read: the target printed on both sides
        binder, target_text = lhs.split(", ", 1)
        again, _, value_text = rhs.rpartition(", ")
        if again.strip() != target_text.strip():
            raise ValueError(f"a swap writes where it reads: {target_text!r} and {again!r}")
        outs: list[tuple[str, AbstractValue | None]] = [_binder(binder, source)]
    else:
        target_text, value_text = lhs, rhs
        outs = [("", None)]  # a result nobody reads, not dropped: it prints so again
    target = _Indexed(target_text, source)
    tree, operands = target.read(source)  # in print order: the index, then the value
    value = source.atom(value_text.strip())
    return ReadEqn("swap", outs, [target.ref, value, *operands], {"tree": tree})


def read_add(text: str, source: EqnSource) -> ReadEqn:
    """`a[i] += v` (addupdate)."""
    lhs, _, rhs = text.partition(" += ")
    target = _Indexed(lhs, source)
    tree, operands = target.read(source)
    value = source.atom(rhs.strip())
    return ReadEqn("addupdate", [], [target.ref, value, *operands], {"tree": tree})


def _repeated(line: str) -> int:
    """A kept swap prints its index twice (`c:T, a[[...]] <- a[[...]], v`): the index's
    elided constants take their values once, where first printed."""
    lhs = line.partition(" <- ")[0]
    if _BINDER.match(lhs.strip()):
        return 0
    # Not `a[...]`, the whole-array index: that is no constant.
    return len(_ELIDED.findall(lhs.partition(", ")[2]))


def _index_then_value(eqn: JaxprEqn) -> list[Atom]:
    """The operands as `a[i] <- v` and `a[i] += v` print them: the Ref, its index, the value."""
    ref, value, *index = eqn.invars
    return [ref, *index, value]


register_eqn_form(" <- ", read_arrow, _repeated)
register_eqn_form(" += ", read_add)
register_printed_operands(swap_p.name, _index_then_value)
register_printed_operands(addupdate_p.name, _index_then_value)


def _store_ref(value: Any) -> tuple[str, list[Any]] | None:
    if type(value) is not Ref:
        return None
    return "", [np.asarray(value.value()).reshape(value.shape)]


def _load_ref(meta: str, parts: list[np.ndarray]) -> Any:
    (value,) = parts
    return new_ref(value)


# A Ref a program closes over is stored in the JSON form as the value it holds then; read
# back, it is a new Ref holding that value (the loaded program's own).
register_constant_codec("ref", _store_ref, _load_ref)
