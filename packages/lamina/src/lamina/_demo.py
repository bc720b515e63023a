"""The showcase: every layer's capability, run end to end. Each issue adds its part."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys

LAYERS = (
    ("lamina-core", "lamina_core"),
    ("lamina-consts", "lamina_consts"),
    ("lamina-mlir", "lamina_mlir"),
    ("lamina-hijax", "lamina_hijax"),
    ("lamina-refs", "lamina_refs"),
    ("lamina-runtime", "lamina_runtime"),
    ("lamina", "lamina"),
)


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 74 - len(title)))


def show_layers() -> None:
    section("installed layers")
    for dist, import_name in LAYERS:
        try:
            version = importlib.metadata.version(dist)
            module = importlib.import_module(import_name)
        except (importlib.metadata.PackageNotFoundError, ImportError) as err:
            print(f"  {dist:<16} not installed ({err})")
            continue
        summary = (module.__doc__ or "").strip().splitlines()[0]
        print(f"  {dist:<16} {version:<8} {summary}")


def run_demo() -> int:
    print(f"Lamina showcase (Python {sys.version.split()[0]})")
    show_layers()
    return 0
