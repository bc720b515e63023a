"""`lamina.example_libraries` against `jax.example_libraries` (issue 35, item 2): the same
public names, every optimizer and schedule stepping to JAX's numbers, their errors, state
packing, and `stax` networks with JAX's shapes, parameters and outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax.example_libraries import optimizers as _jax_optimizers
from jax.example_libraries import stax as j_stax

import lamina
from lamina.example_libraries import optimizers, stax

j_optimizers: Any = _jax_optimizers  # JAX leaves some of it unannotated


def _public(module: Any) -> set[str]:
    return {
        n for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", "").startswith(
            ("jax.example_libraries", "lamina_core.example_libraries", "typing", "collections"))
    }  # fmt: skip


def test_public_names_are_jaxs() -> None:
    assert _public(j_optimizers) <= set(dir(optimizers))
    assert _public(j_stax) <= set(dir(stax))
    wanted = {"sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam",
              "adamax", "sm3", "constant", "exponential_decay", "inverse_time_decay",
              "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
              "JoinPoint", "pack_optimizer_state", "unpack_optimizer_state", "OptimizerState",
              "Optimizer", "optimizer"}  # fmt: skip
    assert wanted <= set(dir(optimizers))
    for name in ["Dense", "Conv", "ConvTranspose", "Conv1DTranspose", "GeneralConv", "BatchNorm",
                 "Relu", "LogSoftmax", "MaxPool", "AvgPool", "SumPool", "Flatten", "Identity",
                 "FanOut", "FanInSum", "FanInConcat", "Dropout", "serial", "parallel",
                 "shape_dependent", "elementwise", "glorot", "randn", "logsoftmax"]:  # fmt: skip
        assert hasattr(stax, name) and hasattr(j_stax, name), name


def _params(jnp: Any, scalar: Any = 2.0) -> Any:
    return {"w": jnp.array([[1.0, -2.0], [0.5, 3.0]]), "b": (jnp.array([0.1, -0.2]), scalar)}


def _loss(jnp: Any) -> Callable[[Any], Any]:
    return lambda p: jnp.sum(p["w"] ** 2) + jnp.sum(jnp.sin(p["b"][0])) + p["b"][1] ** 2


OPTIMIZERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sgd", lambda o: o.sgd(0.1)),
    ("momentum", lambda o: o.momentum(0.1, 0.9)),
    ("nesterov", lambda o: o.nesterov(0.1, 0.9)),
    ("adagrad", lambda o: o.adagrad(0.1)),
    ("rmsprop", lambda o: o.rmsprop(0.1)),
    ("rmsprop_momentum", lambda o: o.rmsprop_momentum(0.1)),
    ("adam", lambda o: o.adam(0.1)),
    ("adamax", lambda o: o.adamax(0.1)),
    ("sgd exponential_decay", lambda o: o.sgd(o.exponential_decay(0.1, 10, 0.5))),
    ("adam polynomial_decay", lambda o: o.adam(o.polynomial_decay(0.1, 5, 0.01, 2.0))),
    ("adam piecewise_constant", lambda o: o.adam(o.piecewise_constant([2, 4], [0.1, 0.05, 0.01]))),
    ("sgd inverse_time_decay", lambda o: o.sgd(o.inverse_time_decay(0.1, 2, 0.5, staircase=True))),
    ("momentum inverse_time_decay", lambda o: o.momentum(o.inverse_time_decay(0.1, 2, 0.5), 0.5)),
]


def _run(api: Any, opt_module: Any, make: Callable[[Any], Any], jit: bool) -> tuple[Any, int]:
    init, update, get_params = make(opt_module)
    # sm3 reads each parameter's `.shape`: arrays only.
    state = init(_params(api.numpy, 2.0 if jit else api.numpy.float32(2.0)))
    grad = api.grad(_loss(api.numpy))

    def step(i: Any, s: Any) -> Any:
        return update(i, grad(get_params(s)), s)

    step = api.jit(step) if jit else step
    for i in range(5):
        state = step(i, state)
    return get_params(state), len(api.tree_util.tree_leaves(state))


def _host(tree: Any) -> list[Any]:
    return [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(tree)]


def _flat(tree: Any) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(x)) for x in jax.tree_util.tree_leaves(tree)])


@pytest.mark.parametrize(("name", "make"), OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_optimizers_step_as_jaxs_under_jit(name: str, make: Callable[[Any], Any]) -> None:
    ours, n_leaves = _run(lamina, optimizers, make, jit=True)
    theirs, j_n_leaves = _run(jax, j_optimizers, make, jit=True)
    assert n_leaves == j_n_leaves
    np.testing.assert_allclose(
        np.concatenate([np.ravel(x) for x in _host(ours)]),
        np.concatenate([np.ravel(x) for x in _host(theirs)]),
        rtol=1e-6,
    )


def test_sm3_steps_as_jaxs_eagerly() -> None:
    # JAX's sm3 keeps the parameter shape in its state, so it runs outside jit only.
    ours, _ = _run(lamina, optimizers, lambda o: o.sm3(0.1), jit=False)
    theirs, _ = _run(jax, j_optimizers, lambda o: o.sm3(0.1), jit=False)
    np.testing.assert_allclose(_flat(ours), _flat(theirs), rtol=1e-6)


def test_optimizer_state_packs_and_reports_mismatches_as_jax() -> None:
    for api, opt in [(lamina, optimizers), (jax, j_optimizers)]:
        init, update, get_params = opt.adam(0.1)
        state = init(_params(api.numpy))
        packed = opt.pack_optimizer_state(opt.unpack_optimizer_state(state))
        assert _host(get_params(packed)) == _host(get_params(state))
        assert type(packed) is opt.OptimizerState
    messages = []
    for api, opt in [(lamina, optimizers), (jax, j_optimizers)]:
        init, update, _ = opt.sgd(0.1)
        with pytest.raises(TypeError) as info:
            update(0, {"w": 1.0}, init(_params(api.numpy)))
        messages.append(str(info.value))
        with pytest.raises(TypeError) as info:
            opt.make_schedule([1, 2])
        messages.append(repr(info.value))
        with pytest.raises(ValueError) as value_error:
            opt.piecewise_constant([1, 2], [0.1])
        messages.append(str(value_error.value))
    assert messages[:3] == messages[3:]


def test_l2_norm_and_clip_grads_as_jax() -> None:
    ours = optimizers.clip_grads(_params(lamina.numpy), 1.0)
    theirs = j_optimizers.clip_grads(_params(jax.numpy), 1.0)
    np.testing.assert_allclose(_flat(ours), _flat(theirs), rtol=1e-6)
    assert float(optimizers.l2_norm(_params(lamina.numpy))) == pytest.approx(
        float(j_optimizers.l2_norm(_params(jax.numpy)))
    )


def _network(s: Any) -> Any:
    return s.serial(
        s.Conv(4, (3, 3), padding="SAME"),
        s.BatchNorm(),
        s.Relu,
        s.MaxPool((2, 2), strides=(2, 2)),
        s.AvgPool((2, 2), padding="SAME"),
        s.SumPool((1, 1)),
        s.Flatten,
        s.Dense(5),
        s.Gelu,
        s.FanOut(2),
        s.parallel(s.Dense(3), s.Identity),
        s.FanInConcat(),
        s.Dropout(0.7),
        s.LogSoftmax,
    )


LAYERS: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("network", _network, (2, 8, 8, 3)),
    ("conv transpose", lambda s: s.serial(s.ConvTranspose(2, (2, 2), strides=(2, 2)), s.Tanh,
                                          s.FanOut(2), s.FanInSum), (1, 4, 4, 3)),
    ("conv1d transpose", lambda s: s.Conv1DTranspose(3, (2,), padding="SAME"), (1, 5, 2)),
    ("general conv", lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (3, 3), strides=(2, 1)),
     (1, 3, 7, 7)),
    ("shape dependent", lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1])), (2, 3)),
    ("batchnorm one axis", lambda s: s.BatchNorm(axis=0, center=False), (4, 3)),
    ("pool with spec", lambda s: s.serial(s.MaxPool((2,), spec="NCW"),
                                          s.AvgPool((2,), padding="SAME", spec="NCW")), (1, 2, 5)),
    ("activations", lambda s: s.serial(s.Elu, s.LeakyRelu, s.Selu, s.Softplus, s.Sigmoid, s.Exp,
                                       s.Softmax), (2, 3)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "make", "shape"), LAYERS, ids=[n for n, _, _ in LAYERS])
def test_stax_layers_as_jaxs(name: str, make: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    outs = []
    for api, s in [(lamina, stax), (jax, j_stax)]:
        init_fun, apply_fun = make(s)
        out_shape, params = init_fun(api.random.PRNGKey(0), shape)
        x = api.numpy.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        y = apply_fun(params, x, rng=api.random.PRNGKey(1))
        outs.append((out_shape, _host(params), np.asarray(y)))
    (shape_l, params_l, y_l), (shape_j, params_j, y_j) = outs
    assert tuple(shape_l) == tuple(shape_j) == y_j.shape
    assert [np.shape(p) for p in params_l] == [np.shape(p) for p in params_j]
    np.testing.assert_allclose(
        np.concatenate([np.ravel(p) for p in params_l] or [np.zeros(0)]),
        np.concatenate([np.ravel(p) for p in params_j] or [np.zeros(0)]),
        rtol=1e-6,
    )
    np.testing.assert_allclose(y_l, y_j, rtol=2e-5, atol=1e-6)


def test_dropout_needs_a_key_as_jax() -> None:
    messages = []
    for api, s in [(lamina, stax), (jax, j_stax)]:
        _, apply_fun = s.Dropout(0.5)
        with pytest.raises(ValueError) as info:
            apply_fun((), api.numpy.ones(3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_example_libraries_are_lazy_submodules() -> None:
    assert {"example_libraries", "flatten_util"} <= set(lamina.__all__)
    import subprocess
    import sys

    code = (
        "import sys, lamina\n"
        "before = [m in sys.modules for m in ('lamina.flatten_util', 'lamina.example_libraries')]\n"
        "lamina.flatten_util, lamina.example_libraries\n"
        "after = [m in sys.modules for m in ('lamina.flatten_util', 'lamina.example_libraries')]\n"
        "print(before, after)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[False, False] [True, True]"
