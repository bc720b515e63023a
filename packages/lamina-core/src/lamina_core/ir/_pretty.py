"""Printing jaxprs, byte-identical to JAX 0.10.2.

The layout is JAX's document structure over the `pp` engine; names are handed out lazily in
print order (`a … z, ba, …`) by one context for the whole printout; sub-jaxprs used more than
once, or with more than 10 equations, are printed first as `let name = { … } in`. Primitives
whose params print specially register a rule in `pp_eqn_rules`.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.config import config
from lamina_core.ir import _pp as pp
from lamina_core.ir._jaxpr import (
    Atom,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    install_printer,
    jaxprs_in_params,
)
from lamina_core.ir._named_scopes import format_name_stack
from lamina_core.ir._primitive import RuleTable


@dataclass(frozen=True, slots=True)
class PpSettings:
    print_shapes: bool = True
    source_info: bool = False
    name_stack: bool = False
    custom_pp_eqn_rules: bool = True
    print_effects: bool = False


def _alphabetic(n: int) -> str:
    """0 → a, 25 → z, 26 → ba: base 26 with `a` as the zero digit."""
    digits = ""
    while True:
        n, d = divmod(n, 26)
        digits = chr(ord("a") + d) + digits
        if not n:
            return digits


class PpContext:
    """Names for variables and shared jaxprs, for one printout. Identity is intended."""

    def __init__(self, preset: dict[Var, str] | None = None) -> None:
        self.names: dict[Var, str] = dict(preset or {})
        self.shared_jaxprs: dict[Jaxpr, str] = {}
        self.shared_names: set[str] = set()
        self._fresh: Iterator[str] = (
            name for name in map(_alphabetic, itertools.count()) if name not in self.shared_names
        )

    def name(self, var: Var) -> str:
        if type(var) is DropVar:
            return "_"
        name = self.names.get(var)
        if name is None:
            name = self.names[var] = next(self._fresh)
        return name

    def suggest_names(self, for_vars: Sequence[Atom], like: Sequence[Atom]) -> None:
        """Name `for_vars` like the aliased `like` atoms where possible (JAX's jit bodies)."""
        if len(for_vars) != len(like):
            return
        used: set[int] = set()
        for target, model in zip(for_vars, like, strict=True):
            if (
                isinstance(model, Var)
                and id(model) not in used
                and isinstance(target, Var)
                and target not in self.names
            ):
                used.add(id(model))
                self.names[target] = self.name(model)


PpEqnRule: TypeAlias = Callable[[JaxprEqn, PpContext, PpSettings], pp.Doc]
pp_eqn_rules: RuleTable[PpEqnRule] = RuleTable("pretty-printing")


def literal_text(lit: Literal, print_dtype: bool = True) -> str:
    value = "[...]" if np.ndim(lit.val) > 0 else str(np.asarray(lit.val).item())
    return f"{value}:{lit.aval.str_short(True)}" if print_dtype else value


def pp_atom(atom: Atom, ctx: PpContext) -> str:
    return literal_text(atom) if isinstance(atom, Literal) else ctx.name(atom)


def pp_vars(
    atoms: Sequence[Atom], ctx: PpContext, *, separator: str = "", print_shapes: bool = False
) -> pp.Doc:
    if print_shapes:
        docs = [
            pp.concat(
                [
                    pp.text(pp_atom(v, ctx)),
                    pp.type_annotation(pp.text(f":{v.aval.str_short(True)}")),
                ]
            )
            for v in atoms
        ]
    else:
        docs = [pp.text(pp_atom(v, ctx)) for v in atoms]
    return pp.nest(2, pp.group(pp.join(pp.concat([pp.text(separator), pp.group(pp.brk())]), docs)))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def pp_param_value(value: Any, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    if type(value) is tuple and value and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in value):
        inner = [
            pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx, settings) for j in value
        ]
        return pp.group(
            pp.concat(
                [
                    pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), inner)])),
                    pp.brk(""),
                    pp.text(")"),
                ]
            )
        )
    if isinstance(value, Jaxpr):
        return pp_jaxpr(value, ctx, settings)
    if isinstance(value, ClosedJaxpr):
        return pp_jaxpr(value.jaxpr, ctx, settings)
    if isinstance(value, frozenset):
        return pp.text(f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})")
    return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


def pp_params(items: Sequence[tuple[str, Any]], ctx: PpContext, settings: PpSettings) -> pp.Doc:
    if not items:
        return pp.NIL
    pairs = [pp.concat([pp.text(f"{k}="), pp_param_value(v, ctx, settings)]) for k, v in items]
    return pp.group(
        pp.concat(
            [
                pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), pairs)])),
                pp.brk(""),
                pp.text("]"),
            ]
        )
    )


def pp_eqn_with_params(
    eqn: JaxprEqn, ctx: PpContext, settings: PpSettings, param_names: Sequence[str] | None = None
) -> pp.Doc:
    """The standard equation layout, showing `param_names` (default: all, sorted)."""
    names = sorted(eqn.params) if param_names is None else param_names
    annotation = eqn.source_info.summary() if settings.source_info else None
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=settings.print_shapes)
    rhs = [
        pp.text(eqn.primitive.name, name_stack_note(eqn, settings)),
        pp_params([(k, eqn.params[k]) for k in names], ctx, settings),
        pp.concat([pp.text(" "), pp_vars(eqn.invars, ctx)]),
    ]
    if not eqn.outvars:
        return pp.concat(rhs)
    return pp.concat([lhs, pp.text(" = ", annotation), *rhs])


def name_stack_note(eqn: JaxprEqn, settings: PpSettings) -> str | None:
    """The annotation `pretty_print(name_stack=True)` gives an equation: its name stack in
    brackets."""
    if not settings.name_stack:
        return None
    return f"[{format_name_stack(eqn.source_info.name_stack)}]"


def pp_eqn(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    rule = pp_eqn_rules.get(eqn.primitive) if settings.custom_pp_eqn_rules else None
    return (rule or pp_eqn_with_params)(eqn, ctx, settings)


def hide_params(prim: Any, hidden: Callable[[str, Any], bool]) -> None:
    """Register a rule that prints `prim` without the params for which `hidden(k, v)` holds."""

    def rule(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
        shown = [k for k in sorted(eqn.params) if not hidden(k, eqn.params[k])]
        return pp_eqn_with_params(eqn, ctx, settings, shown)

    pp_eqn_rules.set(prim, rule)


def _pp_skeleton(jaxpr: Jaxpr, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=settings.print_shapes)
    invars = pp_vars(jaxpr.invars, ctx, print_shapes=settings.print_shapes)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx, settings) for e in jaxpr.eqns])
    closing = ",)" if len(jaxpr.outvars) == 1 else ")"
    outvars = pp.concat(
        [pp.text("("), pp_vars(jaxpr.outvars, ctx, separator=","), pp.text(closing)]
    )
    effects: list[pp.Doc] = []
    if settings.print_effects:
        effects = [pp.text(" : { " + ", ".join(str(e) for e in jaxpr.effects) + " }")]
    body = pp.concat(
        [
            pp.text("{ "),
            pp.keyword(pp.text("lambda ")),
            constvars,
            pp.text("; "),
            invars,
            pp.text(". "),
            pp.keyword(pp.text("let")),
            pp.nest(2, pp.concat([pp.brk(), eqns])),
            pp.brk(),
            pp.keyword(pp.text("in ")),
            outvars,
            *effects,
        ]
    )
    return pp.group(pp.concat([pp.nest(2, body), pp.text(" }")]))


def pp_jaxpr(jaxpr: Jaxpr, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    shared = ctx.shared_jaxprs.get(jaxpr)
    if shared is not None:
        return pp.text(shared)
    return _pp_skeleton(jaxpr, ctx, settings)


def _unused_outvars(jaxpr: Jaxpr) -> dict[Var, str]:
    """Top-level equation outputs never read afterwards are printed `_`."""
    read: set[Var] = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        read.update(v for v in eqn.invars if isinstance(v, Var))
    return {v: "_" for e in jaxpr.eqns for v in e.outvars if v not in read}


def _share_jaxprs(top: Jaxpr, ctx: PpContext) -> list[tuple[str, Jaxpr]]:
    """Pick the sub-jaxprs printed once up front, and their names."""
    uses: Counter[Jaxpr] = Counter()
    names: dict[Jaxpr, str] = {}
    queue: deque[Jaxpr] = deque([top])
    while queue:
        jaxpr = queue.popleft()
        # Big sub-jaxprs count twice so they are always shared.
        uses[jaxpr] += 2 if jaxpr is not top and len(jaxpr.eqns) > 10 else 1
        for eqn in jaxpr.eqns:
            name = eqn.params.get("name")
            for sub in jaxprs_in_params(eqn.params):
                queue.append(sub)
                if name is not None:
                    names.setdefault(sub, str(name).strip("<>"))
    taken: Counter[str] = Counter()
    shared: list[tuple[str, Jaxpr]] = []
    for jaxpr, count in uses.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        seen = taken[name]
        taken[name] += 1
        if seen:
            name += str(seen)
            taken[name] += 1
        ctx.shared_names.add(name)
        ctx.shared_jaxprs[jaxpr] = name
        shared.append((name, jaxpr))
    return shared


def pp_toplevel_jaxpr(jaxpr: Jaxpr, settings: PpSettings) -> pp.Doc:
    ctx = PpContext(_unused_outvars(jaxpr))
    docs: list[pp.Doc] = []
    for name, sub in _share_jaxprs(jaxpr, ctx):
        body = _pp_skeleton(sub, ctx, settings)
        docs.append(pp.concat([pp.text(f"let {name} = "), body, pp.text(" in"), pp.brk()]))
    docs.append(pp_jaxpr(jaxpr, ctx, settings))
    return pp.concat(docs)


pprint_use_color: Final = config.define_bool(
    "jax_pprint_use_color",
    True,
    "Color printed jaxprs (ANSI escapes) when the output is a terminal or a notebook.",
)


@functools.cache
def _can_use_color() -> bool:
    """Whether printed jaxprs go where colors show, as JAX decides it (once): an IPython
    notebook or Colab, or a standard output that is a terminal."""
    shell = sys.modules.get("IPython")
    if shell is not None:
        ipython = getattr(shell, "get_ipython", lambda: None)()
        kind = type(ipython)
        if kind.__name__ == "ZMQInteractiveShell" or "colab" in str(kind):
            return True
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


class _Printer:
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
    ) -> str:
        settings = PpSettings(
            print_shapes, source_info, name_stack, custom_pp_eqn_rules, print_effects
        )
        if use_color is None:
            use_color = pprint_use_color.value and _can_use_color()
        return pp.format_doc(pp_toplevel_jaxpr(jaxpr, settings), width, use_color)

    def eqn(self, eqn: JaxprEqn) -> str:
        return pp.format_doc(pp_eqn(eqn, PpContext(), PpSettings()))


install_printer(_Printer())
