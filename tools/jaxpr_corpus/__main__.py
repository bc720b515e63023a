"""`python -m tools.jaxpr_corpus`: the reader over the project's jaxpr test corpora."""

from tools.jaxpr_corpus._cli import main

raise SystemExit(main())
