"""Lamina task runner. `nox -l` lists the sessions; `nox -t ci` is what CI runs.

Every per-package list is generated from `tools/workspace.py`, which reads
`packages/*/pyproject.toml`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from xml.etree import ElementTree

import nox

sys.path.insert(0, str(Path(__file__).parent))  # nox does not put the noxfile's folder on sys.path
from tools.workspace import IMPORT_NAMES, PACKAGES, ROOT, local_closure

nox.options.default_venv_backend = "uv|virtualenv"  # uv when installed (the bootstrap installs it)
nox.options.download_python = "never"  # the machines have only CPython 3.11: never download one
nox.options.error_on_missing_interpreters = True
nox.options.sessions = [
    "lint",
    "typecheck",
    "layers",
    "tests",
    "tests_all",
    "xla",
    "distributed",
    "acceptance",
    "docs",
    "size",
    "demo",
    "fuzz",
]

PYPROJECT = nox.project.load_toml("pyproject.toml")
PY = "3.11"
JAX_CLOSURE = {d for d in PACKAGES if "lamina-runtime" in local_closure(d)} | {"lamina-runtime"}
DEFAULT_MARKERS = "not gpu and not slow"
UMBRELLA = "lamina"
ORACLE_CACHE_DIR = str(ROOT / ".nox" / "oracle-cache")
"""JAX's persistent compilation cache for the oracle's side of the tests (see conftest.py):
sessions that compare against the same JAX programs compile each once."""
ACCEPTANCE_DIR = Path(
    os.environ.get("LAMINA_ACCEPTANCE_DIR", ROOT.parent / "shared" / "acceptance")
)
ACCEPTANCE_RATCHET = ROOT / "ci" / "acceptance-must-pass.txt"


def editable(dists: list[str]) -> list[str]:
    return [arg for d in dists for arg in ("-e", f"packages/{d}")]


def groups(*names: str) -> list[str]:
    return [req for name in names for req in nox.project.dependency_groups(PYPROJECT, name)]


PARALLEL = ("-n", "auto", "--durations=15")
"""pytest-xdist: one worker per core for the long sessions (CI has two cores; each worker
imports JAX, about 0.5 GB). Compilations share the cache, which is safe across processes.
The slowest tests are listed at the end, to keep an eye on the default run's length."""


def install_all(session: nox.Session, *group_names: str) -> None:
    session.install(*editable(PACKAGES), *groups(*group_names))
    # Compilations of tests, docs and the acceptance suite go to a cache inside .nox/, never
    # the user's own cache.
    session.env["LAMINA_CACHE_DIR"] = str(ROOT / ".nox" / "lamina-cache")
    session.env["LAMINA_ORACLE_CACHE_DIR"] = ORACLE_CACHE_DIR


@nox.session(python=PY, tags=["ci"])
@nox.parametrize("dist", PACKAGES, ids=PACKAGES)
def tests(session: nox.Session, dist: str) -> None:
    """Run one package's tests with only that package and its sibling closure installed.

    Oracle tests (marked `oracle`, they need real JAX) run only where JAX is in the closure;
    `tests_all` runs them for the packages below. The umbrella's closure is every package, so
    its session is the one run of its tests (in parallel, with the oracle group: JAX is
    installed there anyway, the group adds what JAX's side of a comparison draws with).
    """
    closure = local_closure(dist)
    top = dist == UMBRELLA
    many = dist in MANY_TESTS
    session.install(*editable(closure), *groups("test", *(("oracle",) if top else ())))
    session.env["LAMINA_CACHE_DIR"] = str(ROOT / ".nox" / "lamina-cache")
    if top:
        session.env["LAMINA_ORACLE_CACHE_DIR"] = ORACLE_CACHE_DIR
    markers = DEFAULT_MARKERS if dist in JAX_CLOSURE else f"{DEFAULT_MARKERS} and not oracle"
    session.run(
        "pytest",
        f"packages/{dist}/tests",
        "-m",
        markers,
        "-p",
        "no:cacheprovider",
        *(PARALLEL if top or many else ()),
        *session.posargs,
    )


MANY_TESTS = {"lamina-core", "lamina-mlir", "lamina-runtime"}
"""Packages whose tests alone take minutes: their sessions run them in parallel too (the
smaller ones would spend longer starting workers than they save)."""


@nox.session(python=PY, tags=["ci"])
def tests_all(session: nox.Session) -> None:
    """Install every package (and JAX, the oracle); run the tests of every package below the
    umbrella (whose own session runs its tests with everything installed) and tools/tests."""
    install_all(session, "test", "oracle")
    session.run(
        "pytest",
        *(f"packages/{d}/tests" for d in PACKAGES if d != UMBRELLA),
        "tools/tests",
        "-m",
        DEFAULT_MARKERS,
        *PARALLEL,
        *session.posargs,
    )


@nox.session(python=PY, tags=["ci"])
def xla(session: nox.Session) -> None:
    """lamina-core's oracle corpus with Lamina's numbers computed on XLA (jitted by the runtime),
    without the tests marked `slow` (as every CI session). Only the tests that take the
    `oracle` fixture run (see lamina-core's conftest): the others are `tests_all`'s."""
    install_all(session, "test", "oracle")
    session.run(
        "pytest", "packages/lamina-core/tests", "-m", f"oracle and {DEFAULT_MARKERS}",
        "--lamina-execute=xla-jit", "-q", "-p", "no:cacheprovider", *PARALLEL, *session.posargs,
    )  # fmt: skip


@nox.session(python=PY, tags=["ci"])
def distributed(session: nox.Session) -> None:
    """Many processes: 2 worker processes of 4 CPU devices each on localhost run sharded
    programs over all 8 (`lamina.distributed`); about 20 s. Marked `slow`, so here only."""
    install_all(session, "test")
    session.run(
        "pytest",
        "packages/lamina/tests/test_distributed.py",
        "-p",
        "no:cacheprovider",
        *session.posargs,
    )


@nox.session(python=PY)
def slow(session: nox.Session) -> None:
    """The tests marked `slow`, kept out of the default run."""
    install_all(session, "test", "oracle")
    session.run(
        "pytest",
        *(f"packages/{d}/tests" for d in PACKAGES),
        "tools/tests",
        "-m",
        "slow and not gpu",
        *session.posargs,
        success_codes=[0, 5],
    )


@nox.session(python=PY, tags=["ci"])
def typecheck(session: nox.Session) -> None:
    """mypy --strict over every package's src, each package's tests, tools/, docs and noxfile.py."""
    install_all(session, "typecheck", "test", "oracle")
    for name in IMPORT_NAMES:
        session.run("mypy", "-p", name)
    for dist in PACKAGES:  # one run per tests/ folder: test file names repeat across packages
        session.run("mypy", f"packages/{dist}/tests")
    session.run("mypy", "tools", "noxfile.py", "docs/conftest.py")


@nox.session(python=PY, tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    session.install(*groups("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PY, tags=["ci"])
def layers(session: nox.Session) -> None:
    """import-linter: the layer order, and no JAX machinery outside the named exceptions."""
    install_all(session, "layers")
    session.run("lint-imports", env={"PYTHONPATH": str(ROOT)})


@nox.session(python=PY, tags=["ci"])
def acceptance(session: nox.Session) -> None:
    """The seed acceptance suite against Lamina: the ratchet must pass, the rest is informational.

    Runs the whole suite once and fails if a test id listed in ci/acceptance-must-pass.txt did
    not pass (an empty list passes); the other tests' outcomes are only reported. With
    arguments after `--`, runs just what they select and checks no ratchet.
    """
    if not (ACCEPTANCE_DIR / "conftest.py").exists():
        session.skip(f"no acceptance suite at {ACCEPTANCE_DIR} (set LAMINA_ACCEPTANCE_DIR)")
    install_all(session, "test", "oracle")
    ratchet = [
        line.strip()
        for line in ACCEPTANCE_RATCHET.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    # create_tmp may answer a relative path, and pytest runs in the suite's directory
    report = Path(session.create_tmp()).resolve() / "acceptance.xml"
    with session.chdir(ACCEPTANCE_DIR):
        session.run(
            "python", "-m", "pytest", "-q", "--tb=short", "-p", "no:randomly",
            "--continue-on-collection-errors",  # one unimportable seed must not hide the rest
            f"--junitxml={report}", "-o", "junit_family=xunit1",
            *session.posargs,
            env={"ACCEPT_IMPL": "lamina"}, success_codes=[0, 1, 2, 5],
        )  # fmt: skip
    if session.posargs:
        return
    passed = _passed_test_ids(report)
    missing = [test for test in ratchet if test not in passed]
    if missing:
        session.error(
            f"acceptance ratchet: {len(missing)} of {len(ratchet)} did not pass: {missing}"
        )
    session.log(f"acceptance ratchet: all {len(ratchet)} listed tests passed")


def _passed_test_ids(junit_xml: Path) -> set[str]:
    """The pytest ids (`file::Class::name[param]`) of the tests a JUnit report (xunit1) says
    passed: no failure, error or skip inside their `testcase`."""
    passed = set()
    for case in ElementTree.parse(junit_xml).iter("testcase"):
        if any(child.tag in ("failure", "error", "skipped") for child in case):
            continue
        path = case.get("file", "")
        module = path.removesuffix(".py").replace("/", ".")
        classes = case.get("classname", "").removeprefix(module).strip(".")
        parts = [path, *(classes.split(".") if classes else ()), case.get("name", "")]
        passed.add("::".join(parts))
    return passed


@nox.session(python=PY, tags=["ci"])
def docs(session: nox.Session) -> None:
    """Run every ```python block of docs/ and the READMEs, then build the site strictly.

    Printed output is checked against `#>` lines (docs/conftest.py); the site goes to .nox/site.
    """
    install_all(session, "docs", "oracle")
    readmes = ["README.md", *(f"packages/{d}/README.md" for d in PACKAGES)]
    session.run(
        "pytest", "docs", *readmes, "-p", "no:cacheprovider", "-o", "addopts=", *session.posargs
    )
    site = str(ROOT / ".nox" / "site")
    # NO_MKDOCS_2_WARNING: mkdocs-material prints a banner about MkDocs 2 on every build.
    session.run("mkdocs", "build", "--strict", "--site-dir", site, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(venv_backend="none", tags=["ci"])
def size(session: nox.Session) -> None:
    """Module-size report: the largest modules; fails above the hard limit."""
    session.run(sys.executable, "-m", "tools.sz", external=True)


@nox.session(python=PY, tags=["ci"])
def demo(session: nox.Session) -> None:
    """The showcase: what Lamina can do today."""
    install_all(session, "oracle")
    session.run("python", "-m", "lamina", "demo", *session.posargs)


@nox.session(python=PY, default=False, tags=["bench"])
def bench(session: nox.Session) -> None:
    """Benchmarks, Lamina vs JAX in one process: `nox -s bench -- NAME...` (default: all)."""
    install_all(session, "oracle")
    session.run("python", "-m", "tools.bench", *session.posargs, env={"PYTHONPATH": str(ROOT)})


@nox.session(python=PY, default=False)
def api_coverage(session: nox.Session) -> None:
    """Which of JAX 0.10.2's public names Lamina lacks, per module (`docs/api-coverage.md`)."""
    install_all(session, "oracle")
    session.run("python", "-m", "tools.api_coverage", "--missing", *session.posargs,
                env={"PYTHONPATH": str(ROOT)})  # fmt: skip


@nox.session(python=PY, default=False)
def downstream(session: nox.Session) -> None:
    """optax's and chex's own test suites, on JAX and on Lamina (`pytest -p lamina.as_jax`):
    what passes on each and the failures grouped by cause (issue 35). Not in the default run:
    the two suites take tens of minutes per side on 2 cores. Options after `--`, e.g.
    `nox -s downstream -- --suite chex --entry module` (`python -m tools.downstream -h`)."""
    install_all(session, "test")
    session.install("pip")  # the tool downloads the suites' source distributions with pip
    session.run("python", "-m", "tools.downstream", "--install", *session.posargs,
                env={"PYTHONPATH": str(ROOT)})  # fmt: skip


@nox.session(python=PY, tags=["ci"])
def fuzz(session: nox.Session) -> None:
    """The fuzz table's fast subset (issue 21): malformed calls, Lamina against JAX.

    Each call runs in a child process, so an abort or a hang is counted, not fatal; fails on
    any abort, hang or silent wrong result. `fuzz_slow` runs the whole table.
    """
    install_all(session, "oracle")
    session.run("python", "-m", "tools.fuzz", "--fast", *session.posargs,
                env={"PYTHONPATH": str(ROOT)})  # fmt: skip


@nox.session(python=PY, default=False)
def fuzz_slow(session: nox.Session) -> None:
    """The whole fuzz table (about 2,800 cases, 7 minutes on 2 cores); not in the default run."""
    install_all(session, "oracle")
    session.run("python", "-m", "tools.fuzz", *session.posargs, env={"PYTHONPATH": str(ROOT)})
