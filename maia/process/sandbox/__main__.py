"""``python -m maia.process.sandbox [--write ROOT]... [--read-only] [--no-network] -- ARGV...``."""

import sys

from maia.process.sandbox.launcher import main

sys.exit(main())
