"""`jax.test_util`'s numerical derivative checks: `import lamina.test_util`."""

from lamina_core.testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
