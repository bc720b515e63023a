"""`saved_residuals`/`print_saved_residuals`: what reverse-mode differentiation of a function
keeps from its forward pass, and where each value comes from, in JAX's words.

The residuals are the leaves of the pullback `vjp` returns; staging `vjp` itself shows, for
each, the argument, constant or equation of the forward pass that produced it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_consts import make_jaxpr
from lamina_core import tree_util, vjp
from lamina_core.checkpoint import name_p
from lamina_core.ir import AbstractValue, Jaxpr, Literal
from lamina_core.transforms import argument_names


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[Any, str]]:
    """Each residual `vjp(f, *args, **kwargs)` saves: its type and a sentence on its source."""
    in_leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def flat_f(*leaves: Any) -> Any:
        a, kw = tree_util.tree_unflatten(in_tree, leaves)
        return f(*a, **kw)

    closed, out_shape = make_jaxpr(lambda *xs: vjp(flat_f, *xs), return_shape=True)(*in_leaves)
    num_res = len(tree_util.tree_leaves(out_shape[1]))
    jaxpr = closed.jaxpr
    names = argument_names(f, args, kwargs, set())
    residuals = jaxpr.outvars[len(jaxpr.outvars) - num_res :]
    return _sources(jaxpr, residuals, names or ("unknown",) * len(jaxpr.invars))


def _sources(
    jaxpr: Jaxpr, residuals: Sequence[Any], arg_names: Sequence[str]
) -> list[tuple[AbstractValue, str]]:
    # Literals first, then constants, arguments and equations in program order, as JAX lists
    # them; a rounding step (reduce_precision) is looked through to the value it rounds.
    through = {
        e.outvars[0]: e.invars[0] for e in jaxpr.eqns if e.primitive.name == "reduce_precision"
    }
    saved = {through.get(v, v) for v in residuals if not isinstance(v, Literal)}
    found: list[tuple[AbstractValue, str]] = [
        (v.aval, "from a literal") for v in residuals if isinstance(v, Literal)
    ]
    found += [(v.aval, "from a constant") for v in jaxpr.constvars if v in saved]
    for i, v in enumerate(jaxpr.invars):
        if v in saved:
            found.append(
                (v.aval, f"from the argument {arg_names[i]}")
                if arg_names[i]
                else (v.aval, "from the argument at flattened index {i}")  # JAX's text, as is
            )
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v not in saved:
                continue
            src = eqn.source_info.summary()
            if eqn.primitive is name_p:
                found.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                found.append(
                    (v.aval, f"output of jitted function '{eqn.params['name']}' from {src}")
                )
            else:
                found.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return found


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print each residual `vjp(f, *args, **kwargs)` saves, one line each, as JAX prints."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")
