"""`with_sharding_constraint`: ask the partitioner to place a value as a sharding says.

The `sharding_constraint` primitive is the identity on values; under `jit` on a mesh it
lowers to `sdy.sharding_constraint`. A bare `PartitionSpec` means a `NamedSharding` over the
mesh in context. As JAX's: linear (its transpose constrains the cotangent the same way), and
`vmap` inserts an unconstrained entry at the mapped axis.
"""

from __future__ import annotations

from typing import Any, Final

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    deflinear,
    is_undefined,
)
from lamina_core.ir import (
    UNCONSTRAINED,
    AbstractMesh,
    AbstractValue,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    get_abstract_mesh,
    get_concrete_mesh,
    impl_rules,
)
from lamina_core.trace import typeof
from lamina_core.transforms import flatten_axes
from lamina_core.tree import tree_util

sharding_constraint_p: Final = Primitive("sharding_constraint")


@abstract_eval_rules.register(sharding_constraint_p)
def _abstract_eval(x: AbstractValue, *, sharding: NamedSharding, **params: Any) -> AbstractValue:
    # The value's type takes the constraint's mesh, as JAX's.
    mesh = sharding.mesh
    if isinstance(x, ShapedArray) and not mesh.empty and x.mesh != mesh.abstract_mesh:
        return x.update(mesh=mesh.abstract_mesh)
    return x


@impl_rules.register(sharding_constraint_p)
def _impl(x: Any, **params: Any) -> Any:
    return x  # one device, or the NumPy reference: placement does not change values


def _transpose(ct: Any, x: Any, **params: Any) -> list[Any]:
    assert is_undefined(x)
    if type(ct) is Zero:
        return [ct]
    return [sharding_constraint_p.bind(ct, **params)]


deflinear(sharding_constraint_p, _transpose)


def _batch(axis_data: AxisData, vals: Any, dims: Any, **params: Any) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    if d is None:
        return sharding_constraint_p.bind(x, **params), None
    sharding: NamedSharding = params["sharding"]
    parts = list(sharding.spec.partitions)
    ndim = len(typeof(x).shape)  # type: ignore[attr-defined]
    parts += [None] * (ndim - 1 - len(parts))
    parts.insert(d, UNCONSTRAINED)
    new = NamedSharding(
        sharding.mesh, sharding.spec.update(partitions=parts), memory_kind=sharding.memory_kind
    )
    dims_free = frozenset(i + 1 if i >= d else i for i in params["unconstrained_dims"]) | {d}
    return (
        sharding_constraint_p.bind(x, **dict(params, sharding=new, unconstrained_dims=dims_free)),
        d,
    )


batching_rules.set(sharding_constraint_p, _batch)


def _context_mesh() -> Mesh | AbstractMesh:
    concrete = get_concrete_mesh()
    return get_abstract_mesh() if not concrete.empty else concrete


def _as_sharding(s: Any) -> NamedSharding:
    if isinstance(s, NamedSharding):
        return s
    if isinstance(s, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise RuntimeError(
                "Using PartitionSpec without a mesh is not allowed. Please pass a "
                "NamedSharding instance or use the `jax.set_mesh` context manager. Got "
                f"shardings: {s} from with_sharding_constraint"
            )
        return NamedSharding(mesh, s)
    raise ValueError(
        f"One of with_sharding_constraint arguments got sharding {s} which is not allowed. "
        "Please only pass `jax.sharding.Sharding` instances."
    )


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """`x` (a pytree of arrays), each leaf constrained to its sharding in `shardings` (a
    pytree prefix of `x`: `NamedSharding`s, or `PartitionSpec`s over the mesh in context)."""
    leaves, tree = tree_util.tree_flatten(x)
    flat = flatten_axes("with_sharding_constraint shardings", tree, shardings)
    context = _context_mesh()
    outs = []
    for leaf, s in zip(leaves, flat, strict=True):
        sharding = _as_sharding(s)
        aval = typeof(leaf)
        ndim = len(getattr(aval, "shape", ()))
        if len(sharding.spec.partitions) > ndim:
            raise ValueError(
                f"One of with_sharding_constraint arguments is incompatible with its sharding "
                f"annotation {sharding}: Sharding {sharding} is only valid for values of rank "
                f"at least {len(sharding.spec.partitions)}, but was applied to a value of rank "
                f"{ndim}"
            )
        free = frozenset(i for i, p in enumerate(sharding.spec.partitions) if p is UNCONSTRAINED)
        outs.append(
            sharding_constraint_p.bind(
                leaf,
                sharding=sharding,
                layout=None,
                context_mesh=context,
                unconstrained_dims=free,
            )
        )
    return tree_util.tree_unflatten(tree, outs)


__all__ = ["sharding_constraint_p", "with_sharding_constraint"]
