"""Hi primitives: user operations whose types may mention hi types.

A `VJPHiPrimitive` subclass declares its input and output types and its implementation in
arrays (`expand`), and optionally its derivative (`vjp_fwd`/`vjp_bwd_retval`, `jvp`,
`lin`/`linearized`), batching (`batch`) and dead-code hooks. Calling an instance binds
`call_hi_primitive` with the instance as its `_prim` parameter, which prints as JAX prints it
(`call_hi_primitive[_prim=Quantize[{}]]`). This module registers the primitive's rule in each
of core's tables: abstract evaluation, evaluation on values (eager: `expand`), jvp,
linearization (reverse mode goes through `vjp_fwd` and a linear `call_hi_primitive_linearized`
whose transpose is `vjp_bwd`), batching and DCE.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar, Final

from lamina_core import tree_util
from lamina_core.interpreters import (
    AxisData,
    Zero,
    add_tangents,
    batching_rules,
    dce_rules,
    instantiate_zeros,
    is_undefined,
    jvp_rules,
    linearization_rules,
    linearizing_for_vjp,
    transpose_rules,
)
from lamina_core.ir import (
    AbstractValue,
    Effects,
    JaxprEqn,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    evaluated_on_values,
    qdd_primitives,
    types_match,
    value_impl_rules,
)
from lamina_core.trace import typeof


def _flatten_as(tree: Any, value: Any, what: str) -> list[Any]:
    """The leaves of `value`, which must have the structure `tree` (of the declared types)."""
    try:
        leaves: list[Any] = tree.flatten_up_to(value)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{what} does not match the declared structure {tree}: {e}") from None
    return leaves


hi_primitive_classes: dict[str, type[VJPHiPrimitive]] = {}
"""The subclasses of `VJPHiPrimitive` defined so far, by class name."""


class VJPHiPrimitive:
    """Base class of hi primitives with a reverse-mode rule.

    A subclass's `__init__` sets `self.in_avals` (a tuple, a pytree of types), `self.out_aval`
    (a pytree of types) and `self.params` (a dict of hashables, which become attributes), then
    calls `super().__init__()`. Two instances are equal when their classes, params and effects
    are, so equal programs trace to equal equations.
    """

    in_avals: tuple[Any, ...]
    out_aval: Any
    params: dict[str, Hashable]
    effects: ClassVar[Effects] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # By name, so printed jaxprs read back (`_jaxpr_io`); a later class of a name wins.
        hi_primitive_classes[cls.__name__] = cls

    def __init__(self) -> None:
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")
        cls = type(self)
        if (
            cls.vjp_bwd is not VJPHiPrimitive.vjp_bwd
            and cls.vjp_bwd_retval is not VJPHiPrimitive.vjp_bwd_retval
        ):
            raise AttributeError(
                f"subclass {cls} should not override both `vjp_bwd` and `vjp_bwd_retval`"
            )
        self.in_avals_flat, self.in_tree = tree_util.tree_flatten(tuple(self.in_avals))
        self.out_avals_flat, self.out_tree = tree_util.tree_flatten(self.out_aval)
        for aval in (*self.in_avals_flat, *self.out_avals_flat):
            if not isinstance(aval, AbstractValue):
                raise TypeError(
                    f"{cls.__name__}: in_avals and out_aval must hold types (e.g. ShapedArray "
                    f"or a HiType), got {aval!r}"
                )
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    # -- the implementation, in array operations ---------------------------------------------

    def expand(self, *args: Any) -> Any:
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    # -- reverse mode ---------------------------------------------------------------------

    def vjp_fwd(self, nzs_in: Any, /, *args: Any) -> Any:
        """`(out, residuals[, nonzero_outs])`: the primal result and what `vjp_bwd` needs."""
        raise NotImplementedError(
            f"for grad support, subclass {type(self)} must implement `vjp_fwd`"
        )

    def vjp_bwd(self, res: Any, outgrad: Any, /, *arg_accums: Any) -> None:
        """Accumulate each input's cotangent into its accumulator (`accum.accum(ct)`)."""
        grads = self.vjp_bwd_retval(res, outgrad)
        tree_util.tree_map(
            lambda acc, g: acc.accum(g) if isinstance(acc, GradAccum) else None,
            tuple(arg_accums),
            tuple(grads),
            is_leaf=lambda x: x is None or isinstance(x, GradAccum),
        )

    def vjp_bwd_retval(self, res: Any, outgrad: Any, /) -> Any:
        """The inputs' cotangents as a tuple (`None` for a zero)."""
        raise NotImplementedError(
            f"for grad support, subclass {type(self)} must implement `vjp_bwd` or `vjp_bwd_retval`"
        )

    # -- forward mode (optional) --------------------------------------------------------------

    def jvp(self, primals: Any, tangents: Any) -> Any:
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must implement `jvp`")

    def lin(self, nzs_in: Any, *primals: Any) -> Any:
        raise NotImplementedError(
            f"for linearize support, subclass {type(self)} must implement `lin` and `linearized`"
        )

    def linearized(self, residuals: Any, *tangents: Any) -> Any:
        raise NotImplementedError(
            f"for linearize support, subclass {type(self)} must implement `lin` and `linearized`"
        )

    # -- transposition (optional, for primitives linear in some inputs) --------------------

    def transpose(self, out_ct: Any, /, *maybe_accums: Any) -> None:
        """Accumulate the cotangent of each linear input into its `GradAccum` (the other
        inputs arrive as values)."""
        raise NotImplementedError(
            f"for transpose support, subclass {type(self)} must implement `transpose`"
        )

    # -- vmap -----------------------------------------------------------------------------

    def batch(self, axis_data: AxisData, args: Any, dims: Any) -> tuple[Any, Any]:
        """`(out, out_dim)` for batched `args` mapped as `dims` say (None: unmapped, an int: an
        array's mapped axis, a `MappingSpec`: a hi value's). By default, as JAX's: this
        primitive wrapped in a `VmapOf`, its result mapped where `batch_dim_rule` says."""
        # `VmapOf` is a subclass of this class: its module imports this one.
        from lamina_hijax._vmap_of import default_batch

        return default_batch(self, axis_data, args, dims)

    def batch_dim_rule(self, axis_data: AxisData, dims: Any, /) -> Any:
        """Where the result's batch axis goes for inputs batched as `dims` say."""
        raise NotImplementedError(
            f"for vmap support, subclass {type(self)} must implement `batch` or `batch_dim_rule`"
        )

    # -- dead code ------------------------------------------------------------------------

    def dce(self, used_outs: Any) -> tuple[Any, Any, VJPHiPrimitive | None]:
        """`(used_ins, produced_outs, new_prim or None to drop the equation)`."""
        if not any(tree_util.tree_leaves(used_outs)):
            return False, False, None
        return True, True, self

    def check(self, *arg_tys: Any) -> None:
        """Optional validation of the input types, at construction."""

    # -- binding ----------------------------------------------------------------------------

    def __call__(self, *args: Any) -> Any:
        args_flat = _flatten_as(self.in_tree, args, f"the arguments of {self!r}")
        outs = call_hi_primitive_p.bind(*args_flat, _prim=self)
        return tree_util.tree_unflatten(self.out_tree, outs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}[{self.params}]"

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.params == other.params
            and self.effects == other.effects
        )


class GradAccum:
    """Where `vjp_bwd` puts one input's cotangent (`accum(ct)` adds to it)."""

    __slots__ = ("aval", "value")

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval
        self.value: Any = None

    def accum(self, ct: Any) -> None:
        if ct is None or type(ct) is Zero:
            return
        self.value = ct if self.value is None else add_tangents(self.value, ct)


class NullAccum(GradAccum):
    """The accumulator of an input whose cotangent nobody needs: what it gets is dropped."""

    __slots__ = ()

    def accum(self, ct: Any) -> None:
        return None


def _missing_method(name: str, feature: str) -> Any:
    def method(self: HiPrimitive, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"for {feature}, hi primitive {self.name} must implement `{name}`"
        )

    return method


class HiPrimitive(Primitive):
    """Base class of "old-style" hi primitives: a primitive of its own (printed by its name),
    defined by methods a subclass overrides — `abstract_eval(*avals, **params)` returning
    `(out_aval(s), effects)`, `to_lojax(*args, **params)` (its meaning in array operations,
    on hi values), `jvp(primals, tangents, **params)`, and `transpose(cts, *args, **params)`
    where it is linear, `batch(axis_data, args, dims, **params)` for vmap. Instantiating one
    registers those methods in core's rule tables."""

    def __init__(self, name: str, *, multiple_results: bool | None = None) -> None:
        if multiple_results is None:  # JAX's subclasses say it as a class attribute
            declared = _class_attribute(type(self), "multiple_results")
            multiple_results = bool(declared)
        super().__init__(name, multiple_results=multiple_results)
        qdd_primitives.add(self)
        abstract_eval_rules.set(self, lambda *avals, **p: self.abstract_eval(*avals, **p)[0])
        effects_rules.set(self, lambda *avals, **p: frozenset(self.abstract_eval(*avals, **p)[1]))
        value_impl_rules.set(self, self._expand)
        evaluated_on_values.add(self)
        jvp_rules.set(self, lambda primals, tangents, **p: self.jvp(primals, tangents, **p))
        transpose_rules.set(self, lambda cts, *args, **p: self.transpose(cts, *args, **p))
        if type(self).batch is not HiPrimitive.batch:
            batching_rules.set(self, lambda ad, vals, dims, **p: self.batch(ad, vals, dims, **p))
        hi_primitives.add(self)

    def _expand(self, *args: Any, **params: Any) -> Any:
        out = self.to_lojax(*args, **params)
        return list(out) if self.multiple_results else out

    # Overridden by subclasses with their own signatures (typed loosely here for that).
    abstract_eval: Callable[..., tuple[Any, Any]] = _missing_method("abstract_eval", "tracing")
    to_lojax: Callable[..., Any] = _missing_method("to_lojax", "evaluation and lowering")
    jvp: Callable[..., Any] = _missing_method("jvp", "jvp support")
    transpose: Callable[..., Any] = _missing_method("transpose", "transpose support")
    batch: Callable[..., Any] = _missing_method("batch", "vmap support")


def _class_attribute(cls: type, name: str) -> Any:
    """`name` as a class of `cls`'s hierarchy below `Primitive` sets it (not the slot)."""
    for klass in cls.__mro__:
        if klass is HiPrimitive:
            return None
        if name in vars(klass):
            return vars(klass)[name]
    return None


call_hi_primitive_p: Final = Primitive("call_hi_primitive", multiple_results=True)
hi_primitives: set[Primitive] = {call_hi_primitive_p}
"""The primitives the to-lojax pass expands (each means its `expand`/`to_lojax`)."""
call_hi_primitive_linearized_p: Final = Primitive(
    "call_hi_primitive_linearized", multiple_results=True
)


@abstract_eval_rules.register(call_hi_primitive_p)
def _abstract_eval(*avals: AbstractValue, _prim: VJPHiPrimitive) -> list[AbstractValue]:
    expected = _prim.in_avals_flat
    if len(avals) != len(expected) or not all(map(types_match, avals, expected)):
        got = ", ".join(a.str_short(True) for a in avals)
        want = ", ".join(a.str_short(True) for a in expected)
        raise TypeError(f"input type mismatch for {_prim!r}: it takes ({want}), got ({got})")
    return list(_prim.out_avals_flat)


@effects_rules.register(call_hi_primitive_p)
def _effects(*avals: AbstractValue, _prim: VJPHiPrimitive) -> Effects:
    return _prim.effects


@value_impl_rules.register(call_hi_primitive_p)
def _expand(*args: Any, _prim: VJPHiPrimitive) -> list[Any]:
    out = _prim.expand(*tree_util.tree_unflatten(_prim.in_tree, args))
    return _flatten_as(_prim.out_tree, out, f"the result of {type(_prim).__name__}.expand")


evaluated_on_values.add(call_hi_primitive_p)


def _jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, _prim: VJPHiPrimitive
) -> tuple[list[Any], list[Any]]:
    p = tree_util.tree_unflatten(_prim.in_tree, list(primals))
    t = tree_util.tree_unflatten(_prim.in_tree, [instantiate_zeros(x) for x in tangents])
    out_p, out_t = _prim.jvp(p, t)
    return (
        _flatten_as(_prim.out_tree, out_p, f"the primal output of {type(_prim).__name__}.jvp"),
        _flatten_as(_prim.out_tree, out_t, f"the tangent output of {type(_prim).__name__}.jvp"),
    )


jvp_rules.set(call_hi_primitive_p, _jvp)


def _linearize(nonzeros: Sequence[bool], *primals: Any, _prim: VJPHiPrimitive) -> Any:
    args = tree_util.tree_unflatten(_prim.in_tree, list(primals))
    nzs_in = tree_util.tree_unflatten(_prim.in_tree, list(nonzeros))
    for_vjp = linearizing_for_vjp()
    out, residuals, *maybe_nzs = (
        _prim.vjp_fwd(nzs_in, *args) if for_vjp else _prim.lin(nzs_in, *args)
    )
    out_flat = _flatten_as(_prim.out_tree, out, f"the primal output of {type(_prim).__name__}")
    nzs_out = maybe_nzs[0] if maybe_nzs else True
    nzs_out_flat = [bool(n) for n in tree_util.tree_leaves(tree_util.tree_broadcast(nzs_out, out))]
    res_flat, res_tree = tree_util.tree_flatten(residuals)
    nz_in = tuple(bool(n) for n in nonzeros)

    def linearized(res: Sequence[Any], *tangents: Any) -> list[Any]:
        if for_vjp:
            nz_tangents = [t for t in tangents if type(t) is not Zero]
            outs: list[Any] = call_hi_primitive_linearized_p.bind(
                *res, *nz_tangents, _prim=_prim, residuals_tree=res_tree, nz_in_flat=nz_in
            )
        else:
            t = tree_util.tree_unflatten(_prim.in_tree, [instantiate_zeros(x) for x in tangents])
            user_res = tree_util.tree_unflatten(res_tree, list(res))
            outs = _flatten_as(
                _prim.out_tree,
                _prim.linearized(user_res, *t),
                f"the result of {type(_prim).__name__}.linearized",
            )
        return [
            o if nz else Zero(a.to_tangent_aval())
            for o, nz, a in zip(outs, nzs_out_flat, _prim.out_avals_flat, strict=True)
        ]

    return out_flat, nzs_out_flat, res_flat, linearized


linearization_rules.set(call_hi_primitive_p, _linearize)


@abstract_eval_rules.register(call_hi_primitive_linearized_p)
def _linearized_abstract_eval(
    *avals: AbstractValue, _prim: VJPHiPrimitive, residuals_tree: Any, nz_in_flat: Any
) -> list[AbstractValue]:
    return [a.to_tangent_aval() for a in _prim.out_avals_flat]


def _linearized_transpose(
    cts: Sequence[Any], *args: Any, _prim: VJPHiPrimitive, residuals_tree: Any, nz_in_flat: Any
) -> list[Any]:
    n_res = residuals_tree.num_leaves
    residuals = tree_util.tree_unflatten(residuals_tree, list(args[:n_res]))
    accums = [
        (GradAccum if nz else NullAccum)(aval.to_ct_aval())
        for aval, nz in zip(_prim.in_avals_flat, nz_in_flat, strict=True)
    ]
    ct_out = tree_util.tree_unflatten(_prim.out_tree, [instantiate_zeros(c) for c in cts])
    bwd: Any = _prim.vjp_bwd  # a user's override may return something by mistake
    if bwd(residuals, ct_out, *tree_util.tree_unflatten(_prim.in_tree, accums)) is not None:
        raise TypeError(f"{type(_prim).__name__}.vjp_bwd must return None (it accumulates)")
    results = [
        _checked_ct(_prim, i, acc)
        for i, (acc, nz) in enumerate(zip(accums, nz_in_flat, strict=True))
        if nz
    ]
    return [None] * n_res + results


def _transpose(cts: Sequence[Any], *args: Any, _prim: VJPHiPrimitive) -> list[Any]:
    """A hi primitive linear in its undefined inputs, transposed by its `transpose`: each of
    those inputs gets a `GradAccum`, the others are passed as values."""
    accums = [GradAccum(a.aval.to_ct_aval()) if is_undefined(a) else a for a in args]
    ct_out = tree_util.tree_unflatten(_prim.out_tree, list(cts))
    transpose: Any = _prim.transpose  # a user's override may return something by mistake
    if transpose(ct_out, *tree_util.tree_unflatten(_prim.in_tree, accums)) is not None:
        raise TypeError(f"{type(_prim).__name__}.transpose must return None (it accumulates)")
    return [
        _checked_ct(_prim, i, acc) if is_undefined(arg) else None
        for i, (acc, arg) in enumerate(zip(accums, args, strict=True))
    ]


transpose_rules.set(call_hi_primitive_p, _transpose)


def _checked_ct(prim: VJPHiPrimitive, i: int, acc: GradAccum) -> Any:
    if acc.value is None:
        return Zero(acc.aval)
    got = acc.value.aval if type(acc.value) is Zero else typeof(acc.value)
    if not types_match(got, acc.aval):
        raise ValueError(
            f"{type(prim).__name__}.vjp_bwd gave input {i} a cotangent of type "
            f"{got.str_short(True)}, but its cotangent type is {acc.aval.str_short(True)}"
        )
    return acc.value


transpose_rules.set(call_hi_primitive_linearized_p, _linearized_transpose)


def _linearized_not_forward(*args: Any, **params: Any) -> Any:
    raise TypeError(
        "can't apply forward-mode autodiff (jvp) or vmap to a function whose hi primitive was "
        "linearized for reverse mode (vjp_fwd); give the primitive `jvp`, or `lin` and "
        "`linearized`"
    )


batching_rules.set(call_hi_primitive_linearized_p, _linearized_not_forward)


def _batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], *, _prim: VJPHiPrimitive
) -> tuple[list[Any], list[Any]]:
    args = tree_util.tree_unflatten(_prim.in_tree, list(vals))
    in_dims = tree_util.tree_unflatten(_prim.in_tree, list(dims))
    out, out_dim = _prim.batch(axis_data, args, in_dims)
    out_flat = _flatten_as(_prim.out_tree, out, f"the result of {type(_prim).__name__}.batch")
    dims_flat: list[Any] = _prim.out_tree.flatten_up_to(out_dim)
    return out_flat, dims_flat


batching_rules.set(call_hi_primitive_p, _batch)


def _dce(used_outs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    prim: VJPHiPrimitive = eqn.params["_prim"]
    used = tree_util.tree_unflatten(prim.out_tree, used_outs)
    used_ins, produced_outs, new_prim = prim.dce(used)
    if new_prim is None:
        return [False] * len(eqn.invars), None
    used_ins_flat = _broadcast_flags(used_ins, tuple(prim.in_avals))
    produced_flat = _broadcast_flags(produced_outs, prim.out_aval)
    if new_prim is prim and all(used_ins_flat) and all(produced_flat):
        return used_ins_flat, eqn
    return used_ins_flat, eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, used_ins_flat, strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, produced_flat, strict=True) if u),
        params={"_prim": new_prim},
    )


def _broadcast_flags(flags: Any, like: Any) -> list[bool]:
    return [bool(f) for f in tree_util.tree_leaves(tree_util.tree_broadcast(flags, like))]


dce_rules.set(call_hi_primitive_p, _dce)

__all__ = [
    "GradAccum",
    "HiPrimitive",
    "NullAccum",
    "VJPHiPrimitive",
    "call_hi_primitive_linearized_p",
    "call_hi_primitive_p",
    "hi_primitives",
]
