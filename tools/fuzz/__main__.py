"""`python -m tools.fuzz`: run the fuzz table, Lamina against JAX."""

from tools.fuzz.cli import main

raise SystemExit(main())
