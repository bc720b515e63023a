"""The benchmark harness, on fake benchmarks and a fake clock: no real timing, no JAX."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

import tools.bench.runner
from tools.bench import (
    REGISTRY,
    Benchmark,
    Elapsed,
    Registry,
    Side,
    Timed,
    benchmark,
    discover,
    measure,
    run_case,
)
from tools.bench.cli import main
from tools.bench.registry import ParamValue
from tools.bench.report import format_time
from tools.workspace import ROOT


class FakeClock:
    """A clock that moves only when a fake benchmark call says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_pair(
    clock: FakeClock, costs: dict[Side, list[float]], log: list[str]
) -> Callable[..., Timed]:
    """A setup whose calls log their side and advance `clock` by the next of that side's costs."""

    def setup(side: Side, **params: object) -> Timed:
        log.append(f"setup {side.value}")
        pending = iter(costs[side])

        def call() -> None:
            log.append(side.value)
            clock.now += next(pending)

        return call

    return setup


@pytest.fixture(autouse=True)
def collections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """`run_case` collects garbage before each measurement; in a test process that has run
    thousands of tests first, a full collection takes about a second. These benchmarks are
    fakes on a fake clock, so the collections are counted here instead of run."""
    counted: list[int] = []

    def collect() -> int:
        counted.append(1)
        return 0

    monkeypatch.setattr(tools.bench.runner, "gc", SimpleNamespace(collect=collect))
    return counted


def fake_registry(
    setup: Callable[..., Timed],
    params: dict[str, list[ParamValue]] | None = None,
    unit: str | None = None,
    unit_count: str | None = None,
) -> Registry:
    registry = Registry()
    benchmark("fake.pair", params=params, unit=unit, unit_count=unit_count, registry=registry)(
        setup
    )
    return registry


def test_measurements_interleave_lamina_and_jax(collections: list[int]) -> None:
    clock, log = FakeClock(), list[str]()
    # Each call lasts 25 ms, above the 20 ms minimum, so one measurement is one call.
    setup = fake_pair(clock, {Side.LAMINA: [0.025] * 4, Side.JAX: [0.025] * 4}, log)
    (case,) = fake_registry(setup).select([])
    run_case(case, repeats=3, clock=clock)
    assert len(collections) == 6  # one before each measurement
    assert log == [
        "setup lamina", "lamina",  # setup and its warm-up call, untimed
        "setup jax", "jax",
        "lamina", "jax", "lamina", "jax", "lamina", "jax",
    ]  # fmt: skip


def test_median_ratio_and_per_unit_on_a_fake_clock() -> None:
    clock, log = FakeClock(), list[str]()
    costs = {Side.LAMINA: [0.0, 0.030, 0.010, 0.020], Side.JAX: [0.0, 0.040, 0.100, 0.040]}
    setup = fake_pair(clock, costs, log)
    registry = fake_registry(setup, params={"n": [10]}, unit="eqn", unit_count="n")
    (case,) = registry.select(["fake.pair"])
    result = run_case(case, repeats=3, clock=clock, min_time=0.005)
    assert result.lamina.times == pytest.approx((0.030, 0.010, 0.020))
    assert result.lamina.median == pytest.approx(0.020)
    assert result.jax.median == pytest.approx(0.040)
    assert result.ratio == pytest.approx(0.5)
    assert result.per_unit(Side.LAMINA) == pytest.approx(0.002)
    assert result.per_unit(Side.JAX) == pytest.approx(0.004)


def test_measure_raises_the_loop_count_until_a_measurement_lasts_min_time() -> None:
    clock = FakeClock()

    def call() -> None:
        clock.now += 0.001

    measured = measure(call, min_time=0.020, clock=clock)
    assert measured.loops >= 20
    assert measured.per_call == pytest.approx(0.001)


def test_a_callable_that_times_itself_reports_its_own_seconds() -> None:
    clock = FakeClock()

    def call() -> Elapsed:
        clock.now += 0.5  # e.g. starting a process and importing: not what is measured
        return Elapsed(0.125)

    measured = measure(call, min_time=0.020, clock=clock)
    assert measured.per_call == pytest.approx(0.125)


def test_a_failing_side_is_reported_and_the_other_side_still_runs() -> None:
    clock = FakeClock()

    def setup(side: Side) -> Timed:
        if side is Side.LAMINA:
            raise NotImplementedError("make_jaxpr")

        def call() -> None:
            clock.now += 0.025

        return call

    (case,) = fake_registry(setup).select([])
    result = run_case(case, repeats=2, clock=clock)
    assert result.lamina.error == "setup: NotImplementedError: make_jaxpr"
    assert result.lamina.median is None
    assert result.jax.median == pytest.approx(0.025)
    assert result.ratio is None


def test_a_lamina_only_benchmark_measures_lamina_and_reports_no_jax(tmp_path: Path) -> None:
    clock, log = FakeClock(), list[str]()
    setup = fake_pair(clock, {Side.LAMINA: [0.025] * 3, Side.JAX: [0.050] * 3}, log)
    registry = Registry()
    benchmark("fake.own", params={"n": [5]}, unit="eqn", unit_count="n", lamina_only=True,
              registry=registry)(setup)  # fmt: skip
    out, path = io.StringIO(), tmp_path / "run.json"
    status = main(["--repeats", "2", "--json", str(path)], registry=registry, clock=clock, out=out)
    assert status == 0  # no JAX side is not a failed side
    assert log == ["setup lamina", "lamina", "lamina", "lamina"]
    (result,) = json.loads(path.read_text())["results"]
    assert result["jax"] is None
    assert result["ratio"] is None
    assert result["lamina"]["per_unit_s"] == pytest.approx(0.005)
    table = out.getvalue()
    assert "fake.own[n=5]  ll " in table
    assert "5.00 ms/eqn" in table
    listing = io.StringIO()
    main(["--list"], registry=registry, out=listing)
    assert "(Lamina only)" in listing.getvalue()


def test_parameters_make_one_case_each_with_ids() -> None:
    registry = fake_registry(lambda side, n, m: lambda: None, params={"n": [1, 2], "m": ["a"]})
    assert [case.id for case in registry.select([])] == ["fake.pair[n=1,m=a]", "fake.pair[n=2,m=a]"]
    assert [case.id for case in registry.select(["fake.pair[n=2,m=a]"])] == ["fake.pair[n=2,m=a]"]
    assert len(registry.select(["fake"])) == 2  # a dotted prefix selects the group
    assert len(registry.select(["fake.*"])) == 2
    with pytest.raises(KeyError, match="no benchmark matches"):
        registry.select(["nothing"])


def test_registering_a_name_twice_is_an_error() -> None:
    registry = fake_registry(lambda side: lambda: None)
    with pytest.raises(ValueError, match="registered twice"):
        benchmark("fake.pair", registry=registry)(lambda side: lambda: None)


def test_unit_count_must_name_a_parameter() -> None:
    with pytest.raises(ValueError, match="not a parameter"):
        Benchmark(name="fake.x", setup=lambda side: lambda: None, params={}, unit="eqn",
                  unit_count="n")  # fmt: skip


def test_json_output_follows_the_schema(tmp_path: Path) -> None:
    clock, log = FakeClock(), list[str]()
    setup = fake_pair(clock, {Side.LAMINA: [0.025] * 3, Side.JAX: [0.050] * 3}, log)
    registry = fake_registry(setup, params={"n": [4]}, unit="eqn", unit_count="n")
    out, path = io.StringIO(), tmp_path / "run.json"
    status = main(["--repeats", "2", "--json", str(path)], registry=registry, clock=clock, out=out)
    assert status == 0
    document = json.loads(path.read_text())
    assert document["schema"] == 1
    assert set(document) == {
        "schema", "created", "commit", "python", "platform", "versions", "settings", "results"
    }  # fmt: skip
    assert document["settings"] == {"repeats": 2, "min_time_s": 0.02}
    (result,) = document["results"]
    assert result["id"] == "fake.pair[n=4]"
    assert result["params"] == {"n": 4}
    assert (result["unit"], result["unit_count"]) == ("eqn", 4)
    assert result["ratio"] == pytest.approx(0.5)
    assert result["lamina"] == {
        "median_s": pytest.approx(0.025),
        "per_unit_s": pytest.approx(0.025 / 4),
        "times_s": [pytest.approx(0.025)] * 2,
        "loops": 1,
        "error": None,
    }
    table = out.getvalue()
    assert "fake.pair[n=4]  ljlj" in table
    assert "25.0 ms" in table
    assert "0.50x" in table


def test_format_time_picks_a_unit_and_three_figures() -> None:
    assert [format_time(t) for t in (2.5, 0.0123, 3.16e-6, 4.2e-8, None)] == [
        "2.50 s", "12.3 ms", "3.16 µs", "42.0 ns", "-"
    ]  # fmt: skip


def test_discovery_finds_the_trivial_suite() -> None:
    assert discover() is REGISTRY
    assert "trivial.tree_flatten" in REGISTRY


def test_cli_list_runs_nothing_and_imports_no_jax() -> None:
    script = (
        "import sys; from tools.bench.cli import main; code = main(['--list']); "
        "assert 'jax' not in sys.modules and 'lamina' not in sys.modules, 'imported at --list'; "
        "raise SystemExit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "trivial.tree_flatten" in done.stdout
    assert "leaves=10" in done.stdout


def test_a_multi_device_benchmark_asks_xla_for_its_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = Registry()
    benchmark("fake.sharded", registry=registry, devices=8)(lambda side: lambda: None)
    benchmark("fake.single", registry=registry)(lambda side: lambda: None)
    flag = "--xla_force_host_platform_device_count"

    def run(name: str) -> str:
        args = [name, "--repeats", "1", "--min-time", "0", "--json", str(tmp_path / "r.json")]
        assert main(args, registry=registry, out=io.StringIO()) == 0
        return os.environ["XLA_FLAGS"]

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    assert run("fake.single") == "--xla_cpu_multi_thread_eigen=false"
    assert run("fake.sharded") == f"--xla_cpu_multi_thread_eigen=false {flag}=8"
    monkeypatch.setenv("XLA_FLAGS", f"{flag}=4")  # the caller's flag wins
    assert run("fake.sharded") == f"{flag}=4"
