"""Rematerialization policies (`jax.checkpoint_policies`) and `checkpoint_name`.

A policy is asked, for each equation of a checkpointed function whose inputs are all known
when differentiating, `policy(prim, *in_avals, **params)`, and answers True (save the outputs
as residuals), False (recompute them), or a `RematCase`. The objects are JAX's: dataclasses
where JAX has them, closures (with JAX's names, which appear in printed jaxprs) elsewhere.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import Offloadable, Policy, Recompute, RematCase, Saveable, jvp_rules
from lamina_core.ir import AbstractValue, Primitive, abstract_eval_rules, impl_rules
from lamina_core.lax import dot_general_p
from lamina_core.tree import tree_util

name_p: Final = Primitive("name")
"""The identity, tagging a value with a name the name-based policies look for."""


@abstract_eval_rules.register(name_p)
def _name_abstract_eval(x: AbstractValue, *, name: str) -> AbstractValue:
    return x


@impl_rules.register(name_p)
def _name_impl(x: np.ndarray, *, name: str) -> np.ndarray:
    return x


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> Any:
    (x,), (t,) = primals, tangents
    # Only the primal is named: policies decide about primal values.
    return name_p.bind(x, name=name), t


jvp_rules.set(name_p, _name_jvp)


def checkpoint_name(x: Any, name: str) -> Any:
    """`x` (a pytree of arrays) unchanged, each leaf tagged `name` for the policies.

    Example:
      `checkpoint(f, policy=checkpoint_policies.save_only_these_names("h"))` saves the values
      `f` passed through `checkpoint_name(y, "h")` and recomputes the rest.
    """
    return tree_util.tree_map(lambda v: name_p.bind(v, name=name), x)


# The extension point for matmuls Lamina does not define (JAX names them by string too).
_OTHER_DOTS: Final = frozenset({"conv_general_dilated", "scaled_matmul_wrapper"})


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every known value: the strategy without `checkpoint`."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Recompute everything from the inputs: the default policy of `checkpoint`."""
    return False


@dataclass(frozen=True)
class DotsSaveable:
    """Save the results of matrix multiplications (only those without batch dimensions, if
    `only_if_no_batch_dims`)."""

    only_if_no_batch_dims: bool

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        if self.only_if_no_batch_dims:
            if prim is dot_general_p:
                (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
                if not lhs_b and not rhs_b:
                    return True
            if prim.name == "scaled_matmul_wrapper":
                return bool(avals[0].shape[0] == 1)
            return False
        return prim is dot_general_p or prim.name in _OTHER_DOTS


dots_saveable: Final = DotsSaveable(False)
checkpoint_dots: Final = dots_saveable
dots_with_no_batch_dims_saveable: Final = DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Policy:
    """As `dots_with_no_batch_dims_saveable`, offloading the saved dots to `offload_dst`."""

    def policy(prim: Primitive, *_: Any, **params: Any) -> RematCase:
        if prim is dot_general_p:
            (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
            if not lhs_b and not rhs_b:
                return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def save_anything_except_these_names(*names_not_to_save: str) -> Policy:
    """Save everything. (JAX 0.10.2's version ignores the names; so does Lamina's.)"""
    return lambda *_, **__: True


@dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (`checkpoint_name`) with one of `saveable_names`."""

    saveable_names: frozenset[str]

    def __call__(self, prim: Primitive, *_: Any, **params: Any) -> bool:
        if prim is name_p:
            return params["name"] in self.saveable_names
        return False


@dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only named values, except those named with one of `names`."""

    names: frozenset[str]

    def __call__(self, prim: Primitive, *_: Any, **params: Any) -> bool:
        if prim is name_p:
            return params["name"] not in self.names
        return False


def save_any_names_but_these(*names_not_to_save: str) -> SaveAnyNamesButThese:
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved: str) -> SaveOnlyTheseNames:
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_and_offload_only_these_names(
    *,
    names_which_can_be_saved: Sequence[str],
    names_which_can_be_offloaded: Sequence[str],
    offload_src: str,
    offload_dst: str,
) -> Policy:
    """As `save_only_these_names`, offloading the values of the second list of names.

    Raises:
      ValueError: if a name is in both lists.
    """
    saved = set(names_which_can_be_saved)
    offloaded = set(names_which_can_be_offloaded)
    both = saved.intersection(offloaded)
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in"
            " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
            f" names_which_can_be_saved={saved},"
            f" names_which_can_be_offloaded={offloaded} and the"
            f" intersection={both}"
        )

    def policy(prim: Primitive, *_: Any, **params: Any) -> RematCase:
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def save_from_both_policies(policy_1: Policy, policy_2: Policy) -> Policy:
    """Save what either policy saves (both must answer with bools).

    Raises:
      ValueError: when called, if a policy answers with something other than a bool.
    """

    def policy(prim: Primitive, *args: Any, **params: Any) -> bool:
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got:"
                f" {out1} and {out2}. Please write a custom policy function directly,"
                " rather than using this helper function."
            )
        return out1 or out2

    return policy


checkpoint_policies: Final = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)
"""The policies, under JAX's names (a namespace, as `jax.checkpoint_policies` is)."""

__all__ = [
    "DotsSaveable",
    "SaveAnyNamesButThese",
    "SaveOnlyTheseNames",
    "checkpoint_dots",
    "checkpoint_name",
    "checkpoint_policies",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "name_p",
    "nothing_saveable",
    "offload_dot_with_no_batch_dims",
    "save_and_offload_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
]
