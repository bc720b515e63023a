"""`jax.stages`: the stages of a jitted function (traced, lowered, compiled) as their types."""

from typing import Any, Protocol, TypeAlias, runtime_checkable

from lamina_runtime import ArgInfo, Compiled, Lowered, Traced

CompilerOptions: TypeAlias = dict[str, str | bool]


@runtime_checkable
class Wrapped(Protocol):
    """What `lamina.jit` returns: callable, and traceable and lowerable ahead of a call."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...


__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
