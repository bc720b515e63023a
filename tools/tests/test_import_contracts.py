"""The interfaces contract, on small import graphs, and the repository's own contracts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from grimp import ImportGraph

from tools.import_contracts import InterfacesContract
from tools.workspace import ROOT

MODULES = (
    "lamina_core",
    "lamina_core.lax",
    "lamina_core.lax._elementwise",
    "lamina_core.lax.linalg",
    "lamina_core.ir",
    "lamina_core.ir._avals",
    "lamina_core.numpy",
    "lamina_core.numpy.fft",
    "lamina_core.numpy._ufuncs",
    "lamina_mlir",
    "lamina_mlir._rules",
)


def graph_with(*imports: tuple[str, str]) -> ImportGraph:
    graph = ImportGraph()
    for module in MODULES:
        graph.add_module(module)
    for importer, imported in imports:
        graph.add_import(
            importer=importer, imported=imported, line_number=3, line_contents="from x import y"
        )
    return graph


def violations(graph: ImportGraph) -> list[tuple[str, str]]:
    contract = InterfacesContract(
        name="interfaces",
        session_options={},
        contract_options={
            "packages": ["lamina_core", "lamina_mlir"],
            "split": ["lamina_core"],
            "public_modules": ["lamina_core.numpy.fft", "lamina_core.lax.linalg*"],
        },
    )
    check = contract.check(graph, verbose=False)
    found = [(v.importer, v.imported) for v in check.metadata["violations"]]
    assert check.kept == (not found)
    return found


def test_another_package_may_import_a_subpackage_interface() -> None:
    assert violations(graph_with(("lamina_mlir._rules", "lamina_core.lax"))) == []


def test_another_package_may_not_import_a_private_module() -> None:
    graph = graph_with(("lamina_mlir._rules", "lamina_core.lax._elementwise"))
    assert violations(graph) == [("lamina_mlir._rules", "lamina_core.lax._elementwise")]


def test_a_subpackage_may_not_reach_into_another() -> None:
    graph = graph_with(("lamina_core.numpy._ufuncs", "lamina_core.ir._avals"))
    assert violations(graph) == [("lamina_core.numpy._ufuncs", "lamina_core.ir._avals")]


def test_inside_one_subpackage_any_module_may_be_imported() -> None:
    assert violations(graph_with(("lamina_core.numpy", "lamina_core.numpy._ufuncs"))) == []


def test_declared_public_modules_are_interfaces_too() -> None:
    graph = graph_with(
        ("lamina_mlir._rules", "lamina_core.numpy.fft"),
        ("lamina_mlir._rules", "lamina_core.lax.linalg"),
    )
    assert violations(graph) == []


def test_the_package_root_is_a_unit_of_its_own() -> None:
    graph = graph_with(("lamina_core", "lamina_core.ir._avals"), ("lamina_core", "lamina_core.ir"))
    assert violations(graph) == [("lamina_core", "lamina_core.ir._avals")]


def test_lint_imports_fails_on_an_import_of_a_core_module(tmp_path: Path) -> None:
    """The repository's own contracts, on a copy of lamina-mlir's sources given one import
    of a private core module (`lamina_core.lax._elementwise`)."""
    copy = tmp_path / "lamina_mlir"
    shutil.copytree(ROOT / "packages" / "lamina-mlir" / "src" / "lamina_mlir", copy)
    with (copy / "__init__.py").open("a") as init:
        init.write("\nfrom lamina_core.lax._elementwise import add_p as _add_p  # noqa\n")
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": str(Path(sys.executable).parent)}
    lint_imports = str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run(
        [lint_imports, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "lamina_mlir imports lamina_core.lax._elementwise" in done.stdout
