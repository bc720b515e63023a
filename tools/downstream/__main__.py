"""`python -m tools.downstream`: downstream libraries' test suites on JAX and on Lamina."""

from tools.downstream.cli import main

raise SystemExit(main())
