"""A Box (holding a pytree, type-changing) and a Log (appending values) written with the
public hijax API, as JAX's own tests write them, for one API module (`jax` or `lamina`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any


def box_api(api: Any, hijax: Any, experimental: Any) -> SimpleNamespace:
    """`Box`, `new_box`, `box_get`, `box_set`, `BoxTy`, `box_effect`, `Log`, `LogTy` and
    their primitives, defined with `api` (`jax` or `lamina`)."""
    tree = api.tree_util

    @dataclass(frozen=True)
    class BoxState:  # what the box holds: its leaves' types and the tree
        leaf_avals: tuple[Any, ...]
        treedef: Any

        def to_tangent_qdd(self) -> BoxState:
            return BoxState(tuple(a.to_tangent_aval() for a in self.leaf_avals), self.treedef)

        def normalize(self) -> BoxState:
            return BoxState(tuple(a.normalize() for a in self.leaf_avals), self.treedef)

    def new_box() -> Any:
        return new_box_p.bind(treedef=tree.tree_structure(None))

    def box_get(box: Any) -> Any:
        state = experimental.cur_qdd(box)
        leaves = box_get_p.bind(box, avals=tuple(state.leaf_avals))
        return tree.tree_unflatten(state.treedef, leaves)

    def box_set(box: Any, val: Any) -> None:
        leaves, treedef = tree.tree_flatten(val)
        box_set_p.bind(box, *leaves, treedef=treedef)

    class BoxTy(hijax.MutableHiType):  # type: ignore[misc]  # a class of `hijax`
        get = hijax.aval_method(box_get)
        set = hijax.aval_method(box_set)

        def __hash__(self) -> int:
            return hash(BoxTy)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, BoxTy)

        def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
            return "BoxTy"

        def lo_ty_qdd(self, state: BoxState) -> list[Any]:
            return [lo for a in state.leaf_avals for lo in _lo_ty(a)]

        def new_from_loval(self, state: BoxState, *lo_vals: Any) -> Box:
            return Box._new(tree.tree_unflatten(state.treedef, _raise(state, lo_vals)))

        def read_loval(self, state: BoxState, box: Any) -> list[Any]:
            leaves = tree.tree_leaves(box_get(box))
            pairs = zip(state.leaf_avals, leaves, strict=True)
            return [lo for a, x in pairs for lo in _lower(a, x)]

        def update_from_loval(self, state: BoxState, box: Any, *lo_vals: Any) -> None:
            box_set(box, tree.tree_unflatten(state.treedef, _raise(state, lo_vals)))

        def to_tangent_aval(self) -> BoxTy:
            return BoxTy()

    def _lo_ty(a: Any) -> list[Any]:
        return list(a.lo_ty()) if a.is_high else [a]

    def _lower(a: Any, x: Any) -> list[Any]:
        return list(a.lower_val(x)) if a.is_high else [x]

    def _raise(state: BoxState, lo_vals: Any) -> list[Any]:
        it = iter(lo_vals)
        out = []
        for a in state.leaf_avals:
            n = len(_lo_ty(a))
            chunk = list(itertools.islice(it, n))
            out.append(a.raise_val(*chunk) if a.is_high else chunk[0])
        return out

    class Box:
        _val: Any

        def __new__(cls, init_val: Any = None) -> Any:  # a primitive, traced or not
            box = new_box()
            box.set(init_val)
            return box

        @classmethod
        def _new(cls, val: Any) -> Box:
            new = super().__new__(cls)
            new._val = val
            return new

        def get(self) -> Any:
            return box_get(self)

        def set(self, val: Any) -> None:
            box_set(self, val)

        def cur_qdd(self) -> BoxState:
            leaves, treedef = tree.tree_flatten(self._val)
            return BoxState(tuple(api.typeof(x) for x in leaves), treedef)

    hijax.register_hitype(Box, lambda b: BoxTy())

    class BoxEffect(api.extend.core.Effect if hasattr(api, "extend") else object):  # type: ignore[misc]
        pass

    box_effect = BoxEffect()
    hijax.control_flow_allowed_effects.add_type(BoxEffect)

    class NewBox(hijax.HiPrimitive):  # type: ignore[misc]
        def is_high(self, **_: Any) -> bool:
            return True

        def abstract_eval(self, *, treedef: Any) -> Any:
            return hijax.AvalQDD(BoxTy(), BoxState((), treedef)), {box_effect}

        def to_lojax(self, *, treedef: Any) -> Any:
            return Box._new(None)

    class BoxSet(hijax.HiPrimitive):  # type: ignore[misc]
        multiple_results = True

        def is_high(self, *avals: Any, treedef: Any) -> bool:
            return True

        def abstract_eval(self, box_ty: Any, *leaf_avals: Any, treedef: Any) -> Any:
            box_ty.mutable_qdd.update(BoxState(leaf_avals, treedef))
            return [], {box_effect}

        def to_lojax(self, box: Any, *leaves: Any, treedef: Any) -> Any:
            box._val = tree.tree_unflatten(treedef, leaves)
            return []

        def jvp(self, primals: Any, tangents: Any, *, treedef: Any) -> Any:
            box, *vals = primals
            box_dot, *val_dots = tangents
            if type(box_dot) is hijax.Zero:
                raise Exception(
                    "can't differentiate Box.set operation, did you forget jax.lax.stop_gradient?"
                )
            box_set_p.bind(box, *vals, treedef=treedef)
            box_set_p.bind(box_dot, *val_dots, treedef=treedef)
            return [], []

    class BoxGet(hijax.HiPrimitive):  # type: ignore[misc]
        multiple_results = True

        def abstract_eval(self, box_ty: Any, *, avals: Any) -> Any:
            return avals, {box_effect}

        def to_lojax(self, box: Any, *, avals: Any) -> Any:
            return tree.tree_leaves(box._val)

        def jvp(self, primals: Any, tangents: Any, *, avals: Any) -> Any:
            (box,), (box_dot,) = primals, tangents
            tangent_avals = tuple(a.to_tangent_aval() for a in avals)
            return box_get_p.bind(box, avals=avals), box_get_p.bind(box_dot, avals=tangent_avals)

    def log_append(log: Any, key: str, val: Any) -> None:
        leaves, treedef = tree.tree_flatten({key: [val]})
        log_extend_p.bind(log, *leaves, treedef=treedef)

    class LogTy(hijax.MutableHiType):  # type: ignore[misc]  # a class of `hijax`
        is_writer = True
        append = hijax.aval_method(log_append)

        def __hash__(self) -> int:
            return hash(LogTy)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, LogTy)

        def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
            return "Log"

        def to_tangent_aval(self) -> LogTy:
            return LogTy()

        def lo_ty_qdd(self, qdd: Any) -> list[Any]:
            return []

        def read_loval_in(self, qdd: Any, log: Any) -> list[Any]:
            return []

        def read_loval_out(self, qdd: Any, log: Any) -> Any:
            return log._dct  # what the program appended

        def new_from_loval(self, qdd: Any) -> Log:
            return Log._new()

        def update_from_loval2(self, qdd: Any, log: Any, lo: Any) -> None:
            for k, v in lo.unflatten().items():
                log._dct.setdefault(k, []).extend(v)

    class Log:
        _dct: dict[str, list[Any]]

        def __new__(cls) -> Any:
            return new_log_p.bind()

        @classmethod
        def _new(cls) -> Log:
            new = super().__new__(cls)
            new._dct = {}
            return new

        def cur_qdd(self) -> tuple[()]:
            return ()

        append = log_append

    hijax.register_hitype(Log, lambda _: LogTy())

    class LogExtend(hijax.HiPrimitive):  # type: ignore[misc]
        multiple_results = True

        def abstract_eval(self, log_ty: Any, *val_tys: Any, treedef: Any) -> Any:
            return [], {box_effect}

        def to_lojax(self, log: Any, *vals: Any, treedef: Any) -> Any:
            for k, v in tree.tree_unflatten(treedef, vals).items():
                log._dct.setdefault(k, []).extend(v)
            return []

    class NewLog(hijax.HiPrimitive):  # type: ignore[misc]
        def abstract_eval(self) -> Any:
            return hijax.AvalQDD(LogTy(), ()), {box_effect}

        def to_lojax(self) -> Any:
            return Log._new()

    log_extend_p = LogExtend("log_extend")
    new_log_p = NewLog("new_log")
    new_box_p = NewBox("new_box")
    box_set_p = BoxSet("box_set")
    box_get_p = BoxGet("box_get")
    return SimpleNamespace(**{k: v for k, v in locals().items() if not k.startswith("_")})
