"""``python3 -m dtsim_profile``: see cli.py; ``python3 -m dtsim_profile import-kineto``: see
kineto_cli.py (no torch needed)."""

import os
import sys

if sys.argv[1:2] == ["import-kineto"]:
    from .kineto_cli import main as import_kineto

    sys.exit(import_kineto(sys.argv[2:]))

# One BLAS thread unless the caller says otherwise; must be set before torch is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .cli import main  # noqa: E402

sys.exit(main())
