"""The downstream suites: which library, which version, what its tests need, where they are."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    test_requirements: tuple[str, ...]
    """What the shipped tests import beyond the library's own dependencies (its `test` extra)."""

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def folder(self) -> str:
        """The source distribution's top folder, as it unpacks."""
        return f"{self.name}-{self.version}"


SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        # optax's `test` extra: flax, scipy, scikit-learn (3 test files use flax).
        Suite("optax", "0.2.8", ("flax", "scipy", "scikit-learn")),
        # chex's `test` extra: cloudpickle, dm-tree.
        Suite("chex", "0.1.92", ("cloudpickle>=3.1.2", "dm-tree>=0.1.9")),
    )
}
