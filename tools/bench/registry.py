"""Benchmarks, their parameters, and the registry that `@benchmark` fills at import time.

A benchmark module imports neither Lamina nor JAX at module level: each side imports its
implementation inside the setup function, so `--list` stays fast and a broken side fails only
its own measurements.
"""

from __future__ import annotations

import enum
import fnmatch
import importlib
import itertools
import pkgutil
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Final

ParamValue = int | float | str | bool
Timed = Callable[[], object]
"""What a setup function returns: the zero-argument callable whose calls are timed."""
Setup = Callable[..., Timed]
"""`setup(side, **params) -> Timed`; called once per side and case, never timed."""
UnitCount = str | Callable[..., int]
"""The name of the parameter that counts units, or `f(**params) -> int`."""

_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class Side(enum.Enum):
    """The two implementations a benchmark compares, in the order they are measured."""

    LAMINA = "lamina"
    JAX = "jax"

    def api(self) -> ModuleType:
        """Import and return the side's top-level package (`lamina` or `jax`).

        `lamina` mirrors JAX's public API, so one setup body often serves both sides.
        """
        return importlib.import_module(self.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Benchmark:
    """A named pair of implementations, one setup function, and its parameter grid."""

    name: str
    """Dotted name, `<suite>.<what>`, e.g. `make_jaxpr.chain`."""
    setup: Setup
    params: Mapping[str, tuple[ParamValue, ...]]
    """Each parameter's values; the benchmark runs once per combination."""
    unit: str | None = None
    """What `unit_count` counts (`eqn`, `leaf`); reported as time per unit."""
    unit_count: UnitCount | None = None
    devices: int = 1
    """CPU devices the benchmark needs; the CLI asks XLA for them before the backend starts."""
    lamina_only: bool = False
    """JAX has no counterpart (e.g. reading printed jaxprs back): only Lamina's side is set up
    and measured; the JAX column, the ratio and the JSON's `jax` stay empty."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"benchmark name {self.name!r} must be dotted identifiers")
        for key, values in self.params.items():
            if not values:
                raise ValueError(f"benchmark {self.name}: parameter {key!r} has no values")
        if isinstance(self.unit_count, str) and self.unit_count not in self.params:
            raise ValueError(
                f"benchmark {self.name}: unit_count {self.unit_count!r} is not a parameter "
                f"(have {sorted(self.params)})"
            )
        if (self.unit is None) != (self.unit_count is None):
            raise ValueError(f"benchmark {self.name}: give both unit and unit_count, or neither")

    @property
    def sides(self) -> tuple[Side, ...]:
        """The sides measured, in order."""
        return (Side.LAMINA,) if self.lamina_only else tuple(Side)

    @property
    def doc(self) -> str:
        """The first line of the setup function's docstring."""
        lines = (self.setup.__doc__ or "").strip().splitlines()
        return lines[0] if lines else ""

    def cases(self) -> tuple[Case, ...]:
        """One case per combination of parameter values, in declaration order."""
        keys = tuple(self.params)
        return tuple(
            Case(self, MappingProxyType(dict(zip(keys, values, strict=True))))
            for values in itertools.product(*self.params.values())
        )


@dataclass(frozen=True, slots=True)
class Case:
    """One benchmark with one value for each parameter."""

    benchmark: Benchmark
    params: Mapping[str, ParamValue]

    @property
    def id(self) -> str:
        """`name[key=value,...]`, or just the name when there are no parameters."""
        if not self.params:
            return self.benchmark.name
        inner = ",".join(f"{key}={value}" for key, value in self.params.items())
        return f"{self.benchmark.name}[{inner}]"

    @property
    def units(self) -> int | None:
        """How many units one call processes, or None when the benchmark declares none."""
        count = self.benchmark.unit_count
        if count is None:
            return None
        value = self.params[count] if isinstance(count, str) else count(**self.params)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{self.id}: unit_count must be a positive int, got {value!r}")
        return value

    def prepare(self, side: Side) -> Timed:
        """Run the side's setup (untimed) and return the callable to time."""
        return self.benchmark.setup(side, **self.params)


class Registry:
    """Benchmarks by name; written by `@benchmark` when suite modules are imported."""

    def __init__(self) -> None:
        self._benchmarks: dict[str, Benchmark] = {}

    def add(self, bench: Benchmark) -> None:
        if bench.name in self._benchmarks:
            raise ValueError(f"benchmark {bench.name!r} is registered twice")
        self._benchmarks[bench.name] = bench

    def __iter__(self) -> Iterator[Benchmark]:
        return iter(sorted(self._benchmarks.values(), key=lambda b: b.name))

    def __len__(self) -> int:
        return len(self._benchmarks)

    def __contains__(self, name: object) -> bool:
        return name in self._benchmarks

    def select(self, patterns: Sequence[str]) -> list[Case]:
        """The cases that `patterns` name, in registry order; every case when there are none.

        A pattern is a case id (`make_jaxpr.chain[n=100]`), a benchmark name, a dotted prefix
        (`make_jaxpr` selects `make_jaxpr.*`), or an `fnmatch` glob over names.

        Raises:
            KeyError: a pattern matches nothing.
        """
        every = [case for bench in self for case in bench.cases()]
        if not patterns:
            return every
        chosen: set[str] = set()
        for pattern in patterns:
            matched = [case.id for case in every if _matches(pattern, case)]
            if not matched:
                raise KeyError(f"no benchmark matches {pattern!r}; `--list` shows them")
            chosen.update(matched)
        return [case for case in every if case.id in chosen]


def _matches(pattern: str, case: Case) -> bool:
    name = case.benchmark.name
    if pattern in (case.id, name) or name.startswith(pattern + "."):
        return True
    return "[" not in pattern and fnmatch.fnmatchcase(name, pattern)


REGISTRY: Final = Registry()
"""The process's benchmarks; `discover` fills it from `tools/bench/suites/`."""


def benchmark(
    name: str,
    *,
    params: Mapping[str, Sequence[ParamValue]] | None = None,
    unit: str | None = None,
    unit_count: UnitCount | None = None,
    devices: int = 1,
    lamina_only: bool = False,
    registry: Registry = REGISTRY,
) -> Callable[[Setup], Setup]:
    """Register `setup(side, **params) -> Timed` as the benchmark `name`.

    Args:
        name: dotted name, `<suite>.<what>`.
        params: values for each keyword parameter of `setup`; one case per combination.
        unit: what one call processes many of (`eqn`, `leaf`), for a time-per-unit column.
        unit_count: the parameter that counts those units, or a function of the parameters.
        devices: how many CPU devices it needs (sharded programs); the CLI sets
            `--xla_force_host_platform_device_count` before the XLA backend starts.
        lamina_only: JAX has no counterpart; `setup` is called for `Side.LAMINA` only.
        registry: where to register; tests pass their own.

    Returns:
        A decorator that registers the function and returns it unchanged.
    """

    def register(setup: Setup) -> Setup:
        grid = {key: tuple(values) for key, values in (params or {}).items()}
        registry.add(
            Benchmark(
                name=name,
                setup=setup,
                params=MappingProxyType(grid),
                unit=unit,
                unit_count=unit_count,
                devices=devices,
                lamina_only=lamina_only,
            )
        )
        return setup

    return register


def discover(package: str = "tools.bench.suites") -> Registry:
    """Import every module under `package`, registering its benchmarks; return `REGISTRY`."""
    root = importlib.import_module(package)
    for info in sorted(pkgutil.walk_packages(root.__path__, f"{package}."), key=lambda m: m.name):
        importlib.import_module(info.name)
    return REGISTRY
