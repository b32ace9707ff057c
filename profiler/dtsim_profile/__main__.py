"""``python3 -m dtsim_profile``: see cli.py."""

import os
import sys

# One BLAS thread unless the caller says otherwise; must be set before torch is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .cli import main  # noqa: E402

sys.exit(main())
