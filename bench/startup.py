"""Start-up time: ``maia --help`` and ``maia models --help`` vs a bare ten-line Click group's ``--help``.

Also the French help (``LANG=fr_FR.UTF-8``, the compiled catalog) against the English one, side by side.

Run with the virtual environment's Python: ``.venv/bin/python bench/startup.py [runs]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import interleaved, report, rounds, time_command

BARE_GROUP = '''import click


@click.group()
def cli() -> None:
    """A bare Click group."""


if __name__ == "__main__":
    cli()
'''


def main() -> None:
    """Measure and print the medians and ratios."""
    runs = rounds(sys.argv[1:], 15, __doc__)
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_GROUP)
        reference = time_command([python, str(bare), "--help"], runs)
        maia = [python, "-c", "from maia.commands import main; main()"]
        rows = [
            ("maia --help", time_command([*maia, "--help"], runs, env=_english()), reference, 2.0),
            ("maia models --help", time_command([*maia, "models", "--help"], runs, env=_english()), reference, 2.0),
        ]
    report(f"start-up, median of {runs} runs (reference: bare Click group --help)", rows)
    help_in = {
        "english": _in(_english(), [*maia, "--help"]),
        "french": _in({**_english(), "LANG": "fr_FR.UTF-8"}, [*maia, "--help"]),
    }
    medians = interleaved(help_in, runs)
    english, french = medians["english"], medians["french"]
    assert english is not None and french is not None
    report(
        f"language, median of {runs} interleaved runs (reference: the same help in English)",
        [("LANG=fr_FR.UTF-8 maia --help (compiled catalog)", french, english, 1.2)],
    )


def _english() -> dict[str, str]:
    """The environment without any locale variable: MAIA speaks English."""
    drop = ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "LANG": "C.UTF-8"}


def _in(env: dict[str, str], argv: list[str]) -> Callable[[], object]:
    import subprocess

    return lambda: subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


if __name__ == "__main__":
    main()
