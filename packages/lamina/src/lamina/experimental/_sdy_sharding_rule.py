"""Shardy sharding rules for `custom_partitioning`: which factors each operand and result
dimension is made of, written as einsum-like strings (`"i j, j k -> i k"`).

Lamina keeps and validates the rule as JAX does; it lowers no sharded custom call, so the rule
is never turned into Shardy's MLIR attribute.
"""

from __future__ import annotations

from typing import Any

BATCHING: str = "…"
"""The factor standing for leading batching dimensions (`...` in a rule string)."""


def _check_factor(factor: str) -> None:
    if not factor[0].isalpha():
        raise ValueError(f"Factor names have to start with a letter, but got '{factor[0]}'")
    for char in factor[1:]:
        if char != "_" and not char.isdigit() and not char.isalpha():
            raise ValueError(f"Unknown character '{char}'")


def _is_batching(factor: str) -> bool:
    # `…` alone or followed by a batching group number (`…` is group 0).
    return factor[:1] == BATCHING and (len(factor) == 1 or factor[1:].isdigit())


class CompoundFactor(tuple[str, ...]):
    """Two or more factors making up one dimension: `CompoundFactor('b', 'c')`."""

    def __new__(cls, *factors: str) -> CompoundFactor:
        if len(factors) < 2:
            raise ValueError("A compound factor should contain at least two factors")
        for factor in factors:
            if not isinstance(factor, str):
                raise ValueError(
                    f"Each element of CompoundFactor must be a str, but got {type(factor)}"
                )
            if _is_batching(factor):
                raise ValueError("Ellipsis can't be used in a compound factor")
            _check_factor(factor)
        return tuple.__new__(cls, factors)


class ArrayMapping(tuple[Any, ...]):
    """The factors of one operand or result, a factor or a `CompoundFactor` per dimension,
    optionally led by `BATCHING`: `ArrayMapping(BATCHING, CompoundFactor('b', 'c'), 'd')`."""

    def __new__(cls, *dim_mappings: str | CompoundFactor) -> ArrayMapping:
        for i, d in enumerate(dim_mappings):
            if isinstance(d, CompoundFactor):
                continue
            if not isinstance(d, str):
                raise ValueError(
                    "Each element of ArrayMapping must be a str or CompoundFactor, but got "
                    f"{type(d)}"
                )
            if not _is_batching(d):
                _check_factor(d)
            elif i != 0:
                raise ValueError("Ellipsis can only be used at the beginning of a dimension")
        return tuple.__new__(cls, dim_mappings)


class SdyShardingRule:
    """A Shardy sharding rule: the `ArrayMapping`s of the operands and results, the kinds of
    the factors that are not pass-through, and the sizes of factors only used in compound
    factors (no other dimension gives their size)."""

    def __init__(
        self,
        operand_mappings: tuple[ArrayMapping, ...],
        result_mappings: tuple[ArrayMapping, ...],
        *,
        reduction_factors: tuple[str, ...] = (),
        need_replication_factors: tuple[str, ...] = (),
        permutation_factors: tuple[str, ...] = (),
        **factor_sizes: int,
    ) -> None:
        # Whether each factor's size can be read off a whole dimension, in order of use.
        inferrable: dict[str, bool] = {}
        for mapping in operand_mappings + result_mappings:
            for dim in mapping:
                if isinstance(dim, CompoundFactor):
                    for factor in dim:
                        inferrable.setdefault(factor, False)
                else:
                    inferrable[dim] = True
        for factor in factor_sizes:
            if factor not in inferrable:
                raise ValueError(f"Factor {factor} is not used in the rule, but size is provided")
        for factor, whole in inferrable.items():
            if not whole and factor not in factor_sizes:
                raise ValueError(
                    f"Factor {factor} is only used in compound factors; must specify its size"
                )
            if whole and factor in factor_sizes:
                raise ValueError(
                    f"Factor {factor} represents a whole dimension; do not specify its size"
                )
        special: set[str] = set()
        for kind, factors in (
            ("reduction_factors", reduction_factors),
            ("need_replication_factors", need_replication_factors),
            ("permutation_factors", permutation_factors),
        ):
            _check_special(kind, factors, inferrable, special)
        self.operand_mappings = operand_mappings
        self.result_mappings = result_mappings
        self.factor_sizes = factor_sizes
        self.reduction_factors = reduction_factors
        self.need_replication_factors = need_replication_factors
        self.permutation_factors = permutation_factors

    def __str__(self) -> str:
        special = "".join(
            f" {kind}={factors}"
            for kind, factors in (
                ("reduction_factors", self.reduction_factors),
                ("need_replication_factors", self.need_replication_factors),
                ("permutation_factors", self.permutation_factors),
            )
            if factors
        )
        return (
            f"SdyShardingRule({self.operand_mappings}, {self.result_mappings}, "
            f"{self.factor_sizes}{special})"
        )


def _check_special(kind: str, factors: Any, used: dict[str, bool], special: set[str]) -> None:
    if not isinstance(factors, tuple):
        raise ValueError(f"{kind} must be a tuple of factors")
    if len(factors) != len(set(factors)):
        raise ValueError(f"{kind} contains duplicated factors")
    for factor in factors:
        if factor not in used:
            raise ValueError(f"Factor {factor} in {kind} is not used in the rule")
        if factor in special:
            raise ValueError(
                f"Factor {factor} can only be in one of the reduction, need replication, "
                "or permutation factor sets."
            )
        special.add(factor)


class _MappingsParser:
    """One side of a rule string (`"i j, (k l)"`) read into `ArrayMapping`s, a character at a
    time, as einops reads its patterns."""

    def __init__(self) -> None:
        self.mappings: list[ArrayMapping] = []
        self.dims: list[str | CompoundFactor] = []
        self.factor: str | None = None
        self.compound: list[str] | None = None

    def add(self, factor: str) -> None:
        (self.dims if self.compound is None else self.compound).append(factor)

    def end_factor(self) -> None:
        if self.factor is not None:
            self.add(self.factor)
            self.factor = None

    def parse(self, side: str) -> tuple[ArrayMapping, ...]:
        text = " ".join(side.split())
        if not text:
            return (ArrayMapping(),)
        i = 0
        while i < len(text):
            char = text[i]
            i += 1
            if char == BATCHING:
                if self.factor is not None or self.compound is not None or self.dims:
                    raise ValueError("Ellipsis can only be used at the beginning of a dimension")
                digits = ""
                while i < len(text) and text[i].isdigit():
                    digits += text[i]
                    i += 1
                self.add(f"{BATCHING}{int(digits) if digits else 0}")
            elif char in "(), ":
                self.end_factor()
                self.punctuation(char)
            elif char == "_" or char.isdigit() or char.isalpha():
                if self.factor is None and char.isdigit():
                    raise ValueError(f"Factor names have to start with a letter, but got '{char}'")
                self.factor = char if self.factor is None else self.factor + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if self.compound is not None:
            raise ValueError(f"Brackets are not balanced in rule: '{text}'")
        self.end_factor()
        self.mappings.append(ArrayMapping(*self.dims))
        return tuple(self.mappings)

    def punctuation(self, char: str) -> None:
        if char == "(":
            if self.compound is not None:
                raise ValueError(
                    "Compound factors should be one level, nested brackets are not allowed"
                )
            self.compound = []
        elif char == ")":
            if self.compound is None:
                raise ValueError("Brackets are not balanced")
            if len(self.compound) <= 1:
                raise ValueError("Brackets should contain at least two factors")
            self.dims.append(CompoundFactor(*self.compound))
            self.compound = None
        elif char == ",":
            self.mappings.append(ArrayMapping(*self.dims))
            self.dims = []


def str_to_sdy_sharding_rule(
    rule: str,
    *,
    reduction_factors: tuple[str, ...] = (),
    need_replication_factors: tuple[str, ...] = (),
    permutation_factors: tuple[str, ...] = (),
    **factor_sizes: int,
) -> SdyShardingRule:
    """The rule an einsum-like string describes: `"... i, (j k) -> ... i j"`."""
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a str, but got {type(rule)}")
    if not all(isinstance(size, int) for size in factor_sizes.values()):
        raise TypeError(f"factor_sizes must be a dict of str to int, but got {factor_sizes}")
    if BATCHING in rule:
        raise ValueError(f"Unknown character '{BATCHING}'")
    if "." in rule:
        rule = rule.replace("...", BATCHING)
        if "." in rule:
            raise ValueError("Character '.' must be used inside ellipsis '...'")
    sides = rule.split("->")
    if len(sides) != 2:
        raise ValueError(f"There is no -> in rule: '{rule}'")
    return SdyShardingRule(
        _MappingsParser().parse(sides[0]),
        _MappingsParser().parse(sides[1]),
        reduction_factors=reduction_factors,
        need_replication_factors=need_replication_factors,
        permutation_factors=permutation_factors,
        **factor_sizes,
    )
