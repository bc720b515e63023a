"""`python -m tools.bench`: run benchmarks, Lamina against JAX."""

from tools.bench.cli import main

raise SystemExit(main())
