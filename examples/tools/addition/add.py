"""Example custom tool for MAIA: prints the sum of its arguments (copy the folder to ./.maia/tools/)."""

import sys

try:
    total = sum(float(arg) for arg in sys.argv[1:])
except ValueError as error:
    print(f"not a number: {error}", file=sys.stderr)
    sys.exit(2)
print(int(total) if total.is_integer() else total)
