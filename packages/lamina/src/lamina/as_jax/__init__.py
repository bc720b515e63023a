"""Run programs and libraries written for JAX on Lamina, unchanged: `jax` means `lamina`.

    python -m lamina.as_jax SCRIPT [ARGS...]       python -m lamina.as_jax -m MODULE [ARGS...]
    pytest -p lamina.as_jax [PYTEST ARGS...]       lamina.as_jax.install() / uninstall()

One mechanism behind the three: with the alias installed, `import jax` is `lamina` and
`import jax.X` is `lamina.X` (`sys.modules["jax.numpy"] is lamina.numpy`). It is strict: a
`jax.X` Lamina lacks raises `ModuleNotFoundError` naming it, never real JAX's module in its
place. `jaxlib` stays jaxlib, and Lamina's own runtime keeps real JAX's runtime pieces
(docs/as-jax.md says how).
"""

from __future__ import annotations

from lamina.as_jax._alias import install, is_installed, uninstall

__all__ = ["install", "is_installed", "uninstall"]

_installed_by_pytest = False


def pytest_load_initial_conftests(early_config: object, parser: object, args: list[str]) -> None:
    """`pytest -p lamina.as_jax`: the alias goes in before any conftest.py or test module is
    imported (pytest calls this hook for the plugins named on its command line)."""
    global _installed_by_pytest
    _installed_by_pytest = not is_installed()
    install()


def pytest_unconfigure(config: object) -> None:
    """The end of the pytest run: the alias the plugin installed goes."""
    global _installed_by_pytest
    if _installed_by_pytest:
        uninstall()
        _installed_by_pytest = False
