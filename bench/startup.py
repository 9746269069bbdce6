"""Start-up time: ``maia --help`` and ``maia models --help`` vs a bare ten-line Click group's ``--help``.

Run with the virtual environment's Python: ``.venv/bin/python bench/startup.py [runs]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import report, time_command

BARE_GROUP = '''import click


@click.group()
def cli() -> None:
    """A bare Click group."""


if __name__ == "__main__":
    cli()
'''


def main() -> None:
    """Measure and print the medians and ratios."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_GROUP)
        reference = time_command([python, str(bare), "--help"], runs)
        maia = [python, "-c", "from maia.commands import main; main()"]
        rows = [
            ("maia --help", time_command([*maia, "--help"], runs), reference, 2.0),
            ("maia models --help", time_command([*maia, "models", "--help"], runs), reference, 2.0),
        ]
    report(f"start-up, median of {runs} runs (reference: bare Click group --help)", rows)


if __name__ == "__main__":
    main()
