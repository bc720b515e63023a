"""Every core primitive has a lowering rule: the pipeline must never meet one without.

The core primitives are the `Primitive` objects lamina-core's modules define (a primitive
added to lamina-core without a rule here fails this test by name). Test-only primitives that
other tests register in the same process are not core's and are not counted.

`lamina_core.sparse`'s primitives are lowered as JAX lowers them, through their lax
implementations (`mlir.lower_fun`), registered by `lamina.experimental.sparse` when it loads
(lamina-mlir importing the sparse package would put its 140 ms on every `import lamina`);
`packages/lamina/tests/test_sparse_formats.py` checks each has a rule once it is loaded.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

import lamina_core
import lamina_mlir
from lamina_core.ir._primitive import Primitive
from lamina_core.ir._rules import abstract_eval_rules


def core_primitives() -> set[Primitive]:
    found: set[Primitive] = set()
    for info in pkgutil.walk_packages(lamina_core.__path__, "lamina_core."):
        if info.name.startswith(("lamina_core.testing", "lamina_core.sparse")):
            continue
        module = import_module(info.name)
        found.update(v for v in vars(module).values() if isinstance(v, Primitive))
    return found


def test_core_primitives_are_found() -> None:
    names = {p.name for p in core_primitives()}
    assert {"add", "jit", "dot_general", "reduce_sum"} <= names


def test_every_core_primitive_has_a_lowering_rule() -> None:
    missing = sorted(p.name for p in core_primitives() if p not in lamina_mlir.lowering_rules)
    assert missing == [], f"primitives without a lowering rule: {missing}"


def test_lowering_rules_are_only_for_known_primitives() -> None:
    unknown = sorted(p.name for p in lamina_mlir.lowering_rules if p not in abstract_eval_rules)
    assert unknown == []
