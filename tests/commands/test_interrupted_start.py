"""A Ctrl+C pressed while ``maia`` is still loading its modules ends it quietly with status 130 (as a shell
reports a program ended by SIGINT), never with a Python traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# The Ctrl+C lands while a given module is being imported: a finder placed first on the import path raises
# KeyboardInterrupt there, as Python's own SIGINT handler would at that moment. Then the installed script's
# entry point runs, as `maia ARGS` does.
PROBE = textwrap.dedent(
    """
    import sys

    MODULE = sys.argv[1]

    class Interrupt:
        def find_spec(self, name, path=None, target=None):
            if name == MODULE:
                raise KeyboardInterrupt
            return None

    sys.meta_path.insert(0, Interrupt())
    sys.argv[0:2] = ["maia"]  # the module's name is the probe's, the rest is maia's
    from maia.__main__ import run
    run()
    """
)


@pytest.mark.parametrize("module", ["click", "maia.commands", "maia.core.errors"])
def test_a_ctrl_c_while_maia_loads_exits_130_without_a_traceback(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_installed_script_starts_through_the_small_entry_point() -> None:
    """The ``maia`` script's entry point is :func:`maia.__main__.run`, which holds the guard above."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "maia"]
    assert script.value == "maia.__main__:run"
