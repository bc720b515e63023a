"""API coverage: which of JAX 0.10.2's public names Lamina has, module by module.

`python -m tools.api_coverage` prints one line per module (names present of JAX's, the
percentage) and, with `--missing`, the names Lamina lacks. `--write PATH` writes the same
report as the Markdown page the docs carry (`docs/api-coverage.md`); a test keeps that page
equal to what this tool prints, so the docs never claim more (or less) than the code has.

A public name is one `dir(module)` lists without a leading underscore; submodules count as
names of their parent (`jax.numpy.fft` is a name of `jax.numpy`), as users reach them so. The
exception is `ONLY_IMPORTED`: names a few of JAX's modules bind only because their code
imports them (other modules, helpers of `jax._src`), listed by name and checked to be defined
elsewhere, so that nothing a module defines can be left out of its count.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

MODULES = (
    "",
    "numpy",
    "numpy.linalg",
    "numpy.fft",
    "lax",
    "lax.linalg",
    "nn",
    "nn.initializers",
    "random",
    "scipy.special",
    "scipy.linalg",
    "scipy.stats",
    "tree",
    "tree_util",
    "custom_derivatives",
    "dtypes",
    "errors",
    "debug",
    "experimental.hijax",
    "export",
    "experimental.checkify",
    "core",
    "extend",
    "extend.core",
    "extend.core.primitives",
    "extend.linear_util",
    "extend.mlir",
    "extend.backend",
    "extend.random",
    "interpreters",
    "interpreters.ad",
    "interpreters.batching",
    "interpreters.mlir",
    "interpreters.partial_eval",
    "stages",
    "ops",
    "image",
    "scipy.fft",
    "scipy.signal",
    "sharding",
    "flatten_util",
    "ad_checkpoint",
    "scipy.ndimage",
    "scipy.optimize",
    "scipy.integrate",
    "scipy.interpolate",
    "scipy.cluster",
    "scipy.sparse",
    "experimental.jet",
    "experimental.ode",
    "experimental.sparse",
    "experimental.multihost_utils",
    "experimental.mesh_utils",
    "experimental.compilation_cache",
    "experimental.custom_partitioning",
)
"""Modules below `jax` / `lamina` compared ("" is the top level)."""


ONLY_IMPORTED: dict[str, frozenset[str]] = {
    "experimental.ode": frozenset(
        [
            "api_util",
            "core",
            "custom_derivatives",
            "jax",
            "lu",
            "map",
            "op",
            "safe_map",
            "safe_zip",
            "tree_leaves",
            "tree_map",
            "zip",
        ]
    ),
    "experimental.multihost_utils": frozenset(
        [
            "P",
            "ad",
            "array",
            "batching",
            "core",
            "distributed",
            "dtypes",
            "jax",
            "jnp",
            "lru_cache",
            "mlir",
            "partial",
            "pjit_lib",
            "prng",
            "pxla",
            "safe_zip",
            "sharding_impls",
            "tree_flatten",
            "tree_unflatten",
            "xla_bridge",
            "xla_client",
        ]
    ),
    "experimental.jet": frozenset(
        [
            "Any",
            "Callable",
            "ad_util",
            "api_util",
            "core",
            "dispatch",
            "jnp",
            "lax",
            "lax_internal",
            "lu",
            "np",
            "partial",
            "pe",
            "pjit",
            "register_pytree_node",
            "safe_zip",
            "sharding_impls",
            "tree_flatten",
            "tree_structure",
            "tree_unflatten",
            "treedef_is_leaf",
            "unzip2",
            "weakref_lru_cache",
        ]
    ),
}
"""Per module, the public-looking names JAX's module has only because its implementation
imports them (`from jax._src import core`, `from functools import partial`): not its API, and
not counted. `imported_elsewhere` checks each one against JAX."""


def imported_elsewhere(module: ModuleType, name: str) -> bool:
    """Whether `module.name` is a module, or an object another module defines (so `module` has
    it only by importing it)."""
    value = getattr(module, name)
    if isinstance(value, ModuleType):
        return True
    home = getattr(value, "__module__", None)
    return isinstance(home, str) and home != module.__name__


@dataclass(frozen=True)
class ModuleCoverage:
    name: str
    jax_names: frozenset[str]
    missing: tuple[str, ...]
    absent: bool
    """Lamina has no such module at all."""

    @property
    def present(self) -> int:
        return len(self.jax_names) - len(self.missing)

    @property
    def percent(self) -> float:
        return 100.0 * self.present / len(self.jax_names) if self.jax_names else 100.0


def _import(root: str, name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"{root}.{name}" if name else root)
    except ImportError:
        return None


def _public(module: ModuleType, only_imported: frozenset[str] = frozenset()) -> frozenset[str]:
    return frozenset(n for n in dir(module) if not n.startswith("_") and n not in only_imported)


def measure(modules: tuple[str, ...] = MODULES) -> list[ModuleCoverage]:
    report = []
    for name in modules:
        theirs = _import("jax", name)
        if theirs is None:
            raise RuntimeError(f"jax.{name} does not import: is JAX 0.10.2 installed?")
        jax_names = _public(theirs, ONLY_IMPORTED.get(name, frozenset()))
        ours = _import("lamina", name)
        have = _public(ours) if ours is not None else frozenset()
        missing = tuple(sorted(jax_names - have))
        report.append(ModuleCoverage(name, jax_names, missing, ours is None))
    return report


def _label(name: str) -> str:
    return f"jax.{name}" if name else "jax"


def render_text(report: list[ModuleCoverage], *, missing: bool) -> str:
    lines = []
    for m in report:
        status = "  (no module)" if m.absent else ""
        lines.append(
            f"{_label(m.name):24} {m.present:4d} / {len(m.jax_names):4d}  {m.percent:5.1f}%{status}"
        )
        if missing and m.missing:
            lines.append("    missing: " + ", ".join(m.missing))
    return "\n".join(lines) + "\n"


def render_markdown(report: list[ModuleCoverage]) -> str:
    out = [
        "# API coverage",
        "",
        "Which of JAX 0.10.2's public names Lamina has, module by module. This page is generated",
        "by `python -m tools.api_coverage --write docs/api-coverage.md` and checked against the",
        "code in CI; a name listed as missing raises `AttributeError` in Lamina.",
        "",
        "| Module | Lamina has | of JAX's | % |",
        "| --- | ---: | ---: | ---: |",
    ]
    for m in report:
        label = f"`{_label(m.name)}`" + (" (no module yet)" if m.absent else "")
        out.append(f"| {label} | {m.present} | {len(m.jax_names)} | {m.percent:.1f} |")
    out += [
        "",
        "Not counted: names these modules of JAX's have only because their code imports them",
        "(other modules, helpers of `jax._src`, the standard library); each is checked to be",
        "defined elsewhere.",
        "",
    ]
    for name, names in ONLY_IMPORTED.items():
        out.append(f"- `{_label(name)}`: " + ", ".join(f"`{n}`" for n in sorted(names)))
    out += ["", "## Missing names", ""]
    for m in report:
        if not m.missing:
            continue
        out += [f"### `{_label(m.name)}`", "", ", ".join(f"`{n}`" for n in m.missing), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.api_coverage", description=__doc__)
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--write", type=Path, help="write the Markdown report to this file")
    args = parser.parse_args(argv)
    report = measure()
    if args.write is not None:
        args.write.write_text(render_markdown(report))
    sys.stdout.write(render_text(report, missing=args.missing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
