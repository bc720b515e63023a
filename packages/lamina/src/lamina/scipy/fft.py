"""`lamina.scipy.fft`: discrete cosine transforms, as `jax.scipy.fft` (see
`lamina_core.scipy.fft`)."""

from lamina_core.scipy.fft import dct, dctn, idct, idctn

__all__ = ["dct", "dctn", "idct", "idctn"]
