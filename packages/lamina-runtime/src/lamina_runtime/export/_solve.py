"""The values of an exported function's dimension variables, read from the shapes it is
called with, and JAX's errors when the shapes do not fit its symbolic specification.

A variable is read from the first axis whose specification is linear in it alone (`b`,
`2*b`, `b + 1`); every other axis is then checked against its specification's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from lamina_core import tree_util
from lamina_core.ir import is_symbolic_dim

_HELP: Final = (
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
    "for more details."
)


def _description(in_tree: Any, index: int) -> str:
    placeholders = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    path, _ = tree_util.tree_flatten_with_path(placeholders)[0][index]
    head = "args" if path[0] == tree_util.SequenceKey(0) else "kwargs"
    return f"{head}{tree_util.keystr(tuple(path[1:]))}"


def _shape_text(shape: Sequence[Any]) -> str:
    return f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _linear(d: Any) -> tuple[str, int, int] | None:
    """`(var, coeff, const)` when `d` is `coeff * var + const`."""
    var, coeff, const = d.linear_variable()
    return None if var is None else (var, coeff, const)


def solve_dimensions(in_tree: Any, expected: Sequence[Any], avals: Sequence[Any]) -> dict[str, int]:
    """The variables' values; JAX's `ValueError` for shapes that fit no values."""
    names = [_description(in_tree, i) for i in range(len(expected))]
    spec = ",".join(
        f"{n}.shape = {_shape_text(a.shape)}"
        for n, a in zip(names, expected, strict=True)
        if any(is_symbolic_dim(d) for d in a.shape)
    )
    env: dict[str, int] = {}
    obtained: list[str] = []

    def fail(what: str, mismatch: str = "the polymorphic shapes specification") -> ValueError:
        return ValueError(
            f"Input shapes do not match {mismatch}. "
            f"{what} Using the following polymorphic shapes specifications: {spec}. "
            f"Obtained dimension variables: {''.join(obtained)}. {_HELP}"
        )

    for name, want, got in zip(names, expected, avals, strict=True):
        for axis, (d, have) in enumerate(zip(want.shape, got.shape, strict=True)):
            found = _linear(d) if is_symbolic_dim(d) else None
            if found is None or found[0] in env:
                continue
            var, coeff, const = found
            value, rest = divmod(have - const, coeff)
            if rest:
                raise fail(f"Division had remainder {rest} when computing the value of '{var}'.")
            env[var] = value
            where = f"{name}.shape[{axis}]"
            obtained.append(
                f"'{var}' = {value} from specification '{d}' for dimension {where} (= {have}), "
            )
    for var, value in env.items():
        if value < 1:
            raise fail(f"Expected value >= 1 for dimension variable '{var}'.")
    scope = next(d.scope for a in expected for d in a.shape if is_symbolic_dim(d))
    for text, diff in scope.constraints:  # each holds as `diff >= 0`
        if is_symbolic_dim(diff) and diff.variables() <= env.keys():
            found = diff.evaluate(env)
            if found < 0:
                raise fail(
                    f"Expected '{diff}' to be greater or equal to 0, but found {found}. ",
                    f"the symbolic shape constraint {text}",
                )
    for name, want, got in zip(names, expected, avals, strict=True):
        for axis, (d, have) in enumerate(zip(want.shape, got.shape, strict=True)):
            if not is_symbolic_dim(d):
                continue
            missing = d.variables() - env.keys()
            if missing:
                raise NotImplementedError(
                    f"calling an exported function: the dimension variable "
                    f"{sorted(missing)[0]!r} is not the size of an argument axis (Lamina "
                    "reads variables from axes linear in one variable only)"
                )
            value = d.evaluate(env)
            if value != have:
                raise fail(
                    f"Found inconsistency between dimension size {name}.shape[{axis}] "
                    f"(= {have}) and the specification '{d}' (= {value})."
                )
    return env
