"""Every core primitive has a lowering rule: the pipeline must never meet one without.

The set of core primitives is whatever core registers an abstract evaluation rule for, so a
primitive added to lamina-core without a rule here fails this test by name.
"""

from __future__ import annotations

import lamina_core
import lamina_mlir
from lamina_core.rules import abstract_eval_rules


def test_every_core_primitive_has_a_lowering_rule() -> None:
    assert lamina_core.lax is not None  # the lax families register their primitives on import
    missing = sorted(p.name for p in abstract_eval_rules if p not in lamina_mlir.lowering_rules)
    assert missing == [], f"primitives without a lowering rule: {missing}"


def test_lowering_rules_are_only_for_known_primitives() -> None:
    unknown = sorted(p.name for p in lamina_mlir.lowering_rules if p not in abstract_eval_rules)
    assert unknown == []
