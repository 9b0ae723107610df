"""`python -m reconcile` is the same program as the `kube-rehash` console script."""

from reconcile.cli.commands import main

raise SystemExit(main())
