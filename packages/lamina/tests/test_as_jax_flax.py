"""flax (linen and nnx) and numpyro under `lamina.as_jax`: what they reach past Lamina's public
API at import (`jax.extend.source_info_util`, `jax.experimental.layout`, the hijax names of
mutable hi types, and the private paths `jax._src.core`, `checkify`, `state.types`,
`tree_util` and `dtypes`, served by Lamina's stand-ins), each compared with JAX; then small
programs run on both, in child processes: a linen MLP and an nnx MLP (init, apply, jit, grad,
an optax step) and numpyro's distributions, SVI and NUTS, whose values must be JAX's.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax
import jax.extend.source_info_util as jax_source_info_util
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax._src import core as jax_core
from jax._src import dtypes as jax_dtypes
from jax._src import tree_util as jax_tree_util

import lamina
import lamina.as_jax
import lamina.numpy as lnp
from lamina.as_jax import _private
from lamina.extend import source_info_util

pytestmark = pytest.mark.oracle


@contextlib.contextmanager
def _installed() -> Iterator[None]:
    lamina.as_jax.install()
    try:
        yield
    finally:
        lamina.as_jax.uninstall()


def _run_as_user(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "as_jax_user_code"}
    exec(compile(textwrap.dedent(source), "<as_jax user code>", "exec"), namespace)
    return namespace


def test_the_new_private_paths_are_lamina_s_stand_ins_with_jax_s_names() -> None:
    with _installed():
        ns = _run_as_user("""
            from jax._src import checkify, core, dtypes
            from jax._src.state.types import AbstractRef
            from jax._src.tree_util import _registry
            import jax._src.state.types
            import jax
            state_types = jax._src.state.types
        """)
    assert ns["core"] is _private.core
    assert ns["checkify"] is _private.checkify
    assert ns["dtypes"] is _private.dtypes
    assert ns["state_types"] is _private.state_types
    assert ns["AbstractRef"] is lamina.experimental.hijax.AbstractRef
    assert ns["_registry"] is _private.tree_util._registry
    for module, real in (
        (_private.core, jax_core),
        (_private.checkify, importlib.import_module("jax._src.checkify")),
        (_private.dtypes, jax_dtypes),
        (_private.state_types, importlib.import_module("jax._src.state.types")),
    ):
        missing = [n for n in module.__all__ if not hasattr(real, n)]
        assert missing == [], module.__name__


def test_jax_s_version_is_the_release_lamina_implements_while_the_alias_is_on() -> None:
    own = lamina.__version__, lamina.__version_info__
    with _installed():
        ns = _run_as_user("""
            import jax
            import jax.version
            versions = (jax.__version__, jax.__version_info__, jax.version.__version_info__)
        """)
    assert ns["versions"] == (jax.__version__, jax.__version_info__, jax.__version_info__)
    assert (lamina.__version__, lamina.__version_info__) == own
    assert (lamina.version.__version__, lamina.version.__version_info__) == own


def test_trace_state_clean_is_jax_s_outside_and_inside_transformations() -> None:
    def states(lib: Any, clean: Any) -> list[bool]:
        seen = [clean()]

        def record(x: Any) -> Any:
            seen.append(clean())
            return x

        lib.jit(record)(1.0)
        lib.vmap(record)(lib.numpy.ones(2))
        lib.grad(record)(1.0)
        return seen

    assert states(lamina, _private.core.trace_state_clean) == states(
        jax, jax_core.trace_state_clean
    )


def test_the_registry_lists_the_node_types_jax_s_does() -> None:
    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    for lib in (jax, lamina):
        lib.tree_util.register_pytree_node(
            Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c)
        )
    import collections

    Point = collections.namedtuple("Point", "x y")
    for node_type in (tuple, list, dict, type(None), collections.OrderedDict, Pair, Point, int):
        assert (node_type in _private.tree_util._registry) == (
            node_type in jax_tree_util._registry
        ), node_type
    children, aux = _private.tree_util._registry[Pair].to_iter(Pair(1, 2))
    assert (tuple(children), aux) == ((1, 2), None)
    ordered = collections.OrderedDict(b=1, a=2)
    entry = _private.tree_util._registry[collections.OrderedDict]
    assert entry.from_iter(*reversed(entry.to_iter(ordered))) == ordered


def test_dtypes_extended_is_jax_s_scalar_type_and_supports_inf_is_jax_s() -> None:
    assert lnp.issubdtype(lamina.random.key(0).dtype, lamina.dtypes.extended)
    assert jnp.issubdtype(jax.random.key(0).dtype, jax.dtypes.extended)
    assert issubclass(lamina.dtypes.prng_key, lamina.dtypes.extended)
    assert not lnp.issubdtype(lnp.float32, lamina.dtypes.extended)
    floats8 = (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3b11fnuz)
    for dtype in (np.float32, np.int8, np.complex64, np.bool_, ml_dtypes.bfloat16, *floats8):
        assert _private.dtypes.supports_inf(dtype) == jax_dtypes.supports_inf(dtype), dtype


def test_source_info_util_has_jax_s_names_and_its_exclusions_move_attribution(
    tmp_path: Path,
) -> None:
    assert all(hasattr(jax_source_info_util, n) for n in source_info_util.__all__)
    library = tmp_path / "a_library_module.py"
    library.write_text("def double(x):\n    return x * 2.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import a_library_module  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))

    def call(x: Any) -> Any:
        return a_library_module.double(x)

    def summaries() -> tuple[str, str]:
        lam = lamina.make_jaxpr(call)(1.0)
        real = jax.make_jaxpr(call)(1.0)
        return (
            source_info_util.summarize(lam.jaxpr.eqns[0].source_info),
            jax_source_info_util.summarize(real.jaxpr.eqns[0].source_info),
        )

    before = summaries()
    assert before[0] == before[1] == f"{library}:2:11 (double)"
    source_info_util.register_exclusion(str(library))
    jax_source_info_util.register_exclusion(str(library))
    after = summaries()
    assert after[0] == after[1]
    assert after[0].startswith(f"{__file__}:") and after[0].endswith(".call)")
    assert isinstance(source_info_util.current(), source_info_util.SourceInfo)


# ---- flax and numpyro, in child processes: under the alias and on real JAX ------------------

PROGRAM = """
import sys
import numpy as np
import jax
import jax.numpy as jnp
import optax
import flax.linen as nn
from flax import nnx
import numpyro
import numpyro.distributions as dist
import numpyro.optim
from numpyro.infer import MCMC, NUTS, SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

out = {}
x = jnp.linspace(-1.0, 1.0, 12, dtype=jnp.float32).reshape(4, 3)
y = jnp.array([[0.5], [-0.25], [1.0], [0.0]], jnp.float32)


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(5)(x)))


model = MLP()
params = model.init(jax.random.key(0), x)
out["linen_apply"] = model.apply(params, x)
out["linen_jit"] = jax.jit(model.apply)(params, x)


def loss(params):
    return jnp.mean((model.apply(params, x) - y) ** 2)


value, grads = jax.jit(jax.value_and_grad(loss))(params)
out["linen_loss"] = value
for i, g in enumerate(jax.tree.leaves(grads)):
    out[f"linen_grad{i}"] = g
tx = optax.adam(0.05)
updates, _ = tx.update(grads, tx.init(params), params)
out["linen_after_step"] = loss(optax.apply_updates(params, updates))


class NnxMLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(3, 5, rngs=rngs)
        self.l2 = nnx.Linear(5, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.l1(x)))


m = NnxMLP(nnx.Rngs(0))
out["nnx_apply"] = m(x)
out["nnx_jit"] = nnx.jit(lambda m, x: m(x))(m, x)


def nnx_loss(m):
    return jnp.mean((m(x) - y) ** 2)


nvalue, ngrads = nnx.value_and_grad(nnx_loss)(m)
out["nnx_loss"] = nvalue
for i, g in enumerate(jax.tree.leaves(nnx.state(ngrads))):
    out[f"nnx_grad{i}"] = g
opt = nnx.Optimizer(m, optax.sgd(0.1), wrt=nnx.Param)


@nnx.jit
def train_step(m, opt):
    l, g = nnx.value_and_grad(nnx_loss)(m)
    opt.update(m, g)
    return l


out["nnx_step_loss"] = train_step(m, opt)
out["nnx_after_step"] = nnx_loss(m)

t = jnp.linspace(-1.0, 1.0, 8)
obs = 0.7 * t - 0.2 + jnp.array([0.1, -0.05, 0.02, 0.0, -0.1, 0.07, 0.03, -0.02])


def regression(t, obs=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    s = numpyro.sample("s", dist.HalfNormal(1.0))
    numpyro.sample("obs", dist.Normal(w * t + b, s), obs=obs)


out["normal_log_prob"] = dist.Normal(0.5, 2.0).log_prob(t)
out["gamma_sample"] = dist.Gamma(2.0, 1.5).sample(jax.random.key(1), (3,))
guide = AutoNormal(regression)
svi = SVI(regression, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.key(2), 20, t, obs, progress_bar=False)
out["svi_losses"] = result.losses
for k, v in sorted(result.params.items()):
    out["svi_" + k] = v
predictive = Predictive(regression, guide=guide, params=result.params, num_samples=4)
out["predicted"] = predictive(jax.random.key(4), t)["obs"]
mcmc = MCMC(NUTS(regression), num_warmup=30, num_samples=30, progress_bar=False)
mcmc.run(jax.random.key(5), t, obs)
for k, v in sorted(mcmc.get_samples().items()):
    out["nuts_" + k] = v
np.savez(sys.argv[1], **{k: np.asarray(v) for k, v in out.items()})
print(jax.__name__, type(out["nnx_after_step"]).__module__, type(out["svi_losses"]).__module__)
"""


def _child(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=environ, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.skipif(
    any(importlib.util.find_spec(n) is None for n in ("flax", "numpyro", "optax")),
    reason="flax, numpyro or optax is not installed",
)
def test_flax_and_numpyro_programs_give_jax_s_values(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    on_lamina = _child(["-m", "lamina.as_jax", str(script), "lamina.npz"], tmp_path)
    on_jax = _child([str(script), "jax.npz"], tmp_path)
    assert on_jax.returncode == 0, on_jax.stderr
    assert on_lamina.returncode == 0, on_lamina.stderr
    assert on_lamina.stdout.split() == ["lamina", "lamina_runtime.array", "lamina_runtime.array"]
    assert on_jax.stdout.split()[0] == "jax"
    with np.load(tmp_path / "lamina.npz") as lam, np.load(tmp_path / "jax.npz") as real:
        assert sorted(lam) == sorted(real)
        for name in real:
            assert lam[name].dtype == real[name].dtype, name
            np.testing.assert_allclose(lam[name], real[name], rtol=1e-5, atol=1e-6, err_msg=name)
