"""A custom import-linter contract for imports of submodules of external packages.

import-linter's own `forbidden` contract sees an external package only as its top-level name
(`jax`), so it cannot tell `import jax.numpy` (JAX's tracing machinery, never allowed) from
`from jax import devices` in the runtime bridge (allowed). This contract finds the Lamina modules
that import a watched package through import-linter's graph, reads their source with `ast`, and
checks the full dotted names they import against prefix rules.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from grimp import ImportGraph
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


@dataclass(frozen=True, slots=True)
class _Violation:
    importer: str
    imported: str
    line: int
    reason: str


def _imported_names(source: str) -> Iterator[tuple[str, int]]:
    """Every dotted module path an import statement may bring in, with its line number.

    `from a import b` yields `a.b`: `b` may be a submodule, and treating it as one is the
    conservative reading (so `from jax import numpy` is caught as `jax.numpy`), while a named
    exception such as `jax.core.ShapedArray` can allow one name of a banned module.
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno


def _render_violations(check: ContractCheck) -> None:
    from importlinter.application import output

    for violation in check.metadata["violations"]:
        output.print_error(
            f"{violation.importer} imports {violation.imported} "
            f"(line {violation.line}): {violation.reason}",
            bold=False,
        )
        output.new_line()


def _strings(value: Any) -> list[str]:
    """A configured list field's values (import-linter's field classes are untyped)."""
    return [str(item) for item in value or []]


def _matches(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _judge(
    module: str,
    name: str,
    forbidden: list[str],
    restricted: list[str],
    allow_rules: list[tuple[str, ...]],
) -> str | None:
    for prefix in forbidden:
        if _matches(name, prefix):
            # A named exception more specific than the ban (one data type, say) is allowed.
            excepted = any(
                fnmatch.fnmatchcase(module, glob)
                and _matches(name, allowed_prefix)
                and len(allowed_prefix) > len(prefix)
                for glob, allowed_prefix in allow_rules
            )
            if not excepted:
                return f"{prefix} is forbidden everywhere in Lamina"
    for prefix in restricted:
        if _matches(name, prefix):
            allowed = any(
                fnmatch.fnmatchcase(module, glob) and _matches(name, allowed_prefix)
                for glob, allowed_prefix in allow_rules
            )
            return None if allowed else f"only the modules named in `allow` may import {prefix}"
    return None


class ExternalImportsContract(Contract):
    """Forbid imports of external modules by dotted prefix, with named exceptions.

    Configuration options:
        - source_modules: the Lamina packages to check (their submodules included).
        - forbidden: dotted prefixes no source module may import (`jax._src`, `jax.numpy`).
        - restricted: dotted prefixes only the modules named in `allow` may import (`jax`).
        - allow: `importer-glob -> prefix` pairs: the importers matching the glob may import
          names under the prefix; a pair whose prefix is more specific than a `forbidden`
          prefix is a named exception to that ban.
    """

    type_name = "external_imports"

    source_modules = fields.ListField(subfield=fields.StringField())
    forbidden = fields.ListField(subfield=fields.StringField())
    restricted = fields.ListField(subfield=fields.StringField())
    allow = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        forbidden, restricted = _strings(self.forbidden), _strings(self.restricted)
        allow_rules = [
            tuple(part.strip() for part in rule.split("->")) for rule in _strings(self.allow)
        ]
        watched = {prefix.split(".")[0] for prefix in [*forbidden, *restricted]}
        violations: list[_Violation] = []
        for root in _strings(self.source_modules):
            for module in sorted({root, *graph.find_descendants(root)}):
                imported = graph.find_modules_directly_imported_by(module)
                if not imported & watched:
                    continue
                spec = importlib.util.find_spec(module)
                if spec is None or spec.origin is None:
                    continue
                with open(spec.origin, encoding="utf-8") as source:
                    text = source.read()
                for name, line in _imported_names(text):
                    reason = _judge(module, name, forbidden, restricted, allow_rules)
                    if reason is not None:
                        violations.append(_Violation(module, name, line, reason))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        _render_violations(check)


def _unit(module: str, split: tuple[str, ...]) -> str:
    """The unit `module` belongs to: a package, or for a package in `split`, its direct child
    (`lamina_core.ir._avals` -> `lamina_core.ir`; the package's own `__init__` is a unit)."""
    parts = module.split(".")
    if parts[0] in split and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


class InterfacesContract(Contract):
    """Units import each other only through their interfaces.

    A unit is a package, or, for the packages named in `split`, each of its direct
    subpackages (and its own `__init__`). A unit's interface is its `__init__` and the modules
    named in `public_modules`; anything else (a `_private` module, an implementation module)
    may be imported only from inside its own unit.

    Configuration options:
        - packages: the packages whose imports of each other are checked.
        - split: the packages whose direct subpackages are units of their own.
        - public_modules: modules other than a unit's `__init__` that are part of its
          interface (JAX's public submodules such as `lamina_core.numpy.fft`); globs allowed.
    """

    type_name = "interfaces"

    packages = fields.ListField(subfield=fields.StringField())
    split = fields.ListField(subfield=fields.StringField(), required=False)
    public_modules = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        packages = _strings(self.packages)
        split = tuple(_strings(self.split))
        public = set(_strings(self.public_modules))
        ours = {m for root in packages for m in {root, *graph.find_descendants(root)}}
        violations: list[_Violation] = []
        for module in sorted(ours):
            unit = _unit(module, split)
            for imported in sorted(graph.find_modules_directly_imported_by(module) & ours):
                target_unit = _unit(imported, split)
                if target_unit == unit or imported == target_unit:
                    continue
                if any(fnmatch.fnmatchcase(imported, pattern) for pattern in public):
                    continue
                details = graph.get_import_details(importer=module, imported=imported)
                line = min((int(d["line_number"]) for d in details), default=0)
                reason = f"import it from its interface, {target_unit}"
                violations.append(_Violation(module, imported, line, reason))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        _render_violations(check)
