"""``python -m maia.sandbox [--write ROOT]... [--read-only] [--no-network] -- ARGV...``."""

import sys

from maia.sandbox.launcher import main

sys.exit(main())
