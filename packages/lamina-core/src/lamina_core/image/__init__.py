"""`jax.image` for Lamina: `resize`, `scale_and_translate` and `ResizeMethod`.

A library over `numpy` and `lax` (it defines no primitive): each spatial axis is resampled by a
weight matrix built from the method's kernel and contracted with `einsum`, as JAX 0.10.2 does,
so values match and `resize` (a `jit` with static shape, method, antialias and precision)
prints JAX's jaxpr.
"""

from lamina_core.image._scale import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
