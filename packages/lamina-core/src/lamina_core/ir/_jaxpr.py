"""The jaxpr IR: variables, literals, equations, jaxprs and closed jaxprs.

Identity semantics follow JAX: variables, equations and jaxprs compare and hash by identity
(a variable is a binding site, not a value), literals are unhashable values. The objects are
immutable once built; passes make new ones with `replace`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np

from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._effects import Effects, no_effects
from lamina_core.ir._literals import TypedComplex, TypedFloat, TypedInt
from lamina_core.ir._qdd import AvalQDD
from lamina_core.ir._source_info import NO_SOURCE_INFO, SourceInfo

if TYPE_CHECKING:
    from lamina_core.ir._primitive import Primitive

Params: TypeAlias = Mapping[str, Any]
"""Equation parameters. `Any` for JAX parity: params are an open set of value kinds (jaxprs,
dtypes, tuples, enums, callables) that each primitive defines; its rules know their types."""


@dataclass(eq=False, slots=True)
class Var:
    """A variable: one binding site in a jaxpr. Identity is intended (eq=False)."""

    aval: AbstractValue
    initial_qdd: Any = None
    """For a value of a mutable hi type (`aval.has_qdd`) bound as an input: its quasi-dynamic
    data (what a box holds) on entry; the jaxpr's signature depends on it."""
    final_qdd: Any = None
    """For the same: its quasi-dynamic data when the jaxpr returns (callers update theirs)."""

    def __repr__(self) -> str:
        # JAX's: the type's short form, no weak-type mark.
        return f"Var(id={id(self)}):{self.aval.str_short()}"


@dataclass(eq=False, slots=True)
class DropVar(Var):
    """A binder whose value is never read; printed as `_`."""

    def __repr__(self) -> str:
        return "_"  # as JAX's


@dataclass(eq=False, slots=True)
class Literal:
    """A constant embedded in an equation: a scalar or (seed 000) a whole array."""

    val: Any
    """A Python or typed Python scalar, a NumPy scalar or array, or an upper layer's array."""
    aval: AbstractValue

    __hash__ = None  # type: ignore[assignment]  # literals are values; JAX makes them unhashable

    @property
    def is_scalar(self) -> bool:
        return not getattr(self.aval, "shape", ())

    def __repr__(self) -> str:
        # JAX's: the value's `str`; typed Python scalars show their type, as JAX's do.
        val = self.val
        return f"Literal({val!r})" if isinstance(val, TypedScalars) else f"Literal({val})"


TypedScalars = (TypedInt, TypedFloat, TypedComplex)

Atom: TypeAlias = Var | Literal


@dataclass(slots=True, eq=False)
class JaxprEqn:
    """One equation `outvars = primitive[params] invars`. Identity is intended (eq=False).

    Immutable by convention (passes build new ones with `replace`); not `frozen` because
    tracing makes one per primitive application and frozen construction is slower (measured).
    """

    invars: tuple[Atom, ...]
    outvars: tuple[Var, ...]
    primitive: Primitive
    params: Params
    effects: Effects = no_effects
    source_info: SourceInfo = NO_SOURCE_INFO

    def replace(self, **changes: Any) -> JaxprEqn:
        fields = {
            "invars": self.invars,
            "outvars": self.outvars,
            "primitive": self.primitive,
            "params": self.params,
            "effects": self.effects,
            "source_info": self.source_info,
            **changes,
        }
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
        return _printer.eqn(self)


class Printer(Protocol):
    """What the IR needs from the printer, which sits above it (`lamina_core.ir._pretty`)."""

    def jaxpr(
        self,
        jaxpr: Jaxpr,
        *,
        source_info: bool,
        print_shapes: bool,
        custom_pp_eqn_rules: bool,
        name_stack: bool,
        print_effects: bool,
        width: int,
        use_color: bool | None,
    ) -> str: ...

    def eqn(self, eqn: JaxprEqn) -> str: ...


class _NoPrinter:
    def jaxpr(self, jaxpr: Jaxpr, **settings: Any) -> str:
        return object.__repr__(jaxpr)

    def eqn(self, eqn: JaxprEqn) -> str:
        return object.__repr__(eqn)


_printer: Printer = _NoPrinter()


def install_printer(printer: Printer) -> None:
    """Called once by `lamina_core.ir._pretty` at import; the IR itself prints nothing."""
    global _printer
    _printer = printer


ArgNames: TypeAlias = tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class DebugInfo:
    """What a jaxpr was traced from, for error messages and locations."""

    traced_for: str
    """The API that traced it: `make_jaxpr`, `jit`, ..."""
    func_src_info: str
    """`name at file:line` of the traced function."""
    arg_names_source: ArgNames | Callable[[], ArgNames] = None
    """The flattened arguments' names, or a function computing them: naming them costs a
    signature binding and a pytree walk per trace, which only errors and locations need."""
    result_paths: tuple[str, ...] | None = None

    @property
    def arg_names(self) -> ArgNames:
        source = self.arg_names_source
        if callable(source):
            source = source()
            object.__setattr__(self, "arg_names_source", source)  # memo of a derived value
        return source


class Jaxpr:
    """A typed, closed-form program: constvars, invars, equations, outvars and effects.

    Equality and hashing are by identity, so jaxprs can key weak caches.
    """

    __slots__ = (
        "__weakref__",
        "_constvars",
        "_debug_info",
        "_effects",
        "_eqns",
        "_invars",
        "_outvars",
    )

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[JaxprEqn],
        effects: Effects = no_effects,
        debug_info: DebugInfo | None = None,
    ) -> None:
        self._constvars = tuple(constvars)
        self._invars = tuple(invars)
        self._outvars = tuple(outvars)
        self._eqns = tuple(eqns)
        self._effects = effects
        self._debug_info = debug_info

    @property
    def constvars(self) -> tuple[Var, ...]:
        return self._constvars

    @property
    def invars(self) -> tuple[Var, ...]:
        return self._invars

    @property
    def outvars(self) -> tuple[Atom, ...]:
        return self._outvars

    @property
    def eqns(self) -> tuple[JaxprEqn, ...]:
        return self._eqns

    @property
    def effects(self) -> Effects:
        return self._effects

    @property
    def debug_info(self) -> DebugInfo | None:
        return self._debug_info

    @property
    def is_high(self) -> bool:
        return any(v.aval.is_high for v in (*self._invars, *self._constvars))

    @property
    def in_avals(self) -> list[AbstractValue]:
        return [v.aval for v in self._invars]

    @property
    def in_aval_qdds(self) -> list[Any]:
        """The input types, a mutable hi value's with its data on entry (to trace again)."""
        return [AvalQDD(v.aval, v.initial_qdd) if v.aval.has_qdd else v.aval for v in self._invars]

    @property
    def out_avals(self) -> list[AbstractValue]:
        return [v.aval for v in self._outvars]

    def replace(self, **changes: Any) -> Jaxpr:
        fields = {
            "constvars": self._constvars,
            "invars": self._invars,
            "outvars": self._outvars,
            "eqns": self._eqns,
            "effects": self._effects,
            "debug_info": self._debug_info,
            **changes,
        }
        return Jaxpr(**fields)

    def pretty_print(
        self,
        *,
        source_info: bool = False,
        print_shapes: bool = True,
        custom_pp_eqn_rules: bool = True,
        name_stack: bool = False,
        print_effects: bool = False,
        width: int = 80,
        use_color: bool | None = None,
    ) -> str:
        """The jaxpr's text, as JAX prints it.

        Args:
            source_info: annotate each equation with the user's line that made it.
            print_shapes: print binders' types.
            custom_pp_eqn_rules: print equations with their primitive's own rule, if any.
            name_stack: annotate each equation with its name stack.
            print_effects: print the jaxpr's effects after its outputs.
            width: the column to fit lines in.
            use_color: color with ANSI escapes; None (as `str`): when printing to a
                terminal or notebook and `jax_pprint_use_color` is on, as JAX's.
        """
        return _printer.jaxpr(
            self,
            source_info=source_info,
            print_shapes=print_shapes,
            custom_pp_eqn_rules=custom_pp_eqn_rules,
            name_stack=name_stack,
            print_effects=print_effects,
            width=width,
            use_color=use_color,
        )

    def __str__(self) -> str:
        return self.pretty_print()

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's display: in color, as JAX's."""
        p.text(self.pretty_print(use_color=True))


class ClosedJaxpr:
    """A jaxpr with values for its constvars. Printing shows only the jaxpr."""

    __slots__ = ("__weakref__", "_consts", "_jaxpr")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(
                f"ClosedJaxpr needs one value per constvar: "
                f"{len(jaxpr.constvars)} constvars, {len(consts)} consts"
            )
        self._jaxpr = jaxpr
        self._consts = list(consts)

    @property
    def jaxpr(self) -> Jaxpr:
        return self._jaxpr

    @property
    def consts(self) -> list[Any]:
        return self._consts

    @property
    def literals(self) -> list[Any]:
        """The consts, under the name the 2020 jaxpr document uses."""
        return self._consts

    @property
    def constvars(self) -> tuple[Var, ...]:
        return self._jaxpr.constvars

    @property
    def invars(self) -> tuple[Var, ...]:
        return self._jaxpr.invars

    @property
    def outvars(self) -> tuple[Atom, ...]:
        return self._jaxpr.outvars

    @property
    def eqns(self) -> tuple[JaxprEqn, ...]:
        return self._jaxpr.eqns

    @property
    def effects(self) -> Effects:
        return self._jaxpr.effects

    @property
    def debug_info(self) -> DebugInfo | None:
        return self._jaxpr.debug_info

    @property
    def is_high(self) -> bool:
        return self._jaxpr.is_high

    @property
    def in_avals(self) -> list[AbstractValue]:
        return self._jaxpr.in_avals

    @property
    def in_aval_qdds(self) -> list[Any]:
        return self._jaxpr.in_aval_qdds

    @property
    def out_avals(self) -> list[AbstractValue]:
        return self._jaxpr.out_avals

    def replace(
        self, *, jaxpr: Jaxpr | None = None, consts: Sequence[Any] | None = None
    ) -> ClosedJaxpr:
        return ClosedJaxpr(
            self._jaxpr if jaxpr is None else jaxpr, self._consts if consts is None else consts
        )

    def map_jaxpr(self, f: Any) -> ClosedJaxpr:
        return ClosedJaxpr(f(self._jaxpr), self._consts)

    def pretty_print(self, **kwargs: Any) -> str:
        return self._jaxpr.pretty_print(**kwargs)

    def __str__(self) -> str:
        return self._jaxpr.pretty_print()

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self._jaxpr.pretty_print(use_color=True))


def jaxprs_in_params(params: Params) -> Iterator[Jaxpr]:
    """Every jaxpr held by a param: a Jaxpr, a ClosedJaxpr, or a tuple of them."""
    for value in params.values():
        if isinstance(value, Jaxpr):
            yield value
        elif isinstance(value, ClosedJaxpr):
            yield value.jaxpr
        elif type(value) is tuple:
            for item in value:
                if isinstance(item, Jaxpr):
                    yield item
                elif isinstance(item, ClosedJaxpr):
                    yield item.jaxpr


def literal_is_array(lit: Literal) -> bool:
    """True for non-scalar literals, the ones seed 000 prints as `[...]`."""
    return np.ndim(lit.val) > 0
