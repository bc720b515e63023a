"""`EffectTypeSet`: JAX's set of effect classes (`lowerable_effects`,
`control_flow_allowed_effects`), kept apart so that `lamina.experimental.hijax` has it without
importing the lowering API at `import lamina`."""

from __future__ import annotations

from collections.abc import Iterable

from lamina_core.ir import Effect


class EffectTypeSet:
    """A set of effect classes; an effect is in it when it is an instance of one of them."""

    def __init__(self) -> None:
        self._effect_types: set[type[Effect]] = set()

    def __repr__(self) -> str:
        return f"EffectTypeSet({self._effect_types})"

    def add_type(self, effect_type: type[Effect]) -> None:
        self._effect_types.add(effect_type)

    def contains(self, eff: Effect) -> bool:
        return any(isinstance(eff, t) for t in self._effect_types)

    def filter_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if not self.contains(e)]
