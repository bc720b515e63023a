"""The monorepo's packages, read from `packages/*/pyproject.toml`.

This is the one place that knows which distributions exist and how they depend on each other;
the noxfile, the size report and the showcase derive their lists from it. The layer order is
the topological order of the sibling dependencies, lowest first, so it always agrees with the
pins (the import-linter contract checks the same order on imports).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGES_DIR: Final = ROOT / "packages"

_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True, slots=True)
class Distribution:
    """One installable package of the monorepo."""

    name: str
    """The distribution name, e.g. `lamina-core`."""
    import_name: str
    """The top-level import package, e.g. `lamina_core`."""
    version: str
    siblings: tuple[str, ...]
    """The distributions of this monorepo that this one depends on directly."""

    @property
    def path(self) -> Path:
        return PACKAGES_DIR / self.name

    @property
    def src(self) -> Path:
        return self.path / "src" / self.import_name

    @property
    def tests(self) -> Path:
        return self.path / "tests"


def _requirement_name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    if match is None:
        raise ValueError(f"cannot parse requirement {requirement!r}")
    return match.group(1).lower().replace("_", "-")


@cache
def distributions() -> tuple[Distribution, ...]:
    """Every distribution under `packages/`, lowest layer first."""
    found: dict[str, tuple[str, str, list[str]]] = {}
    for pyproject in sorted(PACKAGES_DIR.glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        name = project["name"]
        deps = [_requirement_name(r) for r in project.get("dependencies", [])]
        found[name] = (project["version"], name.replace("-", "_"), deps)
    ordered: list[Distribution] = []
    placed: set[str] = set()
    while len(ordered) < len(found):
        ready = sorted(
            name
            for name, (_, _, deps) in found.items()
            if name not in placed and all(d in placed for d in deps if d in found)
        )
        if not ready:
            raise RuntimeError(f"dependency cycle among {sorted(set(found) - placed)}")
        # Several ready at once would make the order ambiguous; the layers are a chain.
        for name in ready:
            version, import_name, deps = found[name]
            siblings = tuple(d for d in deps if d in found)
            ordered.append(Distribution(name, import_name, version, siblings))
            placed.add(name)
    return tuple(ordered)


def by_name(name: str) -> Distribution:
    for dist in distributions():
        if dist.name == name:
            return dist
    raise KeyError(f"no distribution named {name!r}; have {[d.name for d in distributions()]}")


def local_closure(name: str) -> list[str]:
    """`name` and every sibling it needs, transitively, lowest layer first."""
    needed: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        if current not in needed:
            needed.add(current)
            stack.extend(by_name(current).siblings)
    return [d.name for d in distributions() if d.name in needed]


PACKAGES: Final = [d.name for d in distributions()]
IMPORT_NAMES: Final = [d.import_name for d in distributions()]
