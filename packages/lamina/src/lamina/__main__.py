"""`python -m lamina`: the command line."""

from lamina._cli import main

raise SystemExit(main())
