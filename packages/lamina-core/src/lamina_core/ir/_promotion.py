"""JAX's type-promotion lattice, over dtype names plus three weak nodes for Python scalars.

A node is either the `name` of a NumPy dtype (`"int32"`, `"bfloat16"`) or one of the weak nodes
`"i*"`, `"f*"`, `"c*"`: the types of Python `int`, `float` and `complex` values, which adapt to the
width of whatever strong type they meet. Two nodes promote to their least upper bound; a set of
nodes with no common upper bound raises `TypePromotionError`.

Invariants: the lattice is a DAG in which every set of nodes that has a common upper bound has
exactly one least one (the tests check every pair and triple). There is one lattice per x64 mode;
they differ in a single edge.

This module must not know about configuration, values or avals: `lamina_core.ir.dtypes` maps its
arguments to nodes, passes the x64 mode in, and maps the resulting node back to a dtype.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

WEAK_INT: Final = "i*"
WEAK_FLOAT: Final = "f*"
WEAK_COMPLEX: Final = "c*"
WEAK_NODES: Final = (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX)

FLOAT8_NAMES: Final = (
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
)
FLOAT6_NAMES: Final = ("float6_e2m3fn", "float6_e3m2fn")
FLOAT4_NAMES: Final = ("float4_e2m1fn",)
SIGNED_SUBBYTE_NAMES: Final = ("int1", "int2", "int4")
UNSIGNED_SUBBYTE_NAMES: Final = ("uint1", "uint2", "uint4")
SUBBYTE_INT_NAMES: Final = SIGNED_SUBBYTE_NAMES + UNSIGNED_SUBBYTE_NAMES
NARROW_FLOAT_NAMES: Final = FLOAT4_NAMES + FLOAT6_NAMES + FLOAT8_NAMES
"""Floats narrower than 16 bits: only weak floats promote into them, and nothing out."""


class TypePromotionError(ValueError):
    """Raised when a set of dtypes has no implicit promotion; the same class JAX raises."""


def _edges(*, x64: bool) -> dict[str, tuple[str, ...]]:
    """Each node's immediate successors: a ≤ b exactly when b is reachable from a."""
    edges: dict[str, tuple[str, ...]] = {
        "bool": (WEAK_INT,),
        # Sub-byte integers are leaves reachable only from a weak int, so combining one with
        # any other strong integer is an error rather than a silent widening.
        WEAK_INT: ("uint8", "int8", *SUBBYTE_INT_NAMES),
        "uint8": ("uint16", "int16"),
        "uint16": ("uint32", "int32"),
        # Without x64 JAX refuses to manufacture a 64-bit type from 32-bit inputs, so
        # uint32 sits below int32 and uint32 with int32 gives int32 (it is int64 with x64).
        "uint32": ("uint64", "int64" if x64 else "int32"),
        # Mixed 64-bit signedness has no integer home; it goes to the weak float.
        "uint64": (WEAK_FLOAT,),
        "int8": ("int16",),
        "int16": ("int32",),
        "int32": ("int64",),
        "int64": (WEAK_FLOAT,),
        WEAK_FLOAT: (*NARROW_FLOAT_NAMES, "bfloat16", "float16", WEAK_COMPLEX),
        "bfloat16": ("float32",),
        "float16": ("float32",),
        "float32": ("float64", "complex64"),
        "float64": ("complex128",),
        WEAK_COMPLEX: ("complex64",),
        "complex64": ("complex128",),
        "complex128": (),
    }
    for leaf in (*SUBBYTE_INT_NAMES, *NARROW_FLOAT_NAMES):
        edges[leaf] = ()
    return edges


def _upper_bounds(edges: Mapping[str, tuple[str, ...]]) -> Mapping[str, frozenset[str]]:
    """Every node's set of upper bounds (itself included): the reflexive transitive closure."""
    closure: dict[str, frozenset[str]] = {}

    def visit(node: str, path: tuple[str, ...]) -> frozenset[str]:
        if node in path:
            raise AssertionError(f"cycle in the type promotion lattice through {node!r}")
        if node not in closure:
            above = {node}
            for succ in edges[node]:
                above |= visit(succ, (*path, node))
            closure[node] = frozenset(above)
        return closure[node]

    for node in edges:
        visit(node, ())
    return MappingProxyType(closure)


def _strict_edges() -> dict[str, tuple[str, ...]]:
    """The lattice of `jax_numpy_dtype_promotion="strict"`: weak types go to any type of their
    kind or a wider kind, and strong types to nothing but themselves."""
    edges: dict[str, tuple[str, ...]] = {node: () for node in _edges(x64=True)}
    kinds = {WEAK_INT: "int", WEAK_FLOAT: "float", WEAK_COMPLEX: "complex"}
    wider = {WEAK_INT: (WEAK_FLOAT,), WEAK_FLOAT: (WEAK_COMPLEX,), WEAK_COMPLEX: ()}
    for weak, kind in kinds.items():
        strong = tuple(n for n in edges if n not in WEAK_NODES and kind in n)
        edges[weak] = (*wider[weak], *strong)
    return edges


_UPPER_BOUNDS: Final[Mapping[bool, Mapping[str, frozenset[str]]]] = MappingProxyType(
    {x64: _upper_bounds(_edges(x64=x64)) for x64 in (False, True)}
)
_STRICT_UPPER_BOUNDS: Final = _upper_bounds(_strict_edges())

NODES: Final[frozenset[str]] = frozenset(_UPPER_BOUNDS[True])
"""Every node of the lattice: the promotable dtype names and the weak nodes."""


def least_upper_bound(nodes: Iterable[str], *, x64: bool, strict: bool = False) -> str:
    """The least node above all of `nodes`.

    Args:
        nodes: lattice nodes (members of `NODES`); order matters only for error messages.
        x64: which lattice to use (whether 64-bit types may arise from 32-bit inputs).
        strict: use the strict lattice (`jax_numpy_dtype_promotion="strict"`), in which
            different strong types never promote.

    Returns:
        The least upper bound, itself a node.

    Raises:
        TypePromotionError: the nodes have no common upper bound.
        KeyError: a node is not in the lattice (callers validate first).
    """
    ordered = tuple(dict.fromkeys(nodes))
    table = _STRICT_UPPER_BOUNDS if strict else _UPPER_BOUNDS[x64]
    common = frozenset.intersection(*(table[n] for n in ordered))
    # An input that bounds all the others is the answer without searching.
    least = common.intersection(ordered) or {c for c in common if common <= table[c]}
    if len(least) == 1:
        return next(iter(least))
    if not least:
        raise TypePromotionError(_no_promotion_message(ordered, strict))
    raise AssertionError(f"type promotion lattice is ill-formed: {ordered} have bounds {least}")


def _shown(node: str) -> str:
    # JAX names weak nodes by their Python type; matching it keeps messages comparable.
    weak_names = {WEAK_INT: int, WEAK_FLOAT: float, WEAK_COMPLEX: complex}
    return str(weak_names[node]) if node in weak_names else node


def _no_promotion_message(nodes: tuple[str, ...], strict: bool = False) -> str:
    head = (
        f"Input dtypes {tuple(_shown(n) for n in nodes)} have no available implicit dtype "
        "promotion path"
    )
    if strict:
        return (
            f"{head} when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to "
            "the desired output type, or set jax_numpy_dtype_promotion=standard."
        )
    head += "."
    narrow_floats = (("8-bit", FLOAT8_NAMES), ("6-bit", FLOAT6_NAMES), ("4-bit", FLOAT4_NAMES))
    for width, names in narrow_floats:
        if any(n in names for n in nodes):
            return (
                f"{head} To avoid unintended promotion, {width} floats do not support implicit "
                "promotion. If you'd like your inputs to be promoted to another type, you can do "
                "so explicitly using e.g. x.astype('float32')"
            )
    if any(n in SUBBYTE_INT_NAMES for n in nodes):
        return (
            f"{head} To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not "
            "support implicit promotion. If you'd like your inputs to be promoted to another "
            "type, you can do so explicitly using e.g. x.astype('int32')"
        )
    return f"{head} Try explicitly casting inputs to the desired output type."
