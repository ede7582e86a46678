"""``python -m bspgraph.cli``: the ``bspgraph`` command."""

import sys

from . import main

sys.exit(main())
