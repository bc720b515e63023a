"""The interfaces of `lamina_core.numpy` and `lamina_core.lax`: their spelled-out `__all__` is
the union of their families' `__all__`, and no name other layers use shadows a public one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

import lamina_core.lax
import lamina_core.numpy


def star_imported(package: ModuleType) -> list[ModuleType]:
    """The modules `package`'s `__init__` star-imports (its families)."""
    assert package.__file__ is not None
    source = Path(package.__file__).read_text()
    names = re.findall(rf"^from ({re.escape(package.__name__)}\.\w+) import \*", source, re.M)
    return [importlib.import_module(name) for name in names]


EXTRA = {
    "lamina_core.numpy": {"Array", "ArrayLike", "DTypeLike", "e", "inf", "nan", "pi"},
    # Control flow's user functions and primitives, not its `bind_*` helpers.
    "lamina_core.lax": {
        name for name in lamina_core.lax.control_flow.__all__ if not name.startswith("bind")
    },
}


@pytest.mark.parametrize("package", [lamina_core.numpy, lamina_core.lax], ids=lambda m: m.__name__)
def test_all_is_the_union_of_the_families(package: ModuleType) -> None:
    families = star_imported(package)
    assert families
    expected = set().union(*(family.__all__ for family in families)) | EXTRA[package.__name__]
    assert sorted(package.__all__) == sorted(expected)
    assert len(package.__all__) == len(set(package.__all__))


@pytest.mark.parametrize("package", [lamina_core.numpy, lamina_core.lax], ids=lambda m: m.__name__)
def test_each_public_name_is_its_familys(package: ModuleType) -> None:
    for family in star_imported(package):
        for name in family.__all__:
            assert getattr(package, name) is getattr(family, name), f"{package.__name__}.{name}"
