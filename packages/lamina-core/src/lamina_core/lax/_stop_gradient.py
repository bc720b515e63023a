"""`stop_gradient` in `lax`, where JAX's users find it.

The primitive and its rules live in `transforms._stop_gradient`, below `custom_derivatives`,
which binds it too.
"""

from __future__ import annotations

from lamina_core.transforms import stop_gradient, stop_gradient_p

__all__ = ["stop_gradient", "stop_gradient_p"]
