"""Abstract values: the types of jaxpr variables.

`AbstractValue` is an open protocol: core's machinery calls only its methods, so upper layers
(Refs, hi types) add their own kinds of abstract value without core naming them. `ShapedArray`
is core's own: an array type given by shape, dtype and weak type; its dtype may be an extended
dtype (`dtypes.ExtendedDType`, e.g. PRNG keys), stored as its physical array (`physical_aval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np

from lamina_core.ir import _mesh, dtypes
from lamina_core.ir._dim_expr import DimExpr
from lamina_core.ir._mesh import AbstractMesh, AxisType, NamedSharding
from lamina_core.ir._partition_spec import PartitionSpec, entry_axes, split_counts


def _must_override(aval: object, method: str, feature: str) -> NotImplementedError:
    return NotImplementedError(
        f"{type(aval).__name__} does not implement `{method}`, which {feature} needs; "
        f"define `{method}` on the abstract value type"
    )


class AbstractValue:
    """The protocol every abstract value answers. Subclasses are immutable and hashable."""

    __slots__ = ()
    is_high: ClassVar[bool] = False
    """True for hi types, which the to-lojax pass expands before lowering."""
    mutable: ClassVar[bool] = False
    """True for references to mutable state (Refs): such values are never literals, are
    captured by reference, cannot be returned from a `jit`, and alias nothing else."""
    has_qdd: ClassVar[bool] = False
    """True for mutable hi types, whose values carry quasi-dynamic data (what a box holds)
    that changes as a traced program updates them."""
    tracer_getitem: ClassVar[Any] = None
    """`(tracer, index) -> value` for `tracer[index]`, or None for NumPy indexing."""
    tracer_setitem: ClassVar[Any] = None
    """`(tracer, index, value) -> None` for `tracer[index] = value`, or None (immutable)."""

    def operand_error(self, prim: str) -> Exception:
        """The error for passing a value of this type to the array primitive `prim`."""
        return TypeError(f"{prim} takes arrays, got a value of type {self.str_short(True)}")

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        """The type as JAX's `str_short` gives it: `float32[8]`, or `f32[8]` (as jaxprs print
        it) with `short_dtypes`; `mesh_axis_types` adds the mesh's axis types."""
        raise _must_override(self, "str_short", "printing jaxprs")

    def to_tangent_aval(self) -> AbstractValue:
        """The type of this value's tangents."""
        raise _must_override(self, "to_tangent_aval", "differentiation")

    def normalize(self) -> AbstractValue:
        """This type with weak typing removed (identity for types without it)."""
        return self

    def strip_weak_type(self) -> AbstractValue:
        return self.normalize()

    def dec_rank(self, size: int, axis: int) -> AbstractValue:
        """The type of one slice along `axis` (batching removes a mapped axis)."""
        raise _must_override(self, "dec_rank", "vmap")

    def inc_rank(self, size: int, axis: int) -> AbstractValue:
        """The type with a new axis of `size` at `axis` (batching adds a mapped axis)."""
        raise _must_override(self, "inc_rank", "vmap")

    def shard(self, mesh: Any, manual_axes: frozenset[Any], check_vma: bool, spec: Any) -> Any:
        """The type of each device's piece of a value of this type split as `spec` says over
        `mesh` (what a `shard_map` body sees)."""
        raise _must_override(self, "shard", "shard_map")

    def unshard(self, mesh: Any, check_vma: bool, spec: Any) -> Any:
        """The type of the value a `shard_map` assembles from pieces of this type (`spec`
        says how): the inverse of `shard`."""
        raise _must_override(self, "unshard", "shard_map")

    def leading_axis_spec(self) -> Any:
        """The mapped-axis description `scan` slices and stacks values of this type along:
        axis 0 for arrays; hi types answer with their own mapping spec."""
        return 0

    def lo_ty(self) -> list[AbstractValue]:
        """The array types a value of this type lowers to (itself, for a lojax type)."""
        return [self]

    def lower_val(self, hi_val: Any) -> list[Any]:
        """A value of this type as values of its `lo_ty` types (itself, for a lojax type)."""
        return [hi_val]

    def raise_val(self, *lo_vals: Any) -> Any:
        """The value of this type made of values of its `lo_ty` types: `lower_val`'s inverse."""
        (val,) = lo_vals
        return val

    def to_ct_aval(self) -> AbstractValue:
        """The type of this value's cotangents: its tangent type unless a type says otherwise."""
        return self.to_tangent_aval()


_MAX_EXTENT = 2**63 - 1
"""The largest element count, byte size or dimension XLA represents (its sizes are int64)."""
_SURELY_FINE = _MAX_EXTENT >> 6
"""Element counts up to this fit in int64 bytes for any dtype (itemsizes are at most 16)."""


_FINE_SHAPES: set[tuple[int, ...]] = set()
"""Shapes already checked and fine for every dtype (a program uses few): a set lookup is
cheaper than the check, and avals are made for every equation."""


def _check_extent(shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Reject shapes XLA cannot represent (it aborts the process on them): a negative
    dimension, a dimension beyond int64, or an element count or byte size beyond int64."""
    if any(d < 0 for d in shape):
        raise ValueError(f"shape dimensions must be non-negative, got {shape!r}")
    big = [d for d in shape if d > _MAX_EXTENT]
    if big:
        raise ValueError(
            f"shape {shape!r} has a dimension of size {big[0]}, more than an array dimension "
            f"may have (2**63 - 1)"
        )
    count = math.prod(shape)
    nbytes = count * max(dtype.itemsize, 1)
    if count > _MAX_EXTENT or nbytes > _MAX_EXTENT:
        raise ValueError(
            f"shape {shape!r} of dtype {dtype.name} is too large: {count} elements of "
            f"{dtype.itemsize} bytes make {nbytes} bytes, more than an array may hold "
            f"(2**63 - 1 elements or bytes)"
        )


def _canonical_shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    out: list[Any] = []
    for d in dims:
        if type(d) is DimExpr:  # symbolic dimensions (shape polymorphism) are kept
            out.append(d)
            continue
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"shape must be a sequence of integers, got {shape!r}")
        if d < 0:
            raise ValueError(f"shape dimensions must be non-negative, got {shape!r}")
        out.append(int(d))
    return tuple(out)


_KEEP: Any = object()
_INT_ONLY: Final = frozenset({int})
"""Types a canonical shape's dimensions have (a check in C, for every type made)."""
_UNPLACED: dict[int, NamedSharding] = {}
_ABSTRACT_SCOPES: Final = _mesh._abstract_scopes

MESHES_SEEN: Final = _mesh.MESHES_SEEN
"""Whether any array type with a mesh was made: until one is, tracing skips the mesh rule."""


@dataclass(frozen=True, slots=True)
class ShapedArray(AbstractValue):
    """An array type: shape, dtype and whether the dtype is weak (came from a Python scalar)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False
    """Weakly typed values take the dtype of the strongly typed values they meet."""
    mesh: AbstractMesh | None = None
    """The abstract mesh the value is laid out over (None: the empty mesh). Values of a
    sharded argument carry its mesh, and so does what is computed from them; types made
    inside a `shard_map` body carry its manual mesh (JAX's sharding in types, Auto and Manual
    axes: a spec is all None there, so the mesh is all a type holds)."""
    vma: frozenset[Any] = frozenset()
    """The manual mesh axes the value varies over inside a `shard_map(check_vma=True)` body
    (JAX's varying manual axes); empty everywhere else."""
    spec: tuple[Any, ...] | None = None
    """How the value is split over the Explicit axes of its mesh (JAX's sharding in types,
    Explicit axes): one entry per dimension, None, an axis name or a tuple of names. None (no
    tuple at all) when no dimension is split, so unsplit types are as cheap as before."""

    def __post_init__(self) -> None:
        if type(self.vma) is not frozenset:
            object.__setattr__(self, "vma", frozenset(self.vma))
        mesh = self.mesh
        if mesh is None:
            if _ABSTRACT_SCOPES[0]:
                object.__setattr__(self, "mesh", _mesh.aval_mesh())
        elif mesh.empty:
            object.__setattr__(self, "mesh", None)
        else:
            MESHES_SEEN[0] = True
        if self.spec is not None:
            _check_spec(self)
        if type(self.shape) is not tuple or not _INT_ONLY.issuperset(map(type, self.shape)):
            object.__setattr__(self, "shape", _canonical_shape(self.shape))
            if not _INT_ONLY.issuperset(map(type, self.shape)):
                # Symbolic dimensions: the variables are at least 1, no extent to check here.
                if not isinstance(self.dtype, np.dtype):
                    object.__setattr__(self, "dtype", np.dtype(self.dtype))  # type: ignore[unreachable]
                return
        if not isinstance(self.dtype, np.dtype):
            # Callers may pass a scalar type (np.float32); the field always holds a dtype.
            object.__setattr__(self, "dtype", np.dtype(self.dtype))  # type: ignore[unreachable]
        # XLA aborts the process on sizes it cannot represent: refuse them here, where every
        # primitive's result type is made. Shapes seen before cost a set lookup.
        shape = self.shape
        if shape in _FINE_SHAPES:
            return
        count = math.prod(shape)
        if count <= 0 or count > _SURELY_FINE or min(shape, default=0) < 0:
            _check_extent(shape, self.dtype)
        if 0 <= count <= _SURELY_FINE:
            if len(_FINE_SHAPES) >= 4096:
                _FINE_SHAPES.clear()
            _FINE_SHAPES.add(shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(
        self,
        shape: tuple[int, ...] | None = None,
        dtype: np.dtype | None = None,
        weak_type: bool | None = None,
        mesh: AbstractMesh | Any | None = _KEEP,
        vma: frozenset[Any] | None = None,
        spec: tuple[Any, ...] | Any | None = _KEEP,
    ) -> ShapedArray:
        """This type with the given fields replaced. A new shape or mesh drops the spec
        unless one is given."""
        if spec is _KEEP:
            spec = self.spec if shape is None and mesh is _KEEP else None
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            self.mesh if mesh is _KEEP else mesh,
            self.vma if vma is None else vma,
            spec,
        )

    @property
    def sharding(self) -> NamedSharding:
        """JAX's `aval.sharding`: the mesh, and the spec (None per dimension unless the
        value is split over Explicit axes)."""
        if self.spec is not None:
            return NamedSharding(self.mesh, PartitionSpec(*self.spec))  # type: ignore[arg-type]  # a spec implies a mesh
        ndim = len(self.shape)
        if self.mesh is None:  # most types: one shared value per rank (rules ask often)
            unplaced = _UNPLACED.get(ndim)
            if unplaced is None:
                unplaced = _UNPLACED[ndim] = NamedSharding(
                    _mesh.EMPTY_ABSTRACT_MESH, PartitionSpec(*(None,) * ndim)
                )
            return unplaced
        return NamedSharding(self.mesh, PartitionSpec(*(None,) * ndim))

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        name = (
            dtypes.short_dtype_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        )
        axes = _axis_types_str(self.mesh) if mesh_axis_types else ""
        if self.spec is not None:
            dims = _shape_spec_str(self.shape, self.spec)
            return f"{name}[{dims}]{vma_str(self.vma, self.mesh)}{axes}"
        return f"{name}[{','.join(map(str, self.shape))}]{vma_str(self.vma, self.mesh)}{axes}"

    def __str__(self) -> str:
        return f"{'~' if self.weak_type else ''}{self.str_short(short_dtypes=False)}"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def to_tangent_aval(self) -> ShapedArray:
        # Integers, bools and extended dtypes (keys); ml_dtypes floats also have kind "V".
        if self.dtype.kind in "biu" or dtypes.extended_dtype_of(self.dtype) is not None:
            return ShapedArray(
                self.shape, dtypes.float0, self.weak_type, self.mesh, self.vma, self.spec
            )
        return self

    def normalize(self) -> ShapedArray:
        return (
            self
            if not self.weak_type
            else ShapedArray(self.shape, self.dtype, False, self.mesh, self.vma, self.spec)
        )

    def dec_rank(self, size: int, axis: int) -> ShapedArray:
        if not 0 <= axis < self.ndim or self.shape[axis] != size:
            raise ValueError(
                f"cannot remove axis {axis} of size {size} from {self.str_short(True)}"
            )
        return ShapedArray(
            self.shape[:axis] + self.shape[axis + 1 :],
            self.dtype,
            self.weak_type,
            self.mesh,
            self.vma,
            None if self.spec is None else self.spec[:axis] + self.spec[axis + 1 :],
        )

    def shard(
        self, mesh: Any, manual_axes: frozenset[Any], check_vma: bool, spec: Any
    ) -> ShapedArray:
        counts = split_counts(spec, mesh.shape, self.ndim)
        manual = _mesh.manual_mesh(mesh, manual_axes)
        # With check_vma, a piece varies over the mesh axes its spec splits the value over.
        vma = self.vma | _split_over(spec) if check_vma else self.vma
        return ShapedArray(
            tuple(d // n for d, n in zip(self.shape, counts, strict=True)),
            self.dtype,
            self.weak_type,
            manual,
            vma,
            # A piece stays split over the Explicit axes the body is not manual over.
            explicit_spec(manual, self.spec or (), self.ndim),
        )

    def unshard(self, mesh: Any, check_vma: bool, spec: Any) -> ShapedArray:
        counts = split_counts(spec, mesh.shape, self.ndim)
        context = _mesh.get_abstract_mesh()
        outer = mesh.abstract_mesh if context.empty else context
        # As JAX's, the assembled value is split over the spec's axes (and the piece's own);
        # the type keeps the Explicit ones.
        own = self.spec or (None,) * self.ndim
        parts = spec.partitions + (None,) * (self.ndim - len(spec.partitions))
        merged = [(*entry_axes(p), *entry_axes(o)) or None for p, o in zip(parts, own, strict=True)]
        return ShapedArray(
            tuple(d * n for d, n in zip(self.shape, counts, strict=True)),
            self.dtype,
            self.weak_type,
            outer,
            # Outside, the value varies only over the axes an enclosing shard_map is manual over.
            self.vma & frozenset(mesh.manual_axes),
            explicit_spec(outer, merged, self.ndim),
        )

    def inc_rank(self, size: int, axis: int) -> ShapedArray:
        if not 0 <= axis <= self.ndim:
            raise ValueError(f"cannot insert axis {axis} into {self.str_short(True)}")
        return ShapedArray(
            (*self.shape[:axis], size, *self.shape[axis:]),
            self.dtype,
            self.weak_type,
            self.mesh,
            self.vma,
            None if self.spec is None else (*self.spec[:axis], None, *self.spec[axis:]),
        )


def _axis_types_str(mesh: AbstractMesh | None) -> str:
    """`({Explicit: ('i',)})`: the mesh's axis names by type, as JAX prints them."""
    by_type: dict[AxisType, list[Any]] = {}
    if mesh is not None:
        for name, kind in zip(mesh.axis_names, mesh.axis_types, strict=True):
            by_type.setdefault(kind, []).append(name)
    return "({" + ", ".join(f"{t!r}: {tuple(n)!r}" for t, n in by_type.items()) + "})"


def _check_spec(aval: ShapedArray) -> None:
    spec = aval.spec
    assert spec is not None
    if type(spec) is not tuple:
        spec = tuple(spec)
    if all(e is None for e in spec) or aval.mesh is None:
        object.__setattr__(aval, "spec", None)  # canonical: an unsplit type holds no spec
        return
    if len(spec) != len(aval.shape):
        raise ValueError(
            "Length of sharding.spec must be equal to aval's ndim. Got sharding.spec "
            f"{PartitionSpec(*spec)}, aval.ndim {len(aval.shape)}"
        )
    sizes = aval.mesh.shape
    for dim, (entry, size) in enumerate(zip(spec, aval.shape, strict=True)):
        names = entry_axes(entry)
        split = math.prod(sizes[n] for n in names)
        if size % split:
            raise ValueError(
                f"Sharding spec {names} implies that array axis {dim} is partitioned {split} "
                f"times, but does not evenly divide the dimension size {size}. Got shape: "
                f"{aval.shape} and sharding {NamedSharding(aval.mesh, PartitionSpec(*spec))}"
            )
    object.__setattr__(aval, "spec", spec)


def _shape_spec_str(shape: tuple[int, ...], spec: tuple[Any, ...]) -> str:
    """Dimensions with the axes they are split over, as JAX prints them: `8@data`,
    `8@(x,y)`."""
    out = []
    for size, entry in zip(shape, spec, strict=True):
        if entry is None:
            out.append(str(size))
        elif isinstance(entry, tuple):
            out.append(f"{size}@({','.join(map(str, entry))})")
        else:
            out.append(f"{size}@{entry}")
    return ",".join(out)


def explicit_spec(mesh: AbstractMesh | None, spec: Any, ndim: int) -> tuple[Any, ...] | None:
    """The spec a type over `mesh` keeps of `spec` (a PartitionSpec or its entries): the
    Explicit axes only (JAX drops Auto and Manual ones), padded to `ndim` entries; None if
    nothing is split over an Explicit axis."""
    if mesh is None or not mesh.has_explicit:
        return None
    parts = spec.partitions if isinstance(spec, PartitionSpec) else tuple(spec)
    if len(parts) > ndim:
        raise ValueError(
            "Length of sharding.spec must be equal to aval's ndim. Got sharding.spec "
            f"{PartitionSpec(*parts)}, aval.ndim {ndim}"
        )
    types = mesh._name_to_type
    out: list[Any] = []
    for entry in parts:
        names = tuple(n for n in entry_axes(entry) if types[n] is AxisType.Explicit)
        out.append(None if not names else names[0] if len(names) == 1 else names)
    out.extend([None] * (ndim - len(parts)))
    return None if all(e is None for e in out) else tuple(out)


def _split_over(spec: Any) -> frozenset[Any]:
    return frozenset(n for entry in spec.partitions for n in entry_axes(entry))


def vma_str(vma: frozenset[Any], mesh: AbstractMesh | None = None) -> str:
    """How a type prints the manual axes it varies over, as JAX's: `{V:i}`, `{V:(i,j)}`, in
    the order of the type's mesh (sorted by name when it has none)."""
    if not vma:
        return ""
    if mesh is not None and vma <= set(mesh.axis_names):
        names = [str(n) for n in mesh.axis_names if n in vma]
    else:
        names = sorted(map(str, vma))
    return f"{{V:{names[0]}}}" if len(names) == 1 else f"{{V:({','.join(names)})}}"


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The array type values of `aval` are stored and lowered as: `aval` itself for numeric
    dtypes; for an extended dtype, its physical element appended (`key<fry>[3]` is `u32[3,2]`)."""
    ext = dtypes.extended_dtype_of(aval.dtype)
    if ext is None:
        return aval
    spec = None if aval.spec is None else (*aval.spec, *(None,) * len(ext.physical_shape))
    return ShapedArray(
        (*aval.shape, *ext.physical_shape), ext.physical_dtype, False, aval.mesh, spec=spec
    )


def types_match(a: AbstractValue, b: AbstractValue) -> bool:
    """Equal up to weak typing and mesh, the comparison the type checker uses."""
    a, b = a.normalize(), b.normalize()
    if type(a) is ShapedArray and type(b) is ShapedArray and (a.mesh, a.spec) != (b.mesh, b.spec):
        return a.update(mesh=None) == b.update(mesh=None)
    return a == b


def common_mesh(avals: Any) -> AbstractMesh | None:
    """The mesh of the array types among `avals` that have one (JAX's rule for a primitive's
    result under Auto and Manual axes); None if none has, or two differ."""
    found = None
    for a in avals:
        m = getattr(a, "mesh", None)
        if m is not None:
            if found is not None and m != found:
                return None
            found = m
    return found
