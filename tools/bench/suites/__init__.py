"""Benchmark suites: every module here is imported by `tools.bench.discover`.

One module per area (`trivial`, later `make_jaxpr`, `jit`, ...); names are `<module>.<what>`.
Import Lamina and JAX inside the setup functions only.
"""
