"""`jax._src.state` under `lamina.as_jax`: only the package of `types`; the path itself is not
served."""
