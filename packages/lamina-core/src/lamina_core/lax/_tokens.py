"""XLA tokens: `create_token` and `after_all`, as `jax.lax`'s.

A token orders side effects and carries no data. Its abstract value prints as `Tok` and lowers
to `!stablehlo.token`; eagerly a token is a `Token` object, made and merged in Python.
"""

from __future__ import annotations

from typing import Any, Final

from lamina_core.interpreters import not_differentiable
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    abstract_eval_rules,
    evaluated_on_values,
    impl_rules,
    value_impl_rules,
)
from lamina_core.trace import register_hi_value_type


class AbstractToken(AbstractValue):
    """The type of tokens (one value: there is nothing in a token to vary)."""

    __slots__ = ()

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractToken

    def __hash__(self) -> int:
        return hash(AbstractToken)

    def to_tangent_aval(self) -> AbstractValue:
        return self


abstract_token: Final = AbstractToken()


class Token:
    """An eager token."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


register_hi_value_type(Token, lambda token: abstract_token)


def _make_token(*args: Any, **params: Any) -> Token:
    return Token()


create_token_p: Final = Primitive("create_token")
after_all_p: Final = Primitive("after_all")


@abstract_eval_rules.register(create_token_p)
def _create_token_abstract_eval(*args: AbstractValue) -> AbstractToken:
    return abstract_token


@abstract_eval_rules.register(after_all_p)
def _after_all_abstract_eval(*operands: AbstractValue) -> AbstractToken:
    if any(x != abstract_token for x in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


for _prim in (create_token_p, after_all_p):
    impl_rules.set(_prim, _make_token)
    value_impl_rules.set(_prim, _make_token)
    evaluated_on_values.add(_prim)  # nothing to compute: no program for XLA
    not_differentiable(_prim)


def create_token(_: Any = None) -> Any:
    """A fresh token, with nothing sequenced before it (the argument is ignored, as JAX's)."""
    return create_token_p.bind()


def after_all(*operands: Any) -> Any:
    """A token sequenced after all the tokens `operands`."""
    return after_all_p.bind(*operands)


__all__ = ["after_all", "after_all_p", "create_token", "create_token_p"]
