"""Sharded programs written once for both implementations, run by `test_sharded_programs.py`.

A program is a function of a `Side` (the implementation's `jax`, `jnp`, `lax`, `P`,
`NamedSharding` and `Mesh`) returning the function to run and its arguments, placed on that
side's devices. Meshes are built with `Mesh(devices, names)` (Auto axes) over the first devices
of each side, in the same order, so both sides print and place alike. Host data comes from a
seeded generator, so both sides get the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Side:
    """One implementation's namespace, as the programs use it."""

    jax: Any
    jnp: Any
    lax: Any
    P: Any
    NamedSharding: Any
    Mesh: Any

    def mesh(self, shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
        devices = self.jax.devices()[: math.prod(shape)]
        return self.Mesh(np.array(devices).reshape(shape), names)

    def put(self, host: Any, mesh: Any, *spec: Any) -> Any:
        return self.jax.device_put(host, self.NamedSharding(mesh, self.P(*spec)))


Built = tuple[Callable[..., Any], tuple[Any, ...]]
Program = Callable[[Side], Built]


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- data parallelism ---------------------------------------------------------------------


def _mlp(s: Side) -> tuple[Callable[..., Any], Any, Any, Any]:
    """`(loss, params, x, y)`: a 2-layer MLP on a batch of 16 split over 'data' (8 devices)."""
    mesh = s.mesh((8,), ("data",))
    params = [(data(4, 8, seed=1), data(8, seed=2)), (data(8, 2, seed=3), data(2, seed=4))]
    params = s.jax.device_put(params, s.NamedSharding(mesh, s.P()))
    x, y = s.put(data(16, 4, seed=5), mesh, "data"), s.put(data(16, 2, seed=6), mesh, "data")

    def loss(params: Any, x: Any, y: Any) -> Any:
        (w1, b1), (w2, b2) = params
        h = s.jnp.tanh(x @ w1 + b1)
        return s.jnp.mean((h @ w2 + b2 - y) ** 2)

    return loss, params, x, y


def dp_mlp_step(s: Side) -> Built:
    """Data-parallel SGD step: grad over a batch split over 'data', parameters replicated."""
    loss, params, x, y = _mlp(s)

    def step(params: Any, x: Any, y: Any) -> Any:
        grads = s.jax.grad(loss)(params, x, y)
        return s.jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    return s.jax.jit(step), (params, x, y)


def dp_mlp_value_and_grad(s: Side) -> Built:
    """`value_and_grad` of the MLP loss over the split batch, under jit."""
    loss, params, x, y = _mlp(s)
    return s.jax.jit(s.jax.value_and_grad(loss)), (params, x, y)


def dp_softmax_xent(s: Side) -> Built:
    """Softmax cross-entropy over a batch split over 'data', with a replicated weight."""
    mesh = s.mesh((8,), ("data",))
    x = s.put(data(16, 5), mesh, "data")
    w = s.put(data(5, 3, seed=1), mesh)
    labels = s.put(np.arange(16, dtype=np.int32) % 3, mesh, "data")

    def xent(w: Any, x: Any, labels: Any) -> Any:
        logits = x @ w
        logp = logits - s.jax.nn.logsumexp(logits, axis=-1, keepdims=True)
        return -s.jnp.mean(s.jnp.sum(logp * s.jax.nn.one_hot(labels, 3), axis=-1))

    return s.jax.jit(xent), (w, x, labels)


def shard_map_dp_grads(s: Side) -> Built:
    """Per-device gradients in shard_map, averaged with pmean, then an SGD update."""
    loss, params, x, y = _mlp(s)
    mesh = s.mesh((8,), ("data",))

    def local(params: Any, x: Any, y: Any) -> Any:
        grads = s.lax.pmean(s.jax.grad(loss)(params, x, y), "data")
        return s.jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    specs = (s.P(), s.P("data"), s.P("data"))
    f = s.jax.shard_map(local, mesh=mesh, in_specs=specs, out_specs=s.P(), check_vma=False)
    return s.jax.jit(f), (params, x, y)


# ---- tensor parallelism -------------------------------------------------------------------


def _tp_data(s: Side, mesh: Any) -> tuple[Any, Any, Any]:
    x = s.put(data(4, 6), mesh)
    w1 = s.put(data(6, 16, seed=1), mesh, None, "model")  # column-parallel
    w2 = s.put(data(16, 5, seed=2), mesh, "model", None)  # row-parallel
    return x, w1, w2


def tp_matmul_shard_map(s: Side) -> Built:
    """Column- then row-parallel matmul in shard_map; the partial products psum'ed."""
    mesh = s.mesh((4,), ("model",))

    def mlp(x: Any, w1: Any, w2: Any) -> Any:
        h = s.jax.nn.relu(x @ w1)
        return s.lax.psum(h @ w2, "model")

    specs = (s.P(), s.P(None, "model"), s.P("model", None))
    f = s.jax.shard_map(mlp, mesh=mesh, in_specs=specs, out_specs=s.P(), check_vma=False)
    return s.jax.jit(f), _tp_data(s, mesh)


def tp_matmul_jit(s: Side) -> Built:
    """The same column/row-parallel MLP under jit: the partitioner inserts the all-reduce."""
    mesh = s.mesh((4,), ("model",))
    return s.jax.jit(lambda x, w1, w2: s.jax.nn.relu(x @ w1) @ w2), _tp_data(s, mesh)


def tp_2d_mesh_jit(s: Side) -> Built:
    """2-D mesh ('data', 'model'): batch over 'data', weight columns over 'model'."""
    mesh = s.mesh((2, 4), ("data", "model"))
    x = s.put(data(8, 6), mesh, "data", None)
    w = s.put(data(6, 8, seed=1), mesh, None, "model")
    return s.jax.jit(lambda x, w: s.jnp.tanh(x @ w)), (x, w)


def tp_2d_mesh_shard_map(s: Side) -> Built:
    """2-D mesh in shard_map: psum over 'model' of row-parallel products, pmean over 'data'."""
    mesh = s.mesh((2, 4), ("data", "model"))
    x = s.put(data(8, 16), mesh, "data", "model")
    w = s.put(data(16, 3, seed=1), mesh, "model", None)

    def body(x: Any, w: Any) -> Any:
        y = s.lax.psum(x @ w, "model")
        return y, s.lax.pmean(s.jnp.sum(y, axis=0), "data")

    f = s.jax.shard_map(
        body,
        mesh=mesh,
        in_specs=(s.P("data", "model"), s.P("model", None)),
        out_specs=(s.P("data", None), s.P()),
        check_vma=False,
    )
    return s.jax.jit(f), (x, w)


# ---- collectives --------------------------------------------------------------------------


def ring_allreduce(s: Side) -> Built:
    """A ring all-reduce by hand (n - 1 ppermute steps), returned beside psum's."""
    n = 8
    mesh = s.mesh((n,), ("i",))
    ring = [(j, (j + 1) % n) for j in range(n)]

    def body(x: Any) -> Any:
        total, piece = x, x
        for _ in range(n - 1):
            piece = s.lax.ppermute(piece, "i", ring)
            total = total + piece
        return total, s.lax.psum(x, "i")

    f = s.jax.shard_map(
        body, mesh=mesh, in_specs=s.P("i"), out_specs=(s.P("i"), s.P("i")), check_vma=False
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def ppermute_shift(s: Side) -> Built:
    """A partial permutation: device j sends to j + 2, the first two receive zeros."""
    mesh = s.mesh((8,), ("i",))
    perm = [(j, j + 2) for j in range(6)]
    f = s.jax.shard_map(
        lambda x: s.lax.ppermute(x, "i", perm),
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P("i"),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(16, 2), mesh, "i"),)


def all_to_all_transpose(s: Side) -> Built:
    """A distributed transpose: rows split over 'i' become columns split over 'i'."""
    mesh = s.mesh((4,), ("i",))

    def body(block: Any) -> Any:
        return s.lax.all_to_all(block, "i", split_axis=1, concat_axis=0, tiled=True)

    f = s.jax.shard_map(
        body, mesh=mesh, in_specs=s.P("i", None), out_specs=s.P(None, "i"), check_vma=False
    )
    return s.jax.jit(f), (s.put(data(8, 8), mesh, "i", None),)


def all_gather_tiled(s: Side) -> Built:
    """all_gather (tiled) of row blocks: every device holds the whole array."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda b: s.lax.all_gather(b, "i", tiled=True) * 2.0,
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P(),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def all_gather_stacked(s: Side) -> Built:
    """all_gather on a new axis 1, the per-device results kept split."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda b: s.lax.all_gather(b, "i", axis=1),
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P("i"),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def psum_scatter_rows(s: Side) -> Built:
    """psum_scatter (tiled): each device keeps its slice of the sum."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda b: s.lax.psum_scatter(b, "i", tiled=True),
        mesh=mesh,
        in_specs=s.P(None),
        out_specs=s.P("i"),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh),)


def axis_index_offsets(s: Side) -> Built:
    """Each device adds its position on 'i' to its block."""
    mesh = s.mesh((8,), ("i",))

    def body(b: Any) -> Any:
        return b + s.lax.axis_index("i").astype(s.jnp.float32)

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(8, 2), mesh, "i"),)


def pmax_normalize(s: Side) -> Built:
    """Blocks divided by the global maximum of their absolute values (pmax)."""
    mesh = s.mesh((8,), ("i",))

    def body(b: Any) -> Any:
        return b / s.lax.pmax(s.jnp.max(s.jnp.abs(b)), "i")

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(16, 3), mesh, "i"),)


def psum_2d_both_axes(s: Side) -> Built:
    """psum over both axes of a 2-D mesh at once, and over one of them."""
    mesh = s.mesh((2, 4), ("x", "y"))

    def body(b: Any) -> Any:
        return s.lax.psum(b, ("x", "y")), s.lax.psum(b, "y")

    f = s.jax.shard_map(
        body,
        mesh=mesh,
        in_specs=s.P("x", "y"),
        out_specs=(s.P(), s.P("x")),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(4, 8), mesh, "x", "y"),)


# ---- pmap ---------------------------------------------------------------------------------


def pmap_psum_in_axes_none(s: Side) -> Built:
    """pmap with psum, a broadcast (in_axes None) argument."""
    f = s.jax.pmap(
        lambda x, w: x * w / s.lax.psum(s.jnp.sum(x), "d"), axis_name="d", in_axes=(0, None)
    )
    return f, (data(4, 3), data(3, seed=1))


def pmap_out_axes_none(s: Side) -> Built:
    """pmap with out_axes: a replicated psum result (None) beside a mapped one."""
    f = s.jax.pmap(
        lambda x: (s.lax.psum(x, "d"), x - s.lax.pmean(x, "d")), axis_name="d", out_axes=(None, 0)
    )
    return f, (data(4, 2),)


def pmap_of_grad(s: Side) -> Built:
    """pmap of a per-device gradient, averaged with pmean."""

    def local(w: Any, x: Any) -> Any:
        g = s.jax.grad(lambda w: s.jnp.sum(s.jnp.sin(x * w)))(w)
        return s.lax.pmean(g, "d")

    return s.jax.pmap(local, axis_name="d", in_axes=(None, 0)), (data(3), data(4, 3, seed=1))


# ---- jit and shard_map together -----------------------------------------------------------


def nested_jit_in_shard_map(s: Side) -> Built:
    """A jitted function called inside a shard_map body, then a psum."""
    mesh = s.mesh((4,), ("i",))
    inner = s.jax.jit(lambda b: s.jnp.cos(b) * 2.0)
    f = s.jax.shard_map(
        lambda b: s.lax.psum(inner(b), "i"),
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P(),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def shard_map_in_jit_with_more(s: Side) -> Built:
    """shard_map as one step of a jitted function, with global ops before and after it."""
    mesh = s.mesh((4,), ("i",))
    smap = s.jax.shard_map(
        lambda b: b - s.lax.pmean(s.jnp.mean(b, axis=0), "i"),
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P("i"),
        check_vma=False,
    )
    return s.jax.jit(lambda x: s.jnp.sum(smap(x * 3.0) ** 2)), (s.put(data(8, 3), mesh, "i"),)


def grad_through_shard_map(s: Side) -> Built:
    """grad of a loss computed in shard_map (check_vma=False), psum of per-device losses."""
    mesh = s.mesh((4,), ("i",))

    def local_loss(w: Any, x: Any) -> Any:
        return s.lax.psum(s.jnp.sum(s.jnp.tanh(x @ w) ** 2), "i")

    smap = s.jax.shard_map(
        local_loss, mesh=mesh, in_specs=(s.P(), s.P("i")), out_specs=s.P(), check_vma=False
    )
    w, x = s.put(data(3, 2), mesh), s.put(data(8, 3, seed=1), mesh, "i")
    return s.jax.jit(s.jax.grad(smap)), (w, x)


def shard_map_fori_loop(s: Side) -> Built:
    """A fori_loop in shard_map whose body all-reduces: five rounds of averaging."""
    mesh = s.mesh((4,), ("i",))

    def body(b: Any) -> Any:
        return s.lax.fori_loop(0, 5, lambda _, v: 0.5 * (v + s.lax.pmean(v, "i")), b)

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def vmap_in_shard_map(s: Side) -> Built:
    """vmap inside a shard_map body, then a psum over the mesh axis."""
    mesh = s.mesh((4,), ("i",))

    def body(b: Any) -> Any:
        return s.lax.psum(s.jax.vmap(lambda r: s.jnp.dot(r, r))(b), "i")

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P(None, "i"), out_specs=s.P(), check_vma=False)
    return s.jax.jit(f), (s.put(data(3, 8), mesh, None, "i"),)


# ---- jit placement ------------------------------------------------------------------------


def with_sharding_constraint_in_jit(s: Side) -> Built:
    """A replicated input, an intermediate constrained to be split over 'i'."""
    mesh = s.mesh((8,), ("i",))
    split = s.NamedSharding(mesh, s.P("i"))

    def f(x: Any) -> Any:
        y = s.lax.with_sharding_constraint(s.jnp.sin(x), split)
        return y * 2.0

    return s.jax.jit(f), (s.put(data(8, 4), mesh),)


def jit_in_out_shardings(s: Side) -> Built:
    """jit with in_shardings and out_shardings: host input split, output over columns."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.jit(
        lambda x: x @ x.T,
        in_shardings=s.NamedSharding(mesh, s.P("i")),
        out_shardings=s.NamedSharding(mesh, s.P(None, "i")),
    )
    return f, (data(8, 4),)


def sharded_reductions(s: Side) -> Built:
    """Reductions over and across the split axis of a 2-D mesh, argmax among them."""
    mesh = s.mesh((2, 4), ("x", "y"))
    x = s.put(data(4, 8), mesh, "x", "y")
    return s.jax.jit(lambda x: (x.sum(0), x.max(1), s.jnp.argmax(x, axis=1))), (x,)


def sharded_scan_cumsum(s: Side) -> Built:
    """A scan carried along a replicated axis of a batch split over 'data'."""
    mesh = s.mesh((8,), ("data",))

    def f(xs: Any) -> Any:
        return s.lax.scan(lambda c, x: (c + x, c * x), s.jnp.zeros(8), xs)

    return s.jax.jit(f), (s.put(data(5, 8), mesh, None, "data"),)


def check_vma_true_psum(s: Side) -> Built:
    """shard_map with check_vma=True (the default): a psum of split blocks."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda b: s.lax.psum(b * 2.0, "i"), mesh=mesh, in_specs=s.P("i"), out_specs=s.P()
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def partial_manual_psum(s: Side) -> Built:
    """shard_map manual over one axis of a 2-D mesh (the other left Auto): a psum over it.
    (No constants in the body: JAX constrains their broadcasts over the Auto axes, from the
    sharding in its types, which Lamina's do not carry yet.)"""
    mesh = s.mesh((2, 4), ("i", "j"))
    f = s.jax.shard_map(
        lambda b: s.lax.psum(b, "i"),
        mesh=mesh,
        in_specs=s.P("i"),
        out_specs=s.P(),
        axis_names={"i"},
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(8, 4), mesh, "i"),)


def make_mesh_explicit(s: Side) -> Built:
    """A jitted function over an array split on a `make_mesh` mesh (Explicit axes in JAX)."""
    mesh = s.jax.make_mesh((8,), ("data",))
    x = s.jax.device_put(data(8, 3), s.NamedSharding(mesh, s.P("data")))
    return s.jax.jit(lambda x: s.jnp.sin(x) * 2.0), (x,)


# ---- more collectives and placements -----------------------------------------------------


def pmean_center(s: Side) -> Built:
    """Blocks centred on the global mean (pmean of the per-device means)."""
    mesh = s.mesh((8,), ("i",))

    def body(b: Any) -> Any:
        return b - s.lax.pmean(s.jnp.mean(b, axis=0), "i")

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(16, 3), mesh, "i"),)


def pmin_floor(s: Side) -> Built:
    """Each block clipped below at the global minimum of the block maxima (pmin)."""
    mesh = s.mesh((4,), ("i",))

    def body(b: Any) -> Any:
        return s.jnp.maximum(b, s.lax.pmin(s.jnp.max(b), "i"))

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(8, 5), mesh, "i"),)


def psum_scatter_columns(s: Side) -> Built:
    """psum_scatter over axis 1 (tiled), over one axis of a 2-D mesh."""
    mesh = s.mesh((2, 4), ("x", "y"))
    f = s.jax.shard_map(
        lambda b: s.lax.psum_scatter(b, "y", scatter_dimension=1, tiled=True),
        mesh=mesh,
        in_specs=s.P("x"),
        out_specs=s.P("x", "y"),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(4, 8), mesh, "x"),)


def all_gather_columns(s: Side) -> Built:
    """all_gather (tiled) along axis 1 of column blocks, then a row sum."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda b: s.jnp.sum(s.lax.all_gather(b, "i", axis=1, tiled=True), axis=1),
        mesh=mesh,
        in_specs=s.P(None, "i"),
        out_specs=s.P(),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(3, 8), mesh, None, "i"),)


def ppermute_2d_rows(s: Side) -> Built:
    """A cyclic shift along one axis of a 2-D mesh: each row of devices rotates its blocks."""
    mesh = s.mesh((2, 4), ("x", "y"))
    perm = [(j, (j + 1) % 4) for j in range(4)]
    f = s.jax.shard_map(
        lambda b: s.lax.ppermute(b, "y", perm),
        mesh=mesh,
        in_specs=s.P("x", "y"),
        out_specs=s.P("x", "y"),
        check_vma=False,
    )
    return s.jax.jit(f), (s.put(data(4, 8), mesh, "x", "y"),)


def shard_map_cond_by_index(s: Side) -> Built:
    """A `cond` on the device's position: even devices double, odd ones negate."""
    mesh = s.mesh((4,), ("i",))

    def body(b: Any) -> Any:
        even = s.lax.axis_index("i") % 2 == 0
        return s.lax.cond(even, lambda v: v * 2.0, lambda v: -v, b)

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"), check_vma=False)
    return s.jax.jit(f), (s.put(data(8, 2), mesh, "i"),)


def shard_map_two_outputs(s: Side) -> Built:
    """Two results with different specs: the blocks themselves and their global sum."""
    mesh = s.mesh((4,), ("i",))

    def body(b: Any) -> Any:
        return b * 3.0, s.lax.psum(s.jnp.sum(b, axis=0), "i")

    f = s.jax.shard_map(
        body, mesh=mesh, in_specs=s.P("i"), out_specs=(s.P("i"), s.P()), check_vma=False
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def jit_2d_elementwise_chain(s: Side) -> Built:
    """Elementwise ops and a transpose on an array split over both axes of a 2-D mesh."""
    mesh = s.mesh((2, 4), ("x", "y"))
    f = s.jax.jit(lambda a: (s.jnp.tanh(a) * 2.0 + 1.0).T)
    return f, (s.put(data(8, 8), mesh, "x", "y"),)


def jit_row_split_affine(s: Side) -> Built:
    """x @ w + b under jit with x's rows split over 'i' and w, b replicated."""
    mesh = s.mesh((8,), ("i",))
    w, b = data(4, 6, seed=1), data(6, seed=2)
    f = s.jax.jit(lambda x, w, b: s.jnp.tanh(x @ w + b))
    return f, (s.put(data(16, 4), mesh, "i"), s.put(w, mesh), s.put(b, mesh))


# ---- check_vma=True: varying manual axes in the body's types -----------------------------------


def vma_replicated_bias(s: Side) -> Built:
    """A split block plus a replicated bias (check_vma): the bias and the literal are cast to
    varying (`pvary`) before they meet the block."""
    mesh = s.mesh((4,), ("i",))
    f = s.jax.shard_map(
        lambda a, b: a * 2.0 + b, mesh=mesh, in_specs=(s.P("i"), s.P()), out_specs=s.P("i")
    )
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"), s.put(data(3, seed=1), mesh))


def vma_pmean_2d(s: Side) -> Built:
    """pmean over one axis of a 2-D mesh (check_vma): types vary over both axes, then one."""
    mesh = s.mesh((2, 4), ("i", "j"))

    def body(a: Any, b: Any) -> Any:
        return s.lax.pmean(s.jnp.tanh(a) * b, "j")

    f = s.jax.shard_map(
        body, mesh=mesh, in_specs=(s.P("i", "j"), s.P(None, "j")), out_specs=s.P("i")
    )
    return s.jax.jit(f), (s.put(data(8, 8), mesh, "i", "j"), s.put(data(1, 8, seed=1), mesh))


def vma_collectives(s: Side) -> Built:
    """axis_index, ppermute and all_gather in a checked body; a replicated operand is cast to
    varying before it is gathered."""
    mesh = s.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]

    def body(a: Any, b: Any) -> Any:
        shifted = s.lax.ppermute(a, "i", perm) * s.lax.axis_index("i")
        return s.lax.all_gather(shifted, "i", tiled=True), s.lax.all_gather(b, "i")

    f = s.jax.shard_map(body, mesh=mesh, in_specs=(s.P("i"), s.P()), out_specs=(s.P("i"), s.P("i")))
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"), s.put(data(2, seed=1), mesh))


def vma_pmax_psum_scatter(s: Side) -> Built:
    """pmax and psum_scatter of a replicated value (check_vma): both cast it to varying first;
    the psum of a constant is the axis size."""
    mesh = s.mesh((4,), ("i",))

    def body(a: Any) -> Any:
        top = s.lax.pmax(a, "i") / s.lax.psum(1.0, "i")
        return top, s.lax.psum_scatter(a, "i", tiled=True)

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P(), out_specs=(s.P(), s.P("i")))
    return s.jax.jit(f), (s.put(data(8, 3), mesh),)


def vma_fori_loop(s: Side) -> Built:
    """A fori_loop whose carry starts as zeros_like of a split block (check_vma): the zeros are
    cast to varying so the carry keeps its type."""
    mesh = s.mesh((4,), ("i",))

    def body(a: Any) -> Any:
        return s.lax.fori_loop(0, 3, lambda k, c: c * 0.5 + a, s.jnp.zeros_like(a))

    f = s.jax.shard_map(body, mesh=mesh, in_specs=s.P("i"), out_specs=s.P("i"))
    return s.jax.jit(f), (s.put(data(8, 3), mesh, "i"),)


def _vma_loss(s: Side) -> Callable[..., Any]:
    mesh = s.mesh((4,), ("i",))

    def local(w: Any, a: Any) -> Any:
        return s.lax.psum(s.jnp.sum(s.jnp.sin(a @ w) * s.jnp.cos(w[0, 0])), "i")

    f: Callable[..., Any] = s.jax.shard_map(
        local, mesh=mesh, in_specs=(s.P(), s.P("i")), out_specs=s.P()
    )
    return f


def vma_vjp_through_shard_map(s: Side) -> Built:
    """vjp of a checked shard_map with a given cotangent: residuals leave the body split over
    the axes they vary over (the invariant one replicated), pvary transposes to psum_invariant
    and psum_invariant to pvary."""
    loss = _vma_loss(s)
    mesh = s.mesh((4,), ("i",))

    def pullback(w: Any, a: Any) -> Any:
        return s.jax.vjp(lambda w: loss(w, a), w)[1](s.jnp.float32(1.5))

    w, a = s.put(data(3, 2, seed=1), mesh), s.put(data(8, 3), mesh, "i")
    return s.jax.jit(pullback), (w, a)


def vma_grad_through_shard_map(s: Side) -> Built:
    """grad of a checked shard_map under jit (its seed's `reshard` is a known difference)."""
    loss = _vma_loss(s)
    mesh = s.mesh((4,), ("i",))
    w, a = s.put(data(3, 2, seed=1), mesh), s.put(data(8, 3), mesh, "i")
    return s.jax.jit(s.jax.grad(loss)), (w, a)


def vma_jvp_through_shard_map(s: Side) -> Built:
    """jvp of a checked shard_map: tangents of replicated inputs are cast with their primals."""
    loss = _vma_loss(s)
    mesh = s.mesh((4,), ("i",))
    w, a = s.put(data(3, 2, seed=1), mesh), s.put(data(8, 3), mesh, "i")
    return s.jax.jit(lambda w, a: s.jax.jvp(loss, (w, a), (w, a))), (w, a)


PROGRAMS: dict[str, Program] = {
    p.__name__: p
    for p in (
        dp_mlp_step,
        dp_mlp_value_and_grad,
        dp_softmax_xent,
        shard_map_dp_grads,
        tp_matmul_shard_map,
        tp_matmul_jit,
        tp_2d_mesh_jit,
        tp_2d_mesh_shard_map,
        ring_allreduce,
        ppermute_shift,
        all_to_all_transpose,
        all_gather_tiled,
        all_gather_stacked,
        psum_scatter_rows,
        axis_index_offsets,
        pmax_normalize,
        psum_2d_both_axes,
        pmap_psum_in_axes_none,
        pmap_out_axes_none,
        pmap_of_grad,
        nested_jit_in_shard_map,
        shard_map_in_jit_with_more,
        grad_through_shard_map,
        shard_map_fori_loop,
        vmap_in_shard_map,
        with_sharding_constraint_in_jit,
        jit_in_out_shardings,
        sharded_reductions,
        sharded_scan_cumsum,
        check_vma_true_psum,
        partial_manual_psum,
        make_mesh_explicit,
        pmean_center,
        pmin_floor,
        psum_scatter_columns,
        all_gather_columns,
        ppermute_2d_rows,
        shard_map_cond_by_index,
        shard_map_two_outputs,
        jit_2d_elementwise_chain,
        jit_row_split_affine,
        vma_replicated_bias,
        vma_pmean_2d,
        vma_collectives,
        vma_pmax_psum_scatter,
        vma_fori_loop,
        vma_vjp_through_shard_map,
        vma_grad_through_shard_map,
        vma_jvp_through_shard_map,
    )
}
